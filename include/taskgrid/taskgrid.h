/* TaskGrid public C API (C99), for C and Fortran (ISO_C_BINDING) programs.
 *
 * The same model as the C++ API (taskgrid/taskgrid.hpp): register task
 * functions identically on every rank, start the runtime, hand buffers to it,
 * submit tasks with in/out/inout accesses, copy results back, finish.
 *
 *   static void scale(tg_task_context* ctx) {
 *     double factor;
 *     double* v = (double*)tg_task_data(ctx, 0);
 *     size_t n = tg_task_size(ctx, 0) / sizeof(double);
 *     memcpy(&factor, tg_task_args(ctx), sizeof factor);
 *     for (size_t i = 0; i < n; ++i) v[i] *= factor;
 *   }
 *
 *   int main(int argc, char** argv) {
 *     uint32_t scale_id;
 *     tg_data h;
 *     double v[1000], factor = 2.0;
 *     tg_register_function("scale", scale, &scale_id);  // every rank, before tg_start
 *     tg_start(&argc, &argv);                            // ranks > 0 serve here, then exit
 *     tg_enter_data(v, sizeof v, &h);                    // map(to:)
 *     tg_access a = {h, TG_INOUT};
 *     tg_submit(scale_id, &a, 1, NULL, &factor, sizeof factor);
 *     tg_exit_data(h);                                   // map(from:)
 *     return tg_finish();
 *   }
 *
 * Errors: every function that can fail returns an int status, TG_SUCCESS (0)
 * or one of the TG_ERROR* codes, and tg_last_error() gives the message of the
 * last failure on the calling thread. No C++ exception ever crosses this API.
 *
 * A task function reports a failure with tg_task_fail() and returns; the
 * runtime then ends the whole job with a message naming the task and the rank
 * (as an exception thrown from a C++ task function does).
 */
#ifndef TASKGRID_TASKGRID_H
#define TASKGRID_TASKGRID_H

#include <stddef.h>
#include <stdint.h>

#include "taskgrid/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- status -- */

enum {
  TG_SUCCESS = 0,
  TG_ERROR = 1,                  /* a runtime failure (unknown handle, after finish, ...) */
  TG_ERROR_INVALID_ARGUMENT = 2, /* NULL pointer, bad access mode, unregistered function id */
  TG_ERROR_STATE = 3,            /* called at the wrong time: before tg_start, on a serving rank,
                                    tg_register_function after tg_start, device work on a CPU */
  TG_ERROR_LIMIT = 4             /* a fixed limit is reached (the C function table is full) */
};

/* The message of the last failed call on this thread; "" when none failed.
 * Successful calls leave it unchanged. Valid until this thread's next failure. */
const char* tg_last_error(void);

/* ------------------------------------------------------------------ data -- */

/* A registered buffer; id 0 is "no handle". */
typedef struct {
  uint64_t id;
} tg_data;

typedef enum { TG_IN = 1, TG_OUT = 2, TG_INOUT = 3 } tg_access_mode;

/* One depend clause of a task: which buffer and how the task uses it. */
typedef struct {
  tg_data data;
  tg_access_mode mode;
} tg_access;

/* ----------------------------------------------------------------- tasks -- */

/* What a running task sees (opaque; valid only during the task function). */
typedef struct tg_task_context tg_task_context;
typedef void (*tg_task_fn)(tg_task_context* ctx);

/* The maximum number of C task functions a program can register. */
#define TG_MAX_C_FUNCTIONS 256

/* Start from tg_default_task_options() and change fields: fields may be
 * added, and a zero channel is not the default. */
typedef struct {
  int rank;         /* placement hint: run on this rank (-1: the scheduler decides) */
  double cost;      /* cost hint in seconds (0: use measured durations) */
  const char* name; /* for traces and error messages (NULL: the registered name);
                       copied at tg_submit */
  int channel;      /* task-aware communication channel (taskgrid/task_comm.hpp),
                       0 .. TASKGRID_CHANNELS-1; -1: the task does not communicate */
  int priority;     /* among the tasks ready on the same rank at the same time,
                       higher runs first (FIFO among equals); no effect on
                       dependencies or placement */
  int device_hint;  /* for functions with a device implementation
                       (tg_register_device_function): TG_DEVICE_HINT(index) runs
                       the task on that device of its rank (a rank without it
                       ends the job naming the task); TG_DEVICE_ANY (0): the
                       runtime chooses; TG_DEVICE_ON_CPU: the CPU implementation,
                       even where devices are */
} tg_task_options;

/* device_hint values. The field stores the device index + 1 (the C++
 * TaskOptions::device + 1), so that a zeroed field means "no hint". */
