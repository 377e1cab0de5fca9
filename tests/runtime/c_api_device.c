/* Device tasks through the C API (taskgrid.h: tg_register_device_function,
 * tg_task_device_kind/_device/_stream, tg_launch_host_work, tg_emulated_view,
 * tg_task_options.device_hint), in cluster mode.
 *
 *   c_api_device run          TASKGRID_DEVICE=emulated, 2 devices per rank:
 *                             chains of device tasks (host work on the
 *                             stream through emulated views) mixed with CPU
 *                             tasks, over every rank, with hints for a
 *                             device, for the CPU and none; a device-only
 *                             function; error codes. Results are checked on
 *                             rank 0 after tg_exit_data.
 *   c_api_device cpu          TASKGRID_DEVICE=none: the same chains run the
 *                             CPU implementations (device-only parts skipped).
 *   c_api_device hint_missing a hint for device 5 on the last rank: the job
 *                             ends naming the task.
 *   c_api_device device_only  TASKGRID_DEVICE=none: a device-only task on the
 *                             last rank ends the job naming the task.
 *   c_api_device device_fail  a device implementation calls tg_task_fail on
 *                             the last rank: the job ends naming the task.
 *
 * "run" and "cpu" print "c_api_device: all N checks passed" and exit 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskgrid/taskgrid.h"

#define C_CHECKS_PROGRAM "c_api_device"
#include "c_checks.h"

#define N 64     /* elements per chain */
#define CHAINS 4 /* independent chains */
#define STEPS 6  /* tasks per chain */

/* Set on every rank before tg_start: whether the ranks have devices. */
static int devices_expected = 0;

/* Which implementation must run (the hint given with the task). */
enum { EITHER = 0, ON_CPU = 1, ON_DEVICE = 2 };

typedef struct {
  int64_t factor;
  int64_t add;
  int64_t expect; /* EITHER, ON_CPU, ON_DEVICE */
} affine_args;

/* ------------------------------------------------------------- affine -- */
/* inout int64[n]: v = v * factor + add (the order of a chain shows). */

static void affine_cpu(tg_task_context* ctx) {
  affine_args args;
  int64_t* v = (int64_t*)tg_task_data(ctx, 0);
  size_t i, n = tg_task_size(ctx, 0) / sizeof *v;
  memcpy(&args, tg_task_args(ctx), sizeof args);
  if (args.expect == ON_DEVICE) {
    tg_task_fail(ctx, "affine_cpu: the CPU implementation ran despite a device hint");
    return;
  }
  if (tg_task_device_kind(ctx) != TG_DEVICE_CPU || tg_task_device(ctx) != -1 ||
      tg_task_stream(ctx) != NULL) {
    tg_task_fail(ctx, "affine_cpu: a CPU task does not see a CPU");
    return;
  }
  for (i = 0; i < n; ++i) v[i] = v[i] * args.factor + args.add;
}

typedef struct {
  int64_t* v; /* the emulated view of the device buffer */
  size_t n;
  affine_args args;
} affine_work_args;

/* Host work on the task's stream: the emulated device's "kernel". */
static void affine_work(void* arg) {
  affine_work_args* work = (affine_work_args*)arg;
  size_t i;
  for (i = 0; i < work->n; ++i) work->v[i] = work->v[i] * work->args.factor + work->args.add;
  free(work);
}

/* The device's checks common to every device implementation; 0 on failure
 * (the task is failed). */
static int on_emulated_device(tg_task_context* ctx, const char* who) {
  char message[200];
  const int device = tg_task_device(ctx);
  if (!devices_expected) {
    snprintf(message, sizeof message, "%s: the device implementation ran without devices", who);
  } else if (tg_task_device_kind(ctx) != TG_DEVICE_EMULATED) {
    snprintf(message, sizeof message, "%s: tg_task_device_kind is %d, not TG_DEVICE_EMULATED", who,
             (int)tg_task_device_kind(ctx));
  } else if (device < 0 || device > 1) {
    snprintf(message, sizeof message, "%s: tg_task_device is %d (2 devices per rank)", who, device);
  } else if (tg_task_stream(ctx) == NULL) {
    snprintf(message, sizeof message, "%s: no stream", who);
  } else if (tg_launch_host_work(ctx, NULL, NULL) != TG_ERROR_INVALID_ARGUMENT) {
    snprintf(message, sizeof message, "%s: tg_launch_host_work(work NULL) did not fail", who);
  } else if (tg_emulated_view(ctx, 0) == tg_task_data(ctx, 0)) {
    snprintf(message, sizeof message, "%s: the emulated view is the device pointer", who);
  } else {
    return 1;
  }
  tg_task_fail(ctx, message);
  return 0;
}

