// The PGAS C API (include/taskgrid/pgas.h) over the C++ API. Handles are the
// same bits as their C++ counterparts; errors go through core::c_status::guarded.
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "core/c_status.h"
#include "pgas/state.h"
#include "taskgrid/pgas.h"
#include "taskgrid/pgas.hpp"

namespace pgas = taskgrid::pgas;
using taskgrid::core::c_status::fail;
using taskgrid::core::c_status::guarded;

namespace {

static_assert(sizeof(tg_pgas_operation) >= sizeof(pgas::Operation));
static_assert(std::is_trivially_copyable_v<pgas::Operation>);
static_assert(TG_PGAS_DOUBLE == static_cast<int>(pgas::DataType::float64));
static_assert(TG_PGAS_MAX == static_cast<int>(pgas::ReduceOp::max));
static_assert(TG_PGAS_PATH_NCCL == static_cast<int>(pgas::DevicePath::nccl));

pgas::Memory to_memory(tg_pgas_memory memory) { return {memory.slot, memory.generation}; }
tg_pgas_memory to_c(pgas::Memory memory) { return {memory.slot, memory.generation}; }
pgas::Group to_group(tg_pgas_group group) { return pgas::GroupAccess::make(group.id); }

template <typename T>
void require(T* pointer, const char* function, const char* name) {
  if (!pointer) fail(TG_ERROR_INVALID_ARGUMENT, function, (std::string(name) + " is NULL").c_str());
}

pgas::DataType to_type(tg_pgas_type type, const char* function) {
  if (type < TG_PGAS_INT32 || type > TG_PGAS_DOUBLE)
    fail(TG_ERROR_INVALID_ARGUMENT, function, "unknown tg_pgas_type");
  return static_cast<pgas::DataType>(type);
}

pgas::ReduceOp to_op(tg_pgas_op op, const char* function) {
  if (op < TG_PGAS_SUM || op > TG_PGAS_MAX)
    fail(TG_ERROR_INVALID_ARGUMENT, function, "unknown tg_pgas_op");
  return static_cast<pgas::ReduceOp>(op);
}

pgas::Operation load(const tg_pgas_operation* op) {
  pgas::Operation operation;
  std::memcpy(static_cast<void*>(&operation), op->opaque, sizeof operation);
  return operation;
}

void store(tg_pgas_operation* op, const pgas::Operation& operation) {
  std::memset(op->opaque, 0, sizeof op->opaque);
  std::memcpy(op->opaque, static_cast<const void*>(&operation), sizeof operation);
}

}  // namespace