#define TG_DEVICE_HINT(index) ((index) + 1)
#define TG_DEVICE_ANY 0
#define TG_DEVICE_ON_CPU (-1)

/* {rank = -1, cost = 0, name = NULL, channel = -1, priority = 0,
 *  device_hint = TG_DEVICE_ANY} */
tg_task_options tg_default_task_options(void);

/* Registers `fn` under `name` (copied) and stores its id in *id. Call it on
 * every rank with the same names, before tg_start. The id is derived from the
 * name, so it is the same on every rank. Registering the same function under
 * the same name again returns the same id; another function under a taken
 * name, or one function under two names, is an error. At most
 * TG_MAX_C_FUNCTIONS functions. */
int tg_register_function(const char* name, tg_task_fn fn, uint32_t* id);

/* A task with a device implementation (taskgrid::register_device_function).
 * On a device (TASKGRID_DEVICE; where the runtime places it, or
 * tg_task_options.device_hint), `device` runs: its tg_task_data pointers are
 * device memory, and it enqueues its work on the task's stream
 * (tg_task_stream, tg_launch_host_work) and returns; the task finishes when
 * that work has. On a CPU `cpu` runs; `cpu` may be NULL (a device-only
 * function: on a rank without a device, the job ends naming the task).
 * The same rules as tg_register_function: before tg_start, on every rank;
 * the same name and functions again give the same id; each non-NULL
 * function takes one of the TG_MAX_C_FUNCTIONS slots. */
int tg_register_device_function(const char* name, tg_task_fn cpu, tg_task_fn device, uint32_t* id);

/* ------------------------------------------------------------- lifecycle -- */

/* Initialises MPI (argc/argv may be NULL) and starts the runtime, as
 * taskgrid::start. In cluster mode (the default) rank 0 returns and runs the
 * program; the other ranks serve rank 0 until it calls tg_finish, then exit
 * the process with the job's status (this call does not return on them). */
int tg_start(int* argc, char*** argv);

/* Who runs the program (taskgrid::Mode): TG_MODE_CLUSTER, rank 0 runs it and
 * the other ranks serve; TG_MODE_SPMD, every rank runs it and makes the same
 * sequence of tg_enter_data/tg_submit calls; TG_MODE_FROM_ENVIRONMENT, the
 * program works in both and TASKGRID_MODE (default cluster) picks. A
 * TASKGRID_MODE naming the other mode than the program's is an error. */
typedef enum { TG_MODE_CLUSTER = 0, TG_MODE_SPMD = 1, TG_MODE_FROM_ENVIRONMENT = 2 } tg_mode;

/* tg_start in the given mode (tg_start is TG_MODE_CLUSTER). */
int tg_start_mode(int* argc, char*** argv, tg_mode mode);
/* Starts the runtime in `mode`, runs main_fn(argc, argv, user) (cluster: on
 * rank 0 while the other ranks serve; spmd: on every rank), finishes, and
 * stores the job's status in *job_status (the largest main_fn returned on any
 * rank, the same on every rank). Returns on every rank, in both modes.
 * main_fn may call tg_finish/tg_finish_status itself. */
int tg_run(int argc, char** argv, int (*main_fn)(int argc, char** argv, void* user), void* user,
           tg_mode mode, int* job_status);
/* Waits for all tasks, stops every rank, finalises MPI if tg_start
 * initialised it. Returns TG_SUCCESS, the program's exit status. */
int tg_finish(void);
/* tg_finish with this rank's exit status: stores the job's status in
 * *job_status (may be NULL): the largest exit_status given on any rank
 * (serving ranks give 0), the same on every rank. */
int tg_finish_status(int exit_status, int* job_status);
int tg_rank(int* rank);
int tg_num_ranks(int* num_ranks);
/* *spmd = 1 in spmd mode (every rank runs the program), 0 in cluster mode. */
int tg_is_spmd(int* spmd);

/* ------------------------------------------------------------------ data -- */

/* `target enter data map(to:)`: copies `bytes` from `host` into the runtime
 * and stores a new handle in *out. `host` stays registered for tg_fetch. */
int tg_enter_data(void* host, size_t bytes, tg_data* out);
/* The same with the data's owner (taskgrid::enter_data(host, bytes, owner)):
 * spmd mode, the data starts on `owner` from its host buffer and tasks
 * writing it run there by default. */
int tg_enter_data_owner(void* host, size_t bytes, int owner, tg_data* out);
/* `target enter data map(alloc:)` (taskgrid::enter_data_alloc): no copy; the
 * first task must write all of the data. `host` may be NULL (tg_fetch then
 * only waits); owner -1: the default placement, as tg_enter_data. */
