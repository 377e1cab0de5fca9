/* Tests of the C API's error reporting (include/taskgrid/taskgrid.h).
 *
 *   c_api_errors            bad calls return non-zero codes with a message,
 *                           and the runtime keeps working after them; exit 0
 *                           and "all N checks passed" when every check holds.
 *   c_api_errors fail       a task calls tg_task_fail: the job must end
 *                           (non-zero) with a message naming the task and rank.
 *   c_api_errors fail_named the same, submitted with tg_task_options.name:
 *                           the message names the task by that name.
 *   c_api_errors bad_index  a task asks for a buffer it does not have: the
 *                           same, with the index in the message.
 *
 * The failing modes place the task on the last rank; their expected output is
 * checked by c_api.cmake.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskgrid/taskgrid.h"

#define C_CHECKS_PROGRAM "c_api_errors"
#include "c_checks.h"

/* A call that must fail with `expected` (any error code when 0). */
static void expect_any_error(int status, int expected, const char* what) {
  expect_error(status, expected, NULL, what);
}

/* ---------------------------------------------------------------- tasks -- */

/* inout int; args: int increment. Checks what the context reports. */
static void add_task(tg_task_context* ctx) {
  int increment = 0;
  int* value = (int*)tg_task_data(ctx, 0);
  if (tg_task_num_data(ctx) != 1 || tg_task_size(ctx, 0) != sizeof(int) ||
      tg_task_args_size(ctx) != sizeof increment || tg_task_rank(ctx) < 0) {
    tg_task_fail(ctx, "add_task: unexpected context");
    return;
  }
  memcpy(&increment, tg_task_args(ctx), sizeof increment);
  *value += increment;
}

static void other_task(tg_task_context* ctx) { (void)ctx; }

static void failing_task(tg_task_context* ctx) {
  tg_task_fail(ctx, "deliberate failure from C");
  tg_task_fail(ctx, "a second message that must not replace the first");
}

static void bad_index_task(tg_task_context* ctx) {
  if (tg_task_data(ctx, 5) != NULL) {
    tg_task_fail(ctx, "tg_task_data(5) did not return NULL");
    return;
  }
  /* The task is already failed; returning ends the job. */
}

/* ----------------------------------------------------------------- modes -- */

static int run_failing(uint32_t function, const char* task_name) {
  int value = 0, ranks = 1;
  tg_data h;
  tg_access access;
  tg_task_options options = tg_default_task_options();
  must(tg_num_ranks(&ranks), "tg_num_ranks");
  must(tg_enter_data(&value, sizeof value, &h), "tg_enter_data");
  access.data = h;
  access.mode = TG_INOUT;
  options.rank = ranks - 1;
  options.name = task_name;
  must(tg_submit(function, &access, 1, &options, NULL, 0), "tg_submit");
  tg_wait_all(); /* the job ends during this */
  printf("c_api_errors: the failing task did not end the job\n");
  tg_finish();
  return 0; /* reported as a test failure: the test expects a non-zero exit */
}