extern "C" {

int tg_pgas_init(int* argc, char*** argv, size_t segment_bytes) {
  return guarded([&] { pgas::init(argc, argv, segment_bytes); });
}
int tg_pgas_prepare_mpi_init(void) {
  return guarded([] { pgas::prepare_mpi_init(); });
}
int tg_pgas_finalize(void) {
  return guarded([] { pgas::finalize(); });
}
int tg_pgas_rank(int* rank) {
  return guarded([&] {
    require(rank, "tg_pgas_rank", "rank");
    *rank = pgas::rank();
  });
}
int tg_pgas_num_ranks(int* num_ranks) {
  return guarded([&] {
    require(num_ranks, "tg_pgas_num_ranks", "num_ranks");
    *num_ranks = pgas::num_ranks();
  });
}
void tg_pgas_abort_job(const char* message) {
  pgas::abort_job(message ? message : "tg_pgas_abort_job");
}

int tg_pgas_alloc(size_t bytes, tg_pgas_memory* out) {
  return guarded([&] {
    require(out, "tg_pgas_alloc", "out");
    *out = to_c(pgas::alloc(bytes));
  });
}
int tg_pgas_alloc_asymmetric(size_t local_bytes, tg_pgas_memory* out) {
  return guarded([&] {
    require(out, "tg_pgas_alloc_asymmetric", "out");
    *out = to_c(pgas::alloc_asymmetric(local_bytes));
  });
}
int tg_pgas_free(tg_pgas_memory memory) {
  return guarded([&] { pgas::free(to_memory(memory)); });
}
int tg_pgas_local(tg_pgas_memory memory, void** out) {
  return guarded([&] {
    require(out, "tg_pgas_local", "out");
    *out = pgas::local(to_memory(memory));
  });
}
int tg_pgas_size(tg_pgas_memory memory, int rank, size_t* out) {
  return guarded([&] {
    require(out, "tg_pgas_size", "out");
    *out = pgas::size(to_memory(memory), rank);
  });
}

int tg_pgas_put(int rank, tg_pgas_memory dst, size_t dst_offset, const void* src, size_t bytes) {
  return guarded([&] {
    if (bytes) require(src, "tg_pgas_put", "src");
    pgas::put(rank, to_memory(dst), dst_offset, src, bytes);
  });
}
int tg_pgas_get(void* dst, int rank, tg_pgas_memory src, size_t src_offset, size_t bytes) {
  return guarded([&] {
    if (bytes) require(dst, "tg_pgas_get", "dst");
    pgas::get(dst, rank, to_memory(src), src_offset, bytes);
  });
}
int tg_pgas_put_nb(int rank, tg_pgas_memory dst, size_t dst_offset, const void* src, size_t bytes,
                   tg_pgas_operation* op) {
  return guarded([&] {
    require(op, "tg_pgas_put_nb", "op");
    if (bytes) require(src, "tg_pgas_put_nb", "src");
    store(op, pgas::put_nb(rank, to_memory(dst), dst_offset, src, bytes));
  });
}
int tg_pgas_get_nb(void* dst, int rank, tg_pgas_memory src, size_t src_offset, size_t bytes,
                   tg_pgas_operation* op) {
  return guarded([&] {
    require(op, "tg_pgas_get_nb", "op");
    if (bytes) require(dst, "tg_pgas_get_nb", "dst");
    store(op, pgas::get_nb(dst, rank, to_memory(src), src_offset, bytes));
  });
}
int tg_pgas_wait(tg_pgas_operation* op) {
  return guarded([&] {
    require(op, "tg_pgas_wait", "op");
    pgas::Operation operation = load(op);
    pgas::wait(operation);
    store(op, operation);
  });
}
int tg_pgas_fence(void) {
  return guarded([] { pgas::fence(); });
}
int tg_pgas_put_strided(int rank, tg_pgas_memory dst, size_t dst_offset, size_t dst_stride,
                        const void* src, size_t src_stride, size_t block_bytes, size_t blocks) {
  return guarded([&] {
    if (blocks && block_bytes) require(src, "tg_pgas_put_strided", "src");
    pgas::put_strided(rank, to_memory(dst), dst_offset, dst_stride, src, src_stride, block_bytes,
                      blocks);
  });
}
int tg_pgas_get_strided(void* dst, size_t dst_stride, int rank, tg_pgas_memory src,
                        size_t src_offset, size_t src_stride, size_t block_bytes, size_t blocks) {
  return guarded([&] {
    if (blocks && block_bytes) require(dst, "tg_pgas_get_strided", "dst");
    pgas::get_strided(dst, dst_stride, rank, to_memory(src), src_offset, src_stride, block_bytes,
                      blocks);
  });
}
int tg_pgas_fetch_add(int rank, tg_pgas_memory memory, size_t offset, int64_t value, int64_t* old) {
  return guarded([&] {
    const int64_t previous = pgas::fetch_add(rank, to_memory(memory), offset, value);
    if (old) *old = previous;
  });
}
int tg_pgas_compare_swap(int rank, tg_pgas_memory memory, size_t offset, int64_t expected,
                         int64_t desired, int64_t* old) {
  return guarded([&] {
    const int64_t previous = pgas::compare_swap(rank, to_memory(memory), offset, expected, desired);
    if (old) *old = previous;
  });
}
int tg_pgas_atomic_load(int rank, tg_pgas_memory memory, size_t offset, int64_t* value) {
  return guarded([&] {
    require(value, "tg_pgas_atomic_load", "value");
    *value = pgas::atomic_load(rank, to_memory(memory), offset);
  });
}
int tg_pgas_atomic_store(int rank, tg_pgas_memory memory, size_t offset, int64_t value) {
  return guarded([&] { pgas::atomic_store(rank, to_memory(memory), offset, value); });
}
int tg_pgas_lock(int rank) {
  return guarded([&] { pgas::lock(rank); });
}
int tg_pgas_unlock(int rank) {
  return guarded([&] { pgas::unlock(rank); });
}

tg_pgas_group tg_pgas_world(void) { return tg_pgas_group{1}; }
int tg_pgas_create_group(const int* world_ranks, int count, tg_pgas_group* out) {
  return guarded([&] {
    require(out, "tg_pgas_create_group", "out");
    require(world_ranks, "tg_pgas_create_group", "world_ranks");
    if (count <= 0) fail(TG_ERROR_INVALID_ARGUMENT, "tg_pgas_create_group", "count must be > 0");
    out->id =
        pgas::create_group(std::span<const int>(world_ranks, static_cast<size_t>(count))).id();
  });
}
int tg_pgas_split(tg_pgas_group parent, int colour, int key, tg_pgas_group* out) {
  return guarded([&] {
    require(out, "tg_pgas_split", "out");
    out->id = pgas::split(to_group(parent), colour, key).id();
  });
}
int tg_pgas_merge(tg_pgas_group a, tg_pgas_group b, tg_pgas_group* out) {
  return guarded([&] {
    require(out, "tg_pgas_merge", "out");
    out->id = pgas::merge(to_group(a), to_group(b)).id();
  });
}
int tg_pgas_free_group(tg_pgas_group* group) {
  return guarded([&] {
    require(group, "tg_pgas_free_group", "group");
    pgas::Group g = to_group(*group);
    pgas::free_group(g);
    group->id = 0;
  });
}
int tg_pgas_group_size(tg_pgas_group group, int* size) {
  return guarded([&] {
    require(size, "tg_pgas_group_size", "size");
    *size = to_group(group).size();
  });
}
int tg_pgas_group_rank(tg_pgas_group group, int* rank) {
  return guarded([&] {
    require(rank, "tg_pgas_group_rank", "rank");
    *rank = to_group(group).rank();
  });
}
int tg_pgas_group_world_rank(tg_pgas_group group, int group_rank, int* world_rank) {
  return guarded([&] {
    require(world_rank, "tg_pgas_group_world_rank", "world_rank");
    *world_rank = to_group(group).world_rank(group_rank);
  });
}
int tg_pgas_barrier(tg_pgas_group group) {
  return guarded([&] { pgas::barrier(to_group(group)); });
}

int tg_pgas_broadcast(void* data, size_t count, tg_pgas_type type, int root, tg_pgas_group group) {
  return guarded([&] {
    if (count) require(data, "tg_pgas_broadcast", "data");
    pgas::broadcast(data, count, to_type(type, "tg_pgas_broadcast"), root, to_group(group));
  });
}
int tg_pgas_reduce(const void* send, void* recv, size_t count, tg_pgas_type type, tg_pgas_op op,
                   int root, tg_pgas_group group) {
  return guarded([&] {
    if (count) require(send, "tg_pgas_reduce", "send");
    pgas::reduce(send, recv, count, to_type(type, "tg_pgas_reduce"), to_op(op, "tg_pgas_reduce"),
                 root, to_group(group));
  });
}
int tg_pgas_allreduce(const void* send, void* recv, size_t count, tg_pgas_type type, tg_pgas_op op,
                      tg_pgas_group group) {
  return guarded([&] {
    if (count) {
      require(send, "tg_pgas_allreduce", "send");
      require(recv, "tg_pgas_allreduce", "recv");
    }
    pgas::allreduce(send, recv, count, to_type(type, "tg_pgas_allreduce"),
                    to_op(op, "tg_pgas_allreduce"), to_group(group));
  });
}

int tg_pgas_device_alloc(size_t bytes, void** out) {
  return guarded([&] {
    require(out, "tg_pgas_device_alloc", "out");
    *out = pgas::device_alloc(bytes);
  });
}
int tg_pgas_device_free(void* pointer) {
  return guarded([&] { pgas::device_free(pointer); });
}
int tg_pgas_copy_to_device(void* device_dst, const void* host_src, size_t bytes) {
  return guarded([&] { pgas::copy_to_device(device_dst, host_src, bytes); });
}
int tg_pgas_copy_from_device(void* host_dst, const void* device_src, size_t bytes) {
  return guarded([&] { pgas::copy_from_device(host_dst, device_src, bytes); });
}
int tg_pgas_device_backend(const char** out) {
  return guarded([&] {
    require(out, "tg_pgas_device_backend", "out");
    *out = pgas::device_backend();
  });
}
int tg_pgas_device_broadcast(void* data, size_t count, tg_pgas_type type, int root,
                             tg_pgas_group group) {
  return guarded([&] {
    pgas::device_broadcast(data, count, to_type(type, "tg_pgas_device_broadcast"), root,
                           to_group(group));
  });
}
int tg_pgas_device_allreduce(const void* send, void* recv, size_t count, tg_pgas_type type,
                             tg_pgas_op op, tg_pgas_group group) {
  return guarded([&] {
    pgas::device_allreduce(send, recv, count, to_type(type, "tg_pgas_device_allreduce"),
                           to_op(op, "tg_pgas_device_allreduce"), to_group(group));
  });
}
int tg_pgas_device_collective_path(tg_pgas_group group, tg_pgas_device_path* out) {
  return guarded([&] {
    require(out, "tg_pgas_device_collective_path", "out");
    *out = static_cast<tg_pgas_device_path>(pgas::device_collective_path(to_group(group)));
  });
}

}  // extern "C"