/* Enqueues `work(arg)`; fails the task (and frees arg) when that fails. */
static void launch(tg_task_context* ctx, tg_host_work_fn work, void* arg) {
  if (!arg) {
    tg_task_fail(ctx, "out of memory");
    return;
  }
  if (tg_launch_host_work(ctx, work, arg) != TG_SUCCESS) {
    free(arg);
    tg_task_fail(ctx, tg_last_error());
  }
}

static void affine_device(tg_task_context* ctx) {
  affine_work_args* work;
  affine_args args;
  if (!on_emulated_device(ctx, "affine_device")) return;
  memcpy(&args, tg_task_args(ctx), sizeof args);
  if (args.expect == ON_CPU) {
    tg_task_fail(ctx, "affine_device: the device implementation ran despite TG_DEVICE_ON_CPU");
    return;
  }
  work = (affine_work_args*)malloc(sizeof *work);
  if (work) {
    work->v = (int64_t*)tg_emulated_view(ctx, 0);
    work->n = tg_task_size(ctx, 0) / sizeof(int64_t);
    work->args = args;
  }
  launch(ctx, affine_work, work);
}

/* ---------------------------------------------------------------- sum -- */
/* Device only: in int64[n], out int64 = the sum. */

typedef struct {
  const int64_t* v;
  size_t n;
  int64_t* total;
} sum_work_args;

static void sum_work(void* arg) {
  sum_work_args* work = (sum_work_args*)arg;
  size_t i;
  *work->total = 0;
  for (i = 0; i < work->n; ++i) *work->total += work->v[i];
  free(work);
}

static void sum_device(tg_task_context* ctx) {
  sum_work_args* work;
  if (!on_emulated_device(ctx, "sum_device")) return;
  work = (sum_work_args*)malloc(sizeof *work);
  if (work) {
    work->v = (const int64_t*)tg_emulated_view(ctx, 0);
    work->n = tg_task_size(ctx, 0) / sizeof(int64_t);
    work->total = (int64_t*)tg_emulated_view(ctx, 1);
  }
  launch(ctx, sum_work, work);
}

/* -------------------------------------------------------------- where -- */
/* Device only: out int[3] = {device, kind, rank} as the task saw them. */

typedef struct {
  int* out;
  int seen[3];
} where_work_args;

static void where_work(void* arg) {
  where_work_args* work = (where_work_args*)arg;
  memcpy(work->out, work->seen, sizeof work->seen);
  free(work);
}

static void where_device(tg_task_context* ctx) {
  where_work_args* work;
  if (!on_emulated_device(ctx, "where_device")) return;
  work = (where_work_args*)malloc(sizeof *work);
  if (work) {
    work->out = (int*)tg_emulated_view(ctx, 0);
    work->seen[0] = tg_task_device(ctx);
    work->seen[1] = (int)tg_task_device_kind(ctx);
    work->seen[2] = tg_task_rank(ctx);
  }
  launch(ctx, where_work, work);
}

/* ------------------------------------------------------- other tasks -- */

/* A plain CPU task (inout int64[n]: v += args.add) that checks the device
 * calls refuse a CPU without failing the task. */
static void cpu_add(tg_task_context* ctx) {
  affine_args args;
  int64_t* v = (int64_t*)tg_task_data(ctx, 0);
  size_t i, n = tg_task_size(ctx, 0) / sizeof *v;
  const char* message;
  if (tg_task_device_kind(ctx) != TG_DEVICE_CPU || tg_task_device(ctx) != -1 ||
      tg_task_stream(ctx) != NULL) {
    tg_task_fail(ctx, "cpu_add: a CPU task does not see a CPU");
    return;
  }
  if (tg_launch_host_work(ctx, affine_work, NULL) != TG_ERROR_STATE) {
    tg_task_fail(ctx, "cpu_add: tg_launch_host_work on a CPU did not give TG_ERROR_STATE");
    return;
  }
  message = tg_last_error();
  if (!strstr(message, "launch_host_work") || !strstr(message, "not on a device")) {
    tg_task_fail(ctx, "cpu_add: tg_launch_host_work on a CPU: unexpected message");
    return;
  }
  if (tg_emulated_view(ctx, 0) != NULL || !strstr(tg_last_error(), "emulated_view") ||
      !strstr(tg_last_error(), "not on a device")) {
    tg_task_fail(ctx, "cpu_add: tg_emulated_view on a CPU did not fail with a message");
    return;
  }
  memcpy(&args, tg_task_args(ctx), sizeof args);
  for (i = 0; i < n; ++i) v[i] += args.add;
}

