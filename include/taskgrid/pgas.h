/* TaskGrid PGAS layer, C API (C99): global memory, one-sided put/get,
 * atomics, locks, groups and collectives. The same model as the C++ API
 * (taskgrid/pgas.hpp), which documents every call; ranks are MPI_COMM_WORLD
 * ranks for one-sided calls and group ranks for collectives.
 *
 *   tg_pgas_memory halo;
 *   tg_pgas_init(&argc, &argv, 0);                 collective
 *   tg_pgas_alloc(2 * plane_bytes, &halo);         symmetric, collective
 *   double* mine;  tg_pgas_local(halo, (void**)&mine);
 *   tg_pgas_put(right, halo, 0, edge, plane_bytes);
 *   tg_pgas_barrier(tg_pgas_world());
 *   tg_pgas_free(halo);
 *   tg_pgas_finalize();
 *
 * Every function returns TG_SUCCESS (0) or a TG_ERROR* code (taskgrid/taskgrid.h)
 * and tg_last_error() gives the message. A collective whose members disagree,
 * or that a member never joins within TASKGRID_PGAS_TIMEOUT seconds, ends the
 * job with a message on every rank.
 */
#ifndef TASKGRID_PGAS_H
#define TASKGRID_PGAS_H

#include <stddef.h>
#include <stdint.h>

#include "taskgrid/taskgrid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A global allocation, the same value on every rank; {0, 0} is "none". */
typedef struct {
  uint32_t slot;
  uint32_t generation;
} tg_pgas_memory;

/* A group of ranks (local handle); id 0 is "none", 1 is the world. */
typedef struct {
  uint32_t id;
} tg_pgas_group;

/* A non-blocking operation in flight (opaque; zero-initialise before use). */
typedef struct {
  uint64_t opaque[3];
} tg_pgas_operation;

/* The _MAX_ENUM members make every int a valid value of the type, so a bad
 * value passed from C is reported (TG_ERROR_INVALID_ARGUMENT), not undefined. */
typedef enum {
  TG_PGAS_INT32 = 0,
  TG_PGAS_INT64 = 1,
  TG_PGAS_UINT32 = 2,
  TG_PGAS_UINT64 = 3,
  TG_PGAS_FLOAT = 4,
  TG_PGAS_DOUBLE = 5,
  TG_PGAS_TYPE_MAX_ENUM = 0x7fffffff
} tg_pgas_type;

typedef enum {
  TG_PGAS_SUM = 0,
  TG_PGAS_PROD = 1,
  TG_PGAS_MIN = 2,
  TG_PGAS_MAX = 3,
  TG_PGAS_OP_MAX_ENUM = 0x7fffffff
} tg_pgas_op;

/* ---------------------------------------------------------- lifecycle -- */
/* segment_bytes 0: TASKGRID_PGAS_SEGMENT or 64 MiB. argc/argv may be NULL. */
int tg_pgas_init(int* argc, char*** argv, size_t segment_bytes);
/* Before the program's own MPI_Init, when it initialises MPI itself: Open MPI
 * needs its one-sided components chosen before it starts (pgas.hpp). */
int tg_pgas_prepare_mpi_init(void);
int tg_pgas_finalize(void);
int tg_pgas_rank(int* rank);
int tg_pgas_num_ranks(int* num_ranks);
/* Ends the whole job with "error: taskgrid: rank R: <message>" (does not return). */
void tg_pgas_abort_job(const char* message);

/* ------------------------------------------------------------- memory -- */
int tg_pgas_alloc(size_t bytes, tg_pgas_memory* out);
int tg_pgas_alloc_asymmetric(size_t local_bytes, tg_pgas_memory* out);
int tg_pgas_free(tg_pgas_memory memory);
int tg_pgas_local(tg_pgas_memory memory, void** out);
int tg_pgas_size(tg_pgas_memory memory, int rank, size_t* out);

/* ---------------------------------------------------------- one-sided -- */
int tg_pgas_put(int rank, tg_pgas_memory dst, size_t dst_offset, const void* src, size_t bytes);
int tg_pgas_get(void* dst, int rank, tg_pgas_memory src, size_t src_offset, size_t bytes);
int tg_pgas_put_nb(int rank, tg_pgas_memory dst, size_t dst_offset, const void* src, size_t bytes,
                   tg_pgas_operation* op);