int tg_enter_data_alloc(void* host, size_t bytes, int owner, tg_data* out);
/* `target update from`: waits for the writers of `data` and copies its latest
 * version into the host buffer given at tg_enter_data. */
int tg_fetch(tg_data data);
/* `target exit data map(from:)`: tg_fetch then tg_release. */
int tg_exit_data(tg_data data);
/* spmd mode: the same into `rank`'s host buffer, or TG_ALL_RANKS into every
 * rank's (taskgrid::fetch(h, rank)); every rank makes the same call. Cluster
 * mode: `rank` must be 0. */
#define TG_ALL_RANKS (-1)
int tg_fetch_to(tg_data data, int rank);
int tg_exit_data_to(tg_data data, int rank);
/* Forgets `data` once the tasks already submitted on it are done. */
int tg_release(tg_data data);
/* The rank that owns `data` (spmd: where tasks writing it run by default).
 * An unknown handle is TG_ERROR. */
int tg_owner(tg_data data, int* rank);

/* ----------------------------------------------------------------- tasks -- */

/* Submits a task running `function` (an id from tg_register_function) with
 * these accesses (num_accesses == 0: `accesses` may be NULL) and `args_size`
 * bytes at `args` copied by value (args may be NULL when args_size is 0).
 * `options` NULL means tg_default_task_options(). */
int tg_submit(uint32_t function, const tg_access* accesses, size_t num_accesses,
              const tg_task_options* options, const void* args, size_t args_size);
/* Waits until every submitted task has completed. */
int tg_wait_all(void);
/* Waits until every submitted task that accesses `data` has completed. */
int tg_wait(tg_data data);

/* --------------------------------------------------------- inside a task -- */

/* The buffer of access `index` (in submission order) and its size in bytes.
 * An index out of range returns NULL / 0, sets tg_last_error and fails the
 * task (as tg_task_fail does). */
void* tg_task_data(tg_task_context* ctx, size_t index);
size_t tg_task_size(tg_task_context* ctx, size_t index);
size_t tg_task_num_data(tg_task_context* ctx);
/* The by-value arguments given to tg_submit (NULL when there are none). */
const void* tg_task_args(tg_task_context* ctx);
size_t tg_task_args_size(tg_task_context* ctx);
/* The rank running the task (-1 when ctx is NULL). */
int tg_task_rank(tg_task_context* ctx);
/* Marks the task failed with `message` (copied; NULL gives a generic one).
 * The task function should return soon after: when it does, the job ends with
 * "error: taskgrid: rank R: task '<name>' (id N) failed: <message>". The first
 * message wins. May be called from threads the task function starts, as long
 * as they finish before it returns. */
void tg_task_fail(tg_task_context* ctx, const char* message);

/* ------------------------------------------ inside a device implementation -- */

/* Where a task runs (taskgrid::DeviceKind). TG_DEVICE_EMULATED is the
 * device of TASKGRID_DEVICE=emulated, for testing without a GPU: its memory
 * faults when the host touches it, and its "kernels" are host work on the
 * stream that reads and writes the buffers through tg_emulated_view. */
typedef enum { TG_DEVICE_CPU = 0, TG_DEVICE_CUDA = 1, TG_DEVICE_EMULATED = 2 } tg_device_kind;

/* The kind of what runs the task (TG_DEVICE_CPU when ctx is NULL). */
tg_device_kind tg_task_device_kind(const tg_task_context* ctx);
/* The device's index on the task's rank; -1 on a CPU (or ctx NULL). */
int tg_task_device(const tg_task_context* ctx);
/* The task's stream: a cudaStream_t on CUDA (launch kernels on it and return;
 * never synchronise it); NULL on a CPU (or ctx NULL). */
void* tg_task_stream(const tg_task_context* ctx);

/* Runs work(arg) on the task's stream, after the work enqueued on it before
 * and before the work enqueued after (cudaLaunchHostFunc on CUDA: `work`
 * must not call CUDA nor wait for other work: the host work of every stream
 * may run on one thread). It runs after the task function has returned, so it
 * must not use ctx, and `arg` must live until it runs (work may free it).
 * On a CPU: TG_ERROR_STATE, and nothing runs. */
typedef void (*tg_host_work_fn)(void* arg);
int tg_launch_host_work(tg_task_context* ctx, tg_host_work_fn work, void* arg);

/* The emulated device only: where the host reads and writes the bytes of
 * device buffer `index` (from host work on the stream; tg_task_data's
 * pointer itself faults on the host). Elsewhere NULL with tg_last_error set;
 * an index out of range also fails the task, as in tg_task_data. */
void* tg_emulated_view(tg_task_context* ctx, size_t index);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TASKGRID_TASKGRID_H */