static void failing_device(tg_task_context* ctx) {
  tg_task_fail(ctx, "deliberate failure from a C device implementation");
}

static void spare_cpu(tg_task_context* ctx) { (void)ctx; }
static void spare_device(tg_task_context* ctx) { (void)ctx; }

static uint32_t affine_id, sum_id, where_id, cpu_add_id, failing_id;

/* ------------------------------------------------------------- checks -- */

static void before_start(void) {
  uint32_t id = 7, again = 0;
  expect_error(tg_register_device_function("c_api_device.x", affine_cpu, NULL, &id),
               TG_ERROR_INVALID_ARGUMENT, "device function is NULL", "device function NULL");
  expect_true(id == 0, "a failed registration stores id 0");
  expect_error(tg_register_device_function(NULL, NULL, affine_device, &id),
               TG_ERROR_INVALID_ARGUMENT, "name", "name NULL");
  expect_error(tg_register_device_function("c_api_device.x", NULL, affine_device, NULL),
               TG_ERROR_INVALID_ARGUMENT, "id is NULL", "id NULL");
  expect_error(tg_register_device_function("c_api_device.x", spare_cpu, spare_cpu, &id),
               TG_ERROR_INVALID_ARGUMENT, "one function for both", "cpu == device");

  must(tg_register_device_function("c_api_device.affine", affine_cpu, affine_device, &affine_id),
       "register affine");
  must(tg_register_device_function("c_api_device.affine", affine_cpu, affine_device, &again),
       "register affine again");
  expect_true(affine_id != 0 && again == affine_id, "registering again gives the same id");
  must(tg_register_device_function("c_api_device.sum", NULL, sum_device, &sum_id), "register sum");
  must(tg_register_device_function("c_api_device.sum", NULL, sum_device, &again),
       "register sum again");
  expect_true(sum_id != 0 && again == sum_id && sum_id != affine_id,
              "a device-only function registered again gives the same id");
  must(tg_register_device_function("c_api_device.where", NULL, where_device, &where_id),
       "register where");
  must(tg_register_function("c_api_device.cpu_add", cpu_add, &cpu_add_id), "register cpu_add");
  must(tg_register_device_function("c_api_device.failing", NULL, failing_device, &failing_id),
       "register failing");

  expect_error(tg_register_device_function("c_api_device.alias", NULL, affine_device, &id),
               TG_ERROR_INVALID_ARGUMENT, "already registered as \"c_api_device.affine\"",
               "a device implementation under a second name");
  expect_error(tg_register_function("c_api_device.affine", affine_cpu, &id),
               TG_ERROR_INVALID_ARGUMENT, "already registered with other functions",
               "a device function's CPU implementation as a plain task");
  expect_error(tg_register_device_function("c_api_device.affine", NULL, affine_device, &id),
               TG_ERROR_INVALID_ARGUMENT, "already registered with other functions",
               "a device function again without its CPU implementation");
  expect_error(tg_register_device_function("c_api_device.cpu_add", cpu_add, spare_device, &id),
               TG_ERROR_INVALID_ARGUMENT, "already registered with other functions",
               "a plain task function as a CPU implementation");
  expect_error(tg_register_device_function("c_api_device.cpu_add", spare_cpu, spare_device, &id),
               TG_ERROR_INVALID_ARGUMENT, "clashes", "a device function under a taken name");
  /* The failed registration left its slots free: the functions register. */
  must(tg_register_device_function("c_api_device.spare", spare_cpu, spare_device, &id),
       "register spare after a failed registration");
}

