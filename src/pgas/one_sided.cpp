// One-sided operations on the global segment: put/get (blocking, non-blocking,
// strided), fence, atomics and locks. The window stays in one passive epoch
// (MPI_Win_lock_all) for its lifetime, so an operation is one MPI call and
// completing it is a flush: no synchronisation with the target's program.
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>

#include "pgas/memory.h"

namespace taskgrid::pgas {

// Grants the layer an Operation's fields.
struct OperationAccess {
  static void set(Operation& op, int target) { op.target_ = target; }
  static int target(const Operation& op) { return op.target_; }
};

namespace {

constexpr uint8_t kPut = 1;
constexpr uint8_t kGet = 2;
// MPI counts are int: larger transfers go in pieces of 1 GiB.
constexpr size_t kMaxPiece = size_t{1} << 30;

// Non-blocking operations this thread issued since its last fence: a task's
// are completed before its outputs are released (complete_task_operations).
thread_local bool issued_non_blocking = false;
std::atomic<uint64_t> epilogue_fences{0};

// Issues [offset, offset + bytes) as MPI_Put/MPI_Get pieces; a flush of the
// target completes them. (No request-based MPI_Rput/Rget: a request per
// message cost up to 16% of get bandwidth at 64 KiB, and completing at the
// target needs the flush anyway.)
void issue(State& s, uint8_t kind, void* local_buffer, int rank, uint64_t displacement,
           size_t bytes, const char* call) {
  char* cursor = static_cast<char*>(local_buffer);
  while (bytes > 0) {
    const size_t piece = bytes < kMaxPiece ? bytes : kMaxPiece;
    const int count = static_cast<int>(piece);
    const auto target = static_cast<MPI_Aint>(displacement);
    check_mpi(kind == kPut
                  ? MPI_Put(cursor, count, MPI_BYTE, rank, target, count, MPI_BYTE, s.window)
                  : MPI_Get(cursor, count, MPI_BYTE, rank, target, count, MPI_BYTE, s.window),
              call);
    cursor += piece;
    displacement += piece;
    bytes -= piece;
  }
}

// A rank on this node: a plain copy through the shared mapping, complete on return.
bool direct_transfer(State& s, uint8_t kind, void* local_buffer, int rank, uint64_t displacement,
                     size_t bytes) {
  char* segment = direct_segment(s, rank);
  if (!segment) return false;
  // memmove: a rank may copy between two parts of its own segment.
  if (kind == kPut)
    std::memmove(segment + displacement, local_buffer, bytes);
  else
    std::memmove(local_buffer, segment + displacement, bytes);
  return true;
}

void blocking_transfer(uint8_t kind, void* local_buffer, int rank, Memory memory, size_t offset,
                       size_t bytes, const char* call) {
  State& s = state(call);
  const uint64_t displacement = target_displacement(s, memory, rank, offset, bytes, call);
  if (bytes == 0 || direct_transfer(s, kind, local_buffer, rank, displacement, bytes)) return;
  issue(s, kind, local_buffer, rank, displacement, bytes, call);
  check_mpi(MPI_Win_flush(rank, s.window), call);
}

Operation non_blocking_transfer(uint8_t kind, void* local_buffer, int rank, Memory memory,
                                size_t offset, size_t bytes, const char* call) {
  State& s = state(call);
  const uint64_t displacement = target_displacement(s, memory, rank, offset, bytes, call);
  Operation op;
  if (bytes == 0) return op;
  // Even a direct copy gets the task's fence: it orders the copy before the
  // message that releases the task's outputs.
  issued_non_blocking = true;
  if (direct_transfer(s, kind, local_buffer, rank, displacement, bytes)) return op;
  issue(s, kind, local_buffer, rank, displacement, bytes, call);
  OperationAccess::set(op, rank);
  return op;
}

// A committed hvector type of `blocks` blocks, `stride` bytes apart.
struct StridedType {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  StridedType(size_t blocks, size_t block_bytes, size_t stride) {
    MPI_Type_create_hvector(static_cast<int>(blocks), static_cast<int>(block_bytes),
                            static_cast<MPI_Aint>(stride), MPI_BYTE, &type);
    MPI_Type_commit(&type);
  }
  ~StridedType() { MPI_Type_free(&type); }
  StridedType(const StridedType&) = delete;
  StridedType& operator=(const StridedType&) = delete;
};

void strided_transfer(uint8_t kind, void* local_buffer, size_t local_stride, int rank,
                      Memory memory, size_t offset, size_t remote_stride, size_t block_bytes,
                      size_t blocks, const char* call) {
  State& s = state(call);
  if (blocks == 0 || block_bytes == 0) {
    target_displacement(s, memory, rank, offset, 0, call);
    return;
  }
  if (blocks > INT_MAX || block_bytes > INT_MAX)
    throw Error(std::string(call) + ": " + std::to_string(blocks) + " blocks of " +
                std::to_string(block_bytes) + " bytes: at most " + std::to_string(INT_MAX) +
                " of each per call");
  // Blocks that overlap on the written side would make the result depend on order.
  const size_t written_stride = kind == kPut ? remote_stride : local_stride;
  if (written_stride < block_bytes)
    throw Error(std::string(call) + ": stride " + std::to_string(written_stride) +
                " is smaller than the block (" + std::to_string(block_bytes) +
                " bytes): written blocks would overlap");
  if (remote_stride > (SIZE_MAX - block_bytes) / blocks)
    throw Error(std::string(call) + ": the strided range overflows");
  const size_t extent = (blocks - 1) * remote_stride + block_bytes;
  const uint64_t displacement = target_displacement(s, memory, rank, offset, extent, call);
  if (char* segment = direct_segment(s, rank)) {
    char* local_block = static_cast<char*>(local_buffer);
    char* remote_block = segment + displacement;
    for (size_t i = 0; i < blocks;
         ++i, local_block += local_stride, remote_block += remote_stride) {
      if (kind == kPut)
        std::memmove(remote_block, local_block, block_bytes);
      else
        std::memmove(local_block, remote_block, block_bytes);
    }
    return;
  }
  StridedType local_type(blocks, block_bytes, local_stride);
  StridedType remote_type(blocks, block_bytes, remote_stride);
  const auto target = static_cast<MPI_Aint>(displacement);
  const int code =
      kind == kPut
          ? MPI_Put(local_buffer, 1, local_type.type, rank, target, 1, remote_type.type, s.window)
          : MPI_Get(local_buffer, 1, local_type.type, rank, target, 1, remote_type.type, s.window);
  check_mpi(code, call);
  check_mpi(MPI_Win_flush(rank, s.window), call);
}

// The displacement of an aligned 64-bit word of `memory` on `rank`.
uint64_t word_displacement(State& s, Memory memory, int rank, size_t offset, const char* call) {
  if (offset % sizeof(int64_t) != 0)
    throw Error(std::string(call) + ": offset " + std::to_string(offset) +
                " is not a multiple of 8 (atomics work on aligned 64-bit words)");
  return target_displacement(s, memory, rank, offset, sizeof(int64_t), call);
}

int64_t fetch_and_op(State& s, int rank, uint64_t displacement, int64_t operand, MPI_Op op,
                     const char* call) {
  int64_t result = 0;
  check_mpi(MPI_Fetch_and_op(&operand, &result, MPI_INT64_T, rank,
                             static_cast<MPI_Aint>(displacement), op, s.window),
            call);
  check_mpi(MPI_Win_flush(rank, s.window), call);
  return result;
}

}  // namespace

void complete_task_operations() {
  if (!issued_non_blocking) return;
  if (State* s = state_or_null()) check_mpi(MPI_Win_flush_all(s->window), "pgas (task epilogue)");
  std::atomic_thread_fence(std::memory_order_seq_cst);
  issued_non_blocking = false;
  epilogue_fences.fetch_add(1, std::memory_order_relaxed);
}

uint64_t task_epilogue_fences() { return epilogue_fences.load(std::memory_order_relaxed); }

void put(int rank, Memory dst, size_t dst_offset, const void* src, size_t bytes) {
  // MPI_Put reads through a non-const pointer in old MPI signatures only.
  blocking_transfer(kPut, const_cast<void*>(src), rank, dst, dst_offset, bytes, "pgas::put");
}

void get(void* dst, int rank, Memory src, size_t src_offset, size_t bytes) {
  blocking_transfer(kGet, dst, rank, src, src_offset, bytes, "pgas::get");
}

Operation put_nb(int rank, Memory dst, size_t dst_offset, const void* src, size_t bytes) {
  return non_blocking_transfer(kPut, const_cast<void*>(src), rank, dst, dst_offset, bytes,
                               "pgas::put_nb");
}

Operation get_nb(void* dst, int rank, Memory src, size_t src_offset, size_t bytes) {
  return non_blocking_transfer(kGet, dst, rank, src, src_offset, bytes, "pgas::get_nb");
}

void wait(Operation& operation) {
  if (!operation.pending()) return;
  State& s = state("pgas::wait");
  check_mpi(MPI_Win_flush(OperationAccess::target(operation), s.window), "pgas::wait");
  operation = Operation{};
}

void fence() {
  State& s = state("pgas::fence");
  check_mpi(MPI_Win_flush_all(s.window), "pgas::fence");
  // Direct copies are complete already; order them before what follows (a flag, a message).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  issued_non_blocking = false;
}

void put_strided(int rank, Memory dst, size_t dst_offset, size_t dst_stride, const void* src,
                 size_t src_stride, size_t block_bytes, size_t blocks) {
  strided_transfer(kPut, const_cast<void*>(src), src_stride, rank, dst, dst_offset, dst_stride,
                   block_bytes, blocks, "pgas::put_strided");
}

void get_strided(void* dst, size_t dst_stride, int rank, Memory src, size_t src_offset,
                 size_t src_stride, size_t block_bytes, size_t blocks) {
  strided_transfer(kGet, dst, dst_stride, rank, src, src_offset, src_stride, block_bytes, blocks,
                   "pgas::get_strided");
}

int64_t fetch_add(int rank, Memory memory, size_t offset, int64_t value) {
  State& s = state("pgas::fetch_add");
  const uint64_t at = word_displacement(s, memory, rank, offset, "pgas::fetch_add");
  return fetch_and_op(s, rank, at, value, MPI_SUM, "pgas::fetch_add");
}

int64_t atomic_load(int rank, Memory memory, size_t offset) {
  State& s = state("pgas::atomic_load");
  const uint64_t at = word_displacement(s, memory, rank, offset, "pgas::atomic_load");
  return fetch_and_op(s, rank, at, 0, MPI_NO_OP, "pgas::atomic_load");
}

void atomic_store(int rank, Memory memory, size_t offset, int64_t value) {
  State& s = state("pgas::atomic_store");
  const uint64_t at = word_displacement(s, memory, rank, offset, "pgas::atomic_store");
  fetch_and_op(s, rank, at, value, MPI_REPLACE, "pgas::atomic_store");
}

int64_t compare_swap(int rank, Memory memory, size_t offset, int64_t expected, int64_t desired) {
  State& s = state("pgas::compare_swap");
  const uint64_t at = word_displacement(s, memory, rank, offset, "pgas::compare_swap");
  int64_t result = 0;
  check_mpi(MPI_Compare_and_swap(&desired, &expected, &result, MPI_INT64_T, rank,
                                 static_cast<MPI_Aint>(at), s.window),
            "pgas::compare_swap");
  check_mpi(MPI_Win_flush(rank, s.window), "pgas::compare_swap");
  return result;
}

// A ticket lock in the target's header: take a ticket (fetch-and-add on the
// next-ticket word), wait until the now-serving word shows it. Fair, and it
// needs only fetch-and-add and reads, which every MPI does atomically.
void lock(int rank) {
  State& s = state("pgas::lock");
  check_rank(s, rank, "pgas::lock");
  const auto me = std::this_thread::get_id();
  {
    std::lock_guard guard(s.lock_mutex);
    if (s.lock_holders[static_cast<size_t>(rank)] == me)
      throw Error("pgas::lock(" + std::to_string(rank) +
                  "): this thread already holds that lock (locks are not re-entrant)");
  }
  const int64_t ticket = fetch_and_op(s, rank, kLockNextTicket, 1, MPI_SUM, "pgas::lock");
  const double start = MPI_Wtime();
  double waited = 0;
  for (uint64_t round = 0;; ++round) {
    if (fetch_and_op(s, rank, kLockNowServing, 0, MPI_NO_OP, "pgas::lock") == ticket) break;
    if ((round & 63) == 63) waited = MPI_Wtime() - start;
    back_off(round, waited);
  }
  std::lock_guard guard(s.lock_mutex);
  s.lock_holders[static_cast<size_t>(rank)] = me;
}

void unlock(int rank) {
  State& s = state("pgas::unlock");
  check_rank(s, rank, "pgas::unlock");
  {
    std::lock_guard guard(s.lock_mutex);
    if (s.lock_holders[static_cast<size_t>(rank)] != std::this_thread::get_id())
      throw Error("pgas::unlock(" + std::to_string(rank) +
                  "): this thread does not hold the lock on rank " + std::to_string(rank));
    s.lock_holders[static_cast<size_t>(rank)] = std::thread::id{};
  }
  // What this process wrote under the lock reaches the target before the next holder enters.
  check_mpi(MPI_Win_flush(rank, s.window), "pgas::unlock");
  fetch_and_op(s, rank, kLockNowServing, 1, MPI_SUM, "pgas::unlock");
}

}  // namespace taskgrid::pgas