static int run_errors(uint32_t add_id) {
  int value = 40, ranks = 0, rank = -1, increment = 1, r;
  uint32_t late_id = 1;
  tg_data h, unknown, zero, other;
  tg_access access, bad[2];
  tg_task_options options;

  expect_any_error(tg_start(NULL, NULL), TG_ERROR_STATE, "tg_start twice");
  expect_any_error(tg_register_function("c_api_errors.late", other_task, &late_id), TG_ERROR_STATE,
                   "tg_register_function after tg_start");
  expect_any_error(tg_rank(NULL), TG_ERROR_INVALID_ARGUMENT, "tg_rank(NULL)");
  expect_any_error(tg_num_ranks(NULL), TG_ERROR_INVALID_ARGUMENT, "tg_num_ranks(NULL)");
  must(tg_rank(&rank), "tg_rank");
  must(tg_num_ranks(&ranks), "tg_num_ranks");
  expect_true(rank == 0 && ranks >= 1, "rank 0 runs the program");

  /* Data. */
  expect_any_error(tg_enter_data(NULL, 8, &h), TG_ERROR_INVALID_ARGUMENT, "tg_enter_data(NULL, 8)");
  expect_true(h.id == 0, "a failed tg_enter_data stores handle 0");
  expect_any_error(tg_enter_data(&value, sizeof value, NULL), TG_ERROR_INVALID_ARGUMENT,
                   "tg_enter_data(out NULL)");
  must(tg_enter_data(&value, sizeof value, &h), "tg_enter_data");
  expect_true(h.id != 0, "tg_enter_data gives a non-zero handle");
  unknown.id = 987654321u;
  zero.id = 0;
  expect_any_error(tg_fetch(unknown), 0, "tg_fetch(unknown handle)");
  expect_any_error(tg_wait(unknown), 0, "tg_wait(unknown handle)");
  expect_any_error(tg_exit_data(unknown), 0, "tg_exit_data(unknown handle)");
  expect_any_error(tg_release(unknown), 0, "tg_release(unknown handle)");
  expect_any_error(tg_fetch(zero), TG_ERROR_INVALID_ARGUMENT, "tg_fetch(handle 0)");
  expect_any_error(tg_release(zero), TG_ERROR_INVALID_ARGUMENT, "tg_release(handle 0)");
  must(tg_enter_data(&increment, sizeof increment, &other), "tg_enter_data other");
  must(tg_release(other), "tg_release other");
  expect_any_error(tg_release(other), 0, "tg_release twice");
  expect_any_error(tg_fetch(other), 0, "tg_fetch after tg_release");

  /* Submit. */
  access.data = h;
  access.mode = TG_INOUT;
  expect_any_error(tg_submit(0x7fff1234u, &access, 1, NULL, &increment, sizeof increment),
                   TG_ERROR_INVALID_ARGUMENT, "tg_submit(unregistered function id)");
  expect_any_error(tg_submit(add_id, NULL, 1, NULL, &increment, sizeof increment),
                   TG_ERROR_INVALID_ARGUMENT, "tg_submit(accesses NULL, 1)");
  expect_any_error(tg_submit(add_id, &access, 1, NULL, NULL, sizeof increment),
                   TG_ERROR_INVALID_ARGUMENT, "tg_submit(args NULL, 4)");
  bad[0].data = h;
  bad[0].mode = (tg_access_mode)7;
  expect_any_error(tg_submit(add_id, bad, 1, NULL, &increment, sizeof increment),
                   TG_ERROR_INVALID_ARGUMENT, "tg_submit(mode 7)");
  bad[0].data = unknown;
  bad[0].mode = TG_IN;
  expect_any_error(tg_submit(add_id, bad, 1, NULL, &increment, sizeof increment), 0,
                   "tg_submit(unknown handle)");
  bad[0].data = zero;
  expect_any_error(tg_submit(add_id, bad, 1, NULL, &increment, sizeof increment),
                   TG_ERROR_INVALID_ARGUMENT, "tg_submit(handle 0)");
  bad[0].data = h;
  bad[0].mode = TG_OUT;
  bad[1].data = h;
  bad[1].mode = TG_INOUT;
  expect_any_error(tg_submit(add_id, bad, 2, NULL, &increment, sizeof increment), 0,
                   "tg_submit(two writes of one handle)");
  options = tg_default_task_options();
  options.rank = ranks + 3;
  expect_any_error(tg_submit(add_id, &access, 1, &options, &increment, sizeof increment), 0,
                   "tg_submit(rank hint outside the job)");
  expect_true(tg_task_data(NULL, 0) == NULL && tg_last_error()[0] != '\0',
              "tg_task_data(NULL) returns NULL with a message");
  expect_true(tg_task_rank(NULL) == -1, "tg_task_rank(NULL) is -1");
  tg_task_fail(NULL, "ignored");
  expect_true(tg_last_error()[0] != '\0', "tg_task_fail(NULL) sets a message");

  /* The runtime still works after all that: two tasks on every rank. */
  options = tg_default_task_options();
  for (r = 0; r < 2 * ranks; ++r) {
    options.rank = r % ranks;
    must(tg_submit(add_id, &access, 1, &options, &increment, sizeof increment), "tg_submit");
  }
  must(tg_wait(h), "tg_wait");
  must(tg_exit_data(h), "tg_exit_data");
  expect_true(value == 40 + 2 * ranks, "the valid tasks ran after the failed calls");
  must(tg_wait_all(), "tg_wait_all");

  must(tg_finish(), "tg_finish");
  expect_any_error(tg_finish(), TG_ERROR_STATE, "tg_finish twice");
  expect_any_error(tg_submit(add_id, &access, 1, NULL, &increment, sizeof increment),
                   TG_ERROR_STATE, "tg_submit after tg_finish");
  expect_any_error(tg_enter_data(&value, sizeof value, &h), TG_ERROR_STATE,
                   "tg_enter_data after tg_finish");

  if (failures) {
    printf("c_api_errors: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("c_api_errors: all %d checks passed\n", checks);
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "errors";
  uint32_t add_id = 0, fail_id = 0, bad_index_id = 0, id = 0, again = 0;
  int rank = 0;

  /* Before tg_start (every rank runs these). */
  expect_any_error(tg_rank(&rank), TG_ERROR_STATE, "tg_rank before tg_start");
  expect_any_error(tg_wait_all(), TG_ERROR_STATE, "tg_wait_all before tg_start");
  expect_any_error(tg_register_function(NULL, add_task, &id), TG_ERROR_INVALID_ARGUMENT,
                   "tg_register_function(name NULL)");
  expect_any_error(tg_register_function("", add_task, &id), TG_ERROR_INVALID_ARGUMENT,
                   "tg_register_function(name \"\")");
  expect_any_error(tg_register_function("c_api_errors.x", NULL, &id), TG_ERROR_INVALID_ARGUMENT,
                   "tg_register_function(fn NULL)");
  expect_any_error(tg_register_function("c_api_errors.x", add_task, NULL),
                   TG_ERROR_INVALID_ARGUMENT, "tg_register_function(id NULL)");
  must(tg_register_function("c_api_errors.add", add_task, &add_id), "register add");
  must(tg_register_function("c_api_errors.add", add_task, &again), "register add again");
  expect_true(add_id != 0 && again == add_id, "registering again gives the same id");
  expect_any_error(tg_register_function("c_api_errors.add_alias", add_task, &id),
                   TG_ERROR_INVALID_ARGUMENT, "one function under two names");
  expect_any_error(tg_register_function("c_api_errors.add", other_task, &id),
                   TG_ERROR_INVALID_ARGUMENT, "two functions under one name");
  must(tg_register_function("c_api_errors.other", other_task, &id), "register other");
  expect_true(id != add_id, "distinct functions get distinct ids");
  must(tg_register_function("c_api_errors.failing_task", failing_task, &fail_id), "register fail");
  must(tg_register_function("c_api_errors.bad_index_task", bad_index_task, &bad_index_id),
       "register bad_index");

  must(tg_start(&argc, &argv), "tg_start");
  if (strcmp(mode, "fail") == 0) return run_failing(fail_id, NULL);
  if (strcmp(mode, "fail_named") == 0) return run_failing(fail_id, "named C task");
  if (strcmp(mode, "bad_index") == 0) return run_failing(bad_index_id, NULL);
  if (strcmp(mode, "errors") != 0) {
    fprintf(stderr, "usage: c_api_errors [errors|fail|fail_named|bad_index]\n");
    tg_finish();
    return 2;
  }
  return run_errors(add_id);
}
