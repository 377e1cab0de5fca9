// TaskGrid PGAS layer: global memory that every rank reads and writes
// one-sidedly, groups of ranks, and collectives on them (C++ API; the C API is
// taskgrid/pgas.h).
//
//   taskgrid::pgas::init(&argc, &argv);                  // collective
//   auto halo = taskgrid::pgas::alloc(2 * plane_bytes);  // symmetric: same offset everywhere
//   double* mine = taskgrid::pgas::local_as<double>(halo);
//   taskgrid::pgas::put_nb(right, halo, 0, my_edge, plane_bytes);  // into the neighbour's memory
//   taskgrid::pgas::fence();                             // my puts are complete at their targets
//   taskgrid::pgas::barrier();                           // ... and everyone's
//   taskgrid::pgas::free(halo);                          // collective
//   taskgrid::pgas::finalize();
//
// Every rank owns one global segment (TASKGRID_PGAS_SEGMENT bytes, default 64 MiB;
// units k, M, G accepted). Allocations live in it:
//   symmetric  (alloc)            the same size at the same offset on every rank: a
//                                 remote address is that rank's base plus the offset;
//   asymmetric (alloc_asymmetric) each rank its own size (zero allowed); a 16-byte
//                                 symmetric descriptor says where, fetched once per
//                                 remote rank and cached for the allocation's lifetime.
//
// Ranks on one node map each other's segments: a put or get between them is a
// copy, complete on return. Other ranks go through MPI RMA (TASKGRID_PGAS_SHM=0
// forces that path on one node too).
//
// Ranks are ranks of MPI_COMM_WORLD for one-sided operations, group ranks for
// collectives. Misuse (out of bounds, a freed or unknown allocation, a bad rank)
// throws taskgrid::Error naming the call, the rank and the range. Calls that are
// collective are checked: every member must make the same call with the same
// arguments; a mismatch, or a member that does not join within
// TASKGRID_PGAS_TIMEOUT seconds (default 120), ends the job on every rank with
// "error: taskgrid: rank R: pgas::..." naming the ranks and calls, never a hang.
//
// With tasks (spmd mode): call init after taskgrid::start and finalize before
// taskgrid::finish (or init first: the runtime then adopts its MPI). Tasks may
// call the one-sided operations from any thread; the runtime completes a task's
// outstanding non-blocking operations at their targets (a fence) before the
// task's outputs are released, so a task that depends on it sees its puts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::pgas {

// ---------------------------------------------------------- lifecycle ----

// Collective over MPI_COMM_WORLD. Initialises MPI (MPI_THREAD_MULTIPLE) when
// nobody has; otherwise uses it (taskgrid::start before or after is fine).
// `segment_bytes` 0: TASKGRID_PGAS_SEGMENT or 64 MiB; the variable, when set,
// wins over the argument.
void init(int* argc, char*** argv, size_t segment_bytes = 0);
// For a program that initialises MPI itself and then uses this layer: call it
// before MPI_Init/MPI_Init_thread. Open MPI must be told before it starts which
// one-sided components to use (its default crashes in this layer's atomics);
// init() refuses an Open MPI that was not. Does nothing on MPICH.
void prepare_mpi_init();
// Collective. Completes every outstanding operation, frees the segment and
// every group; finalises MPI if init() initialised it and the runtime does not
// still use it.
void finalize();
bool is_initialized();
// Ends the whole job from any rank: prints "error: taskgrid: rank R: <message>"
// on stderr, gives the launcher a moment to forward it, then MPI_Abort(1).
// For a program's catch-all: `catch (const std::exception& e) { abort_job(e.what()); }`.
[[noreturn]] void abort_job(const std::string& message);
int rank();       // in MPI_COMM_WORLD
int num_ranks();  // of MPI_COMM_WORLD
size_t segment_size();

// ------------------------------------------------------------- memory ----

// A global allocation, the same value on every rank (it may be passed in task
// arguments). The default value is "no allocation".
struct Memory {
  uint32_t slot = 0;
  uint32_t generation = 0;
  explicit operator bool() const { return generation != 0; }
  friend bool operator==(Memory, Memory) = default;
};