static void after_start(int ranks) {
  uint32_t id = 0;
  int64_t value[N];
  tg_data h;
  tg_access access;
  tg_task_options options = tg_default_task_options();
  affine_args args = {1, 1, EITHER};

  expect_error(tg_register_device_function("c_api_device.late", spare_cpu, spare_device, &id),
               TG_ERROR_STATE, "before tg_start", "tg_register_device_function after tg_start");
  expect_true(tg_task_device_kind(NULL) == TG_DEVICE_CPU && tg_task_device(NULL) == -1 &&
                  tg_task_stream(NULL) == NULL,
              "the queries on a NULL context: CPU, -1, NULL");
  expect_error(tg_launch_host_work(NULL, affine_work, NULL), TG_ERROR_INVALID_ARGUMENT, "ctx",
               "tg_launch_host_work(ctx NULL)");
  expect_true(tg_emulated_view(NULL, 0) == NULL && strstr(tg_last_error(), "ctx") != NULL,
              "tg_emulated_view(ctx NULL) is NULL with a message");
  expect_true(options.device_hint == TG_DEVICE_ANY && TG_DEVICE_ANY == 0,
              "tg_default_task_options: device_hint TG_DEVICE_ANY, 0");
  expect_true(TG_DEVICE_HINT(0) == 1 && TG_DEVICE_HINT(1) == 2, "TG_DEVICE_HINT(index) = index+1");

  memset(value, 0, sizeof value);
  must(tg_enter_data(value, sizeof value, &h), "tg_enter_data");
  access.data = h;
  access.mode = TG_INOUT;
  options.device_hint = TG_DEVICE_HINT(0);
  expect_error(tg_submit(cpu_add_id, &access, 1, &options, &args, sizeof args), TG_ERROR,
               "no device implementation", "a device hint for a function without a device one");
  options.device_hint = TG_DEVICE_ON_CPU;
  expect_error(tg_submit(sum_id, &access, 1, &options, NULL, 0), TG_ERROR, "no CPU implementation",
               "TG_DEVICE_ON_CPU for a device-only function");
  options.device_hint = -2;
  expect_error(tg_submit(affine_id, &access, 1, &options, &args, sizeof args),
               TG_ERROR_INVALID_ARGUMENT, "not a hint", "device_hint -2");
  /* A zeroed options struct (channel and rank set) means no device hint. */
  memset(&options, 0, sizeof options);
  options.rank = ranks - 1;
  options.channel = -1;
  must(tg_submit(cpu_add_id, &access, 1, &options, &args, sizeof args), "tg_submit (zeroed)");
  must(tg_exit_data(h), "tg_exit_data");
  expect_true(value[0] == 1 && value[N - 1] == 1, "the task with zeroed options ran");
}

/* Chains of affine tasks with CPU tasks between them, over every rank: with
 * devices, a third of the affine tasks name a device, a third the CPU
 * (TG_DEVICE_ON_CPU) and a third let the runtime choose (the implementation
 * that ran checks it is the one asked for); then a device-only sum. */
static void chains(int ranks, int devices) {
  static int64_t v[CHAINS][N];
  int64_t want[CHAINS][N], total[CHAINS], want_total;
  tg_data handles[CHAINS], totals[CHAINS];
  tg_task_options options = tg_default_task_options();
  affine_args args;
  int c, s, i, ok;

  for (c = 0; c < CHAINS; ++c) {
    for (i = 0; i < N; ++i) v[c][i] = want[c][i] = c * 1000 + i;
    total[c] = -1;
    must(tg_enter_data(v[c], sizeof v[c], &handles[c]), "tg_enter_data (chain)");
    must(tg_enter_data(&total[c], sizeof total[c], &totals[c]), "tg_enter_data (total)");
  }
  for (s = 0; s < STEPS; ++s) {
    for (c = 0; c < CHAINS; ++c) {
      tg_access a;
      const int cpu_step = s % 3 == 2, hint = (c + s) % 3;
      a.data = handles[c];
      a.mode = TG_INOUT;
      args.factor = cpu_step ? 1 : 1 + (c + s) % 3;
      args.add = c * 10 + s;
      args.expect = hint == 1 ? ON_CPU : hint == 2 && devices ? ON_DEVICE : EITHER;
      options.device_hint = args.expect == ON_CPU      ? TG_DEVICE_ON_CPU
                            : args.expect == ON_DEVICE ? TG_DEVICE_HINT((c + s) % 2)
                                                       : TG_DEVICE_ANY;
      if (cpu_step) options.device_hint = TG_DEVICE_ANY; /* cpu_add has no device one */
      /* The data moves between ranks' devices. */
      options.rank = (c + s) % ranks;
      must(tg_submit(cpu_step ? cpu_add_id : affine_id, &a, 1, &options, &args, sizeof args),
           "tg_submit (chain)");
      for (i = 0; i < N; ++i) want[c][i] = want[c][i] * args.factor + args.add;
    }
  }
  if (devices) {
    for (c = 0; c < CHAINS; ++c) {
      tg_access a[2];
      a[0].data = handles[c];
      a[0].mode = TG_IN;
      a[1].data = totals[c];
      a[1].mode = TG_OUT;
      options.rank = (c + 1) % ranks;
      options.device_hint = TG_DEVICE_ANY;
      must(tg_submit(sum_id, a, 2, &options, NULL, 0), "tg_submit (sum)");
    }
  }
  for (c = 0; c < CHAINS; ++c) {
    must(tg_exit_data(handles[c]), "tg_exit_data (chain)");
    must(tg_exit_data(totals[c]), "tg_exit_data (total)");
    ok = 1;
    want_total = 0;
    for (i = 0; i < N; ++i) {
      ok = ok && v[c][i] == want[c][i];
      want_total += want[c][i];
    }
    expect_true(ok, "a chain of device and CPU tasks gives the expected values");
    if (devices) expect_true(total[c] == want_total, "the device-only sum of a chain");
  }
}