int tg_pgas_get_nb(void* dst, int rank, tg_pgas_memory src, size_t src_offset, size_t bytes,
                   tg_pgas_operation* op);
int tg_pgas_wait(tg_pgas_operation* op);
int tg_pgas_fence(void);
int tg_pgas_put_strided(int rank, tg_pgas_memory dst, size_t dst_offset, size_t dst_stride,
                        const void* src, size_t src_stride, size_t block_bytes, size_t blocks);
int tg_pgas_get_strided(void* dst, size_t dst_stride, int rank, tg_pgas_memory src,
                        size_t src_offset, size_t src_stride, size_t block_bytes, size_t blocks);
int tg_pgas_fetch_add(int rank, tg_pgas_memory memory, size_t offset, int64_t value, int64_t* old);
int tg_pgas_compare_swap(int rank, tg_pgas_memory memory, size_t offset, int64_t expected,
                         int64_t desired, int64_t* old);
int tg_pgas_atomic_load(int rank, tg_pgas_memory memory, size_t offset, int64_t* value);
int tg_pgas_atomic_store(int rank, tg_pgas_memory memory, size_t offset, int64_t value);
int tg_pgas_lock(int rank);
int tg_pgas_unlock(int rank);

/* ------------------------------------------------------------- groups -- */
tg_pgas_group tg_pgas_world(void);
/* Collective over the listed ranks (only they call it). */
int tg_pgas_create_group(const int* world_ranks, int count, tg_pgas_group* out);
/* Collective over parent; colour < 0 joins none (*out = {0}). */
int tg_pgas_split(tg_pgas_group parent, int colour, int key, tg_pgas_group* out);
/* Collective over every rank; pass {0} for a group this rank is not in. */
int tg_pgas_merge(tg_pgas_group a, tg_pgas_group b, tg_pgas_group* out);
int tg_pgas_free_group(tg_pgas_group* group);
int tg_pgas_group_size(tg_pgas_group group, int* size);
int tg_pgas_group_rank(tg_pgas_group group, int* rank);
int tg_pgas_group_world_rank(tg_pgas_group group, int group_rank, int* world_rank);
int tg_pgas_barrier(tg_pgas_group group);

/* -------------------------------------------------------- collectives -- */
int tg_pgas_broadcast(void* data, size_t count, tg_pgas_type type, int root, tg_pgas_group group);
int tg_pgas_reduce(const void* send, void* recv, size_t count, tg_pgas_type type, tg_pgas_op op,
                   int root, tg_pgas_group group);
int tg_pgas_allreduce(const void* send, void* recv, size_t count, tg_pgas_type type, tg_pgas_op op,
                      tg_pgas_group group);

/* ------------------------------------------------------ device memory -- */
/* This rank's device memory and collectives on it (taskgrid/pgas.hpp's
 * pgas::device_alloc ... device_collective_path; TASKGRID_DEVICE, TASKGRID_NCCL). */
typedef enum {
  TG_PGAS_PATH_UNDECIDED = 0,
  TG_PGAS_PATH_STAGED = 1,
  TG_PGAS_PATH_NCCL = 2,
  TG_PGAS_PATH_MAX_ENUM = 0x7fffffff
} tg_pgas_device_path;

int tg_pgas_device_alloc(size_t bytes, void** out);
int tg_pgas_device_free(void* pointer);
int tg_pgas_copy_to_device(void* device_dst, const void* host_src, size_t bytes);
int tg_pgas_copy_from_device(void* host_dst, const void* device_src, size_t bytes);
/* "cuda" or "emulated" (a static string). */
int tg_pgas_device_backend(const char** out);
int tg_pgas_device_broadcast(void* data, size_t count, tg_pgas_type type, int root,
                             tg_pgas_group group);
int tg_pgas_device_allreduce(const void* send, void* recv, size_t count, tg_pgas_type type,
                             tg_pgas_op op, tg_pgas_group group);
int tg_pgas_device_collective_path(tg_pgas_group group, tg_pgas_device_path* out);

#ifdef __cplusplus
}
#endif

#endif /* TASKGRID_PGAS_H */