// Collective: `bytes` on every rank at one offset (64-byte aligned).
Memory alloc(size_t bytes);
// Collective: `local_bytes` on this rank (each rank its own; 0 allowed).
Memory alloc_asymmetric(size_t local_bytes);
// Collective: every rank frees the same allocation. Wait for (fence) and
// synchronise (barrier) operations on it first.
void free(Memory memory);
// This rank's part of `memory`.
void* local(Memory memory);
template <typename T>
T* local_as(Memory memory) {
  return static_cast<T*>(local(memory));
}
// Bytes of `memory` on `rank` (an asymmetric allocation's remote size is
// fetched once, then cached).
size_t size(Memory memory, int rank);

// ---------------------------------------------------------- one-sided ----

// Blocking: on return the data is at the target (put) or here (get).
void put(int rank, Memory dst, size_t dst_offset, const void* src, size_t bytes);
void get(void* dst, int rank, Memory src, size_t src_offset, size_t bytes);

// A non-blocking operation in flight. fence() completes it, or wait(op).
class Operation {
 public:
  Operation() = default;
  bool pending() const { return target_ >= 0; }

 private:
  friend struct OperationAccess;
  int target_ = -1;  // completing it flushes this rank's operations to the target
};
// Non-blocking: `src` (put) may be reused, `dst` (get) read, only after fence()
// or wait(). Any size, over 2 GiB included.
[[nodiscard]] Operation put_nb(int rank, Memory dst, size_t dst_offset, const void* src,
                               size_t bytes);
[[nodiscard]] Operation get_nb(void* dst, int rank, Memory src, size_t src_offset, size_t bytes);
// Completes one operation (a put: at its target; and with it every other
// operation of this process to that rank). Idempotent.
void wait(Operation& operation);
// Completes every operation this process has issued, at its target.
void fence();

// Strided (vector) transfers: `blocks` blocks of `block_bytes`, `stride` bytes
// apart on each side (halo columns, sub-matrices). Blocking.
void put_strided(int rank, Memory dst, size_t dst_offset, size_t dst_stride, const void* src,
                 size_t src_stride, size_t block_bytes, size_t blocks);
void get_strided(void* dst, size_t dst_stride, int rank, Memory src, size_t src_offset,
                 size_t src_stride, size_t block_bytes, size_t blocks);

// Atomics on 64-bit words (offset a multiple of 8), complete on return. Do not
// mix them with put/get on the same word without a fence between.
int64_t fetch_add(int rank, Memory memory, size_t offset, int64_t value);
// Returns the old value; the word becomes `desired` only if it was `expected`.
int64_t compare_swap(int rank, Memory memory, size_t offset, int64_t expected, int64_t desired);
int64_t atomic_load(int rank, Memory memory, size_t offset);
void atomic_store(int rank, Memory memory, size_t offset, int64_t value);

// A lock on `rank`'s memory (fair, first come first served, across ranks and
// threads; not re-entrant). unlock() first completes this process's
// operations to that rank, so the next holder sees them.
void lock(int rank);
void unlock(int rank);

// ------------------------------------------------------------- groups ----

class Group {
 public:
  Group() = default;
  explicit operator bool() const { return id_ != 0; }
  int size() const;
  // This rank's rank in the group, -1 if it is not a member.
  int rank() const;
  // The MPI_COMM_WORLD rank of group rank `group_rank`.
  int world_rank(int group_rank) const;
  uint32_t id() const { return id_; }
  friend bool operator==(Group, Group) = default;

 private:
  friend struct GroupAccess;
  uint32_t id_ = 0;
};

// Every rank.
Group world();
// Collective over the listed world ranks (only they call it; every one with
// the same list). The group's ranks follow the list's order.
Group create_group(std::span<const int> world_ranks);
// Collective over `parent`: members with the same colour form a group,
// ordered by (key, parent rank). A negative colour joins none: returns Group{}.
Group split(const Group& parent, int colour, int key = 0);
// Collective over the union of `a` and `b` (a rank in either calls it): the
// ranks of `a` in order, then those of `b` not in `a`.
Group merge(const Group& a, const Group& b);
// Collective over the group. world() cannot be freed.
void free_group(Group& group);

// Collective: fence(), then every member waits for the others.
void barrier(const Group& group = world());

// -------------------------------------------------------- collectives ----

enum class ReduceOp : uint8_t { sum, prod, min, max };
enum class DataType : uint8_t { int32, int64, uint32, uint64, float32, float64 };

template <typename T>
constexpr DataType data_type_of() {
  if constexpr (std::is_same_v<T, int32_t>)
    return DataType::int32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DataType::int64;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return DataType::uint32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return DataType::uint64;
  else if constexpr (std::is_same_v<T, float>)
    return DataType::float32;
  else if constexpr (std::is_same_v<T, double>)
    return DataType::float64;
  else
    static_assert(!sizeof(T), "pgas collectives take int32/int64/uint32/uint64/float/double");
}