/* A task with a device hint on every rank: it ran on that device. */
static void hints(int ranks) {
  int seen[3], r, d;
  char what[100];
  tg_data h;
  tg_access access;
  tg_task_options options = tg_default_task_options();
  for (r = 0; r < ranks; ++r) {
    for (d = 1; d >= 0; --d) {
      seen[0] = seen[1] = seen[2] = -7;
      must(tg_enter_data(seen, sizeof seen, &h), "tg_enter_data (where)");
      access.data = h;
      access.mode = TG_OUT;
      options.rank = r;
      options.device_hint = TG_DEVICE_HINT(d);
      must(tg_submit(where_id, &access, 1, &options, NULL, 0), "tg_submit (where)");
      must(tg_exit_data(h), "tg_exit_data (where)");
      snprintf(what, sizeof what, "a hint for device %d on rank %d: the task saw device %d rank %d",
               d, r, seen[0], seen[2]);
      expect_true(seen[0] == d && seen[1] == TG_DEVICE_EMULATED && seen[2] == r, what);
    }
  }
}

/* A task on the last rank that ends the job (the modes that must fail). */
static int run_failing(uint32_t function, int device_hint, int ranks) {
  int64_t value[N];
  tg_data h;
  tg_access access;
  tg_task_options options = tg_default_task_options();
  affine_args args = {1, 1, EITHER};
  memset(value, 0, sizeof value);
  must(tg_enter_data(value, sizeof value, &h), "tg_enter_data");
  access.data = h;
  access.mode = TG_INOUT;
  options.rank = ranks - 1;
  options.device_hint = device_hint;
  must(tg_submit(function, &access, 1, &options, &args, sizeof args), "tg_submit");
  tg_exit_data(h); /* the job ends during this */
  printf("c_api_device: the failing task did not end the job\n");
  tg_finish();
  return 0; /* a test failure: the test expects a non-zero exit */
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int ranks = 0, job = 1;
  const int run = strcmp(mode, "run") == 0, cpu = strcmp(mode, "cpu") == 0;
  if (!run && !cpu && strcmp(mode, "hint_missing") != 0 && strcmp(mode, "device_only") != 0 &&
      strcmp(mode, "device_fail") != 0) {
    fprintf(stderr, "usage: c_api_device run|cpu|hint_missing|device_only|device_fail\n");
    return 2;
  }
  devices_expected = strcmp(mode, "cpu") != 0 && strcmp(mode, "device_only") != 0;
  before_start();
  must(tg_start(&argc, &argv), "tg_start"); /* cluster mode: ranks > 0 serve here */
  must(tg_num_ranks(&ranks), "tg_num_ranks");
  if (strcmp(mode, "hint_missing") == 0) return run_failing(affine_id, TG_DEVICE_HINT(5), ranks);
  if (strcmp(mode, "device_only") == 0) return run_failing(where_id, 0, ranks);
  if (strcmp(mode, "device_fail") == 0) return run_failing(failing_id, 0, ranks);

  after_start(ranks);
  chains(ranks, run);
  if (run) hints(ranks);
  must(tg_finish_status(failures ? 1 : 0, &job), "tg_finish_status");
  if (failures) {
    printf("c_api_device: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("c_api_device: all %d checks passed\n", checks);
  return job;
}