// Host memory, through MPI; `root` is a group rank. Any count.
void broadcast(void* data, size_t count, DataType type, int root, const Group& group = world());
// `send` == `recv` reduces in place. `recv` is written on `root` only.
void reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op, int root,
            const Group& group = world());
void allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
               const Group& group = world());

template <typename T>
void broadcast(T* data, size_t count, int root, const Group& group = world()) {
  broadcast(static_cast<void*>(data), count, data_type_of<T>(), root, group);
}
template <typename T>
void reduce(const T* send, T* recv, size_t count, ReduceOp op, int root,
            const Group& group = world()) {
  reduce(static_cast<const void*>(send), static_cast<void*>(recv), count, data_type_of<T>(), op,
         root, group);
}
template <typename T>
void allreduce(const T* send, T* recv, size_t count, ReduceOp op, const Group& group = world()) {
  allreduce(static_cast<const void*>(send), static_cast<void*>(recv), count, data_type_of<T>(), op,
            group);
}

// ---------------------------------------------------- device memory ----
//
// Memory on this rank's device, through the device layer's backend
// (TASKGRID_DEVICE: cuda, emulated, auto or none; TASKGRID_EMULATED_DEVICES;
// TASKGRID_DEVICE_MEMORY). The backend is opened on the first device call;
// a rank uses device (its rank on the node) % (devices it sees), so with one
// GPU per rank (CUDA_VISIBLE_DEVICES) every rank uses its device 0.
//
// Device buffers are each rank's own (not symmetric, not one-sided): the
// host reaches them with the copies below, tasks and kernels through the
// pointer. Their collectives take the same types, reductions and groups as
// the host ones and are checked the same way (every member the same call);
// they go through NCCL or are staged through host memory and MPI:
//   TASKGRID_NCCL=auto  NCCL where the backend is cuda, libnccl.so.2 loads
//                       (TASKGRID_NCCL_LIBRARY names another) and every member
//                       of the group has a GPU of its own; staged otherwise;
//                 yes   NCCL, or an error naming why it cannot be used;
//                 no    always staged.
// The path is chosen once per group, at its first device collective
// (collective), and kept; a group's NCCL communicator lives until
// free_group() or finalize().

// This rank's device memory of `bytes` (0 allowed; never nullptr). Not
// collective. Throws taskgrid::Error when there is no device backend
// (TASKGRID_DEVICE=none, or auto without a GPU) or the device is full.
void* device_alloc(size_t bytes);
// Frees what device_alloc returned (nullptr: nothing).
void device_free(void* pointer);
// Blocking copies between host memory and this rank's device memory;
// [device pointer, + bytes) must lie in one device_alloc buffer.
void copy_to_device(void* device_dst, const void* host_src, size_t bytes);
void copy_from_device(void* host_dst, const void* device_src, size_t bytes);
// "cuda" or "emulated" (opens the backend; throws as device_alloc does).
const char* device_backend();
// The device this rank uses, of those its backend sees.
int device_index();

// Collectives on device memory from device_alloc, blocking (the result is on
// the device on return). Arguments as broadcast() and allreduce() above.
void device_broadcast(void* data, size_t count, DataType type, int root,
                      const Group& group = world());
void device_allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                      const Group& group = world());

template <typename T>
void device_broadcast(T* data, size_t count, int root, const Group& group = world()) {
  device_broadcast(static_cast<void*>(data), count, data_type_of<T>(), root, group);
}
template <typename T>
void device_allreduce(const T* send, T* recv, size_t count, ReduceOp op,
                      const Group& group = world()) {
  device_allreduce(static_cast<const void*>(send), static_cast<void*>(recv), count,
                   data_type_of<T>(), op, group);
}

// The path of `group`'s device collectives: undecided before its first one.
enum class DevicePath : uint8_t { undecided, staged, nccl };
DevicePath device_collective_path(const Group& group = world());
const char* device_path_name(DevicePath path);  // "undecided", "staged", "nccl"
// Why that path: "TASKGRID_NCCL=no", "the device backend is emulated, not
// cuda", "ranks 0 and 1 share GPU ...", "libnccl.so.2 not found: ...", or
// "NCCL 2.28.9" for the NCCL path; "" while undecided.
std::string device_collective_reason(const Group& group = world());

}  // namespace taskgrid::pgas
