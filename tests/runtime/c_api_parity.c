/* The C API's calls that mirror the rest of the C++ API (taskgrid.h): modes
 * and tg_run, tg_finish_status, tg_is_spmd, tg_owner, tg_enter_data_owner,
 * and the channel and priority task options; results and error codes.
 *
 *   c_api_parity run cluster|spmd    tg_run: main_fn returns a status per
 *                                    rank; every rank checks the job status
 *   c_api_parity start spmd          tg_start_mode + tg_finish_status
 *   c_api_parity start cluster       the same; rank 0 ends with job status 3
 *                                    (so the job's exit status is 3)
 *
 * Every rank that ran its checks prints "rank R: all N checks passed" and
 * the process exits 0 (but "start cluster": 3); a failed check exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskgrid/taskgrid.h"

#define C_CHECKS_PROGRAM "c_api_parity"
#include "c_checks.h"

/* ---------------------------------------------------------------- tasks -- */

typedef struct {
  long long factor;
  long long add;
} affine_args;

/* inout long long: v = v * factor + add (the order of a chain shows). */
static void affine_task(tg_task_context* ctx) {
  affine_args args;
  long long* v = (long long*)tg_task_data(ctx, 0);
  if (!v || tg_task_args_size(ctx) != sizeof args) {
    tg_task_fail(ctx, "affine_task: unexpected context");
    return;
  }
  memcpy(&args, tg_task_args(ctx), sizeof args);
  *v = *v * args.factor + args.add;
}

/* out long long: v = the argument (writes all of it, reads nothing). */
static void set_task(tg_task_context* ctx) {
  long long* v = (long long*)tg_task_data(ctx, 0);
  if (!v || tg_task_args_size(ctx) != sizeof *v) {
    tg_task_fail(ctx, "set_task: unexpected context");
    return;
  }
  memcpy(v, tg_task_args(ctx), sizeof *v);
}

static uint32_t affine_id, set_id;
static int job_ranks = 0; /* set by parity_main */

/* ------------------------------------------------------------- checks -- */

#define CHAINS 6
#define STEPS 8

/* What every mode checks once started; `spmd` is the mode asked for. */
static void exercise(int spmd) {
  int rank = -1, ranks = 0, is_spmd = -1, owner = -7, c, s;
  long long value = 1, chain[CHAINS], want[CHAINS];
  tg_data h, placed, bad, unknown, zero;
  tg_data handles[CHAINS];
  tg_access access;
  tg_task_options options = tg_default_task_options();
  affine_args args;

  must(tg_rank(&rank), "tg_rank");
  must(tg_num_ranks(&ranks), "tg_num_ranks");

  /* Mode. */
  must(tg_is_spmd(&is_spmd), "tg_is_spmd");
  expect_true(is_spmd == spmd, "tg_is_spmd says the mode asked for");
  expect_error(tg_is_spmd(NULL), TG_ERROR_INVALID_ARGUMENT, "NULL", "tg_is_spmd(NULL)");
  expect_error(tg_start_mode(NULL, NULL, TG_MODE_SPMD), TG_ERROR_STATE, "already started",
               "tg_start_mode after start");

  /* Default options. */
  expect_true(options.rank == -1 && options.cost == 0.0 && options.name == NULL &&
                  options.channel == -1 && options.priority == 0,
              "tg_default_task_options: rank -1, cost 0, name NULL, channel -1, priority 0");

  /* Owners. */
  must(tg_enter_data(&value, sizeof value, &h), "tg_enter_data");
  must(tg_owner(h, &owner), "tg_owner");
  expect_true(owner >= 0 && owner < ranks, "tg_owner of a handle is a rank of the job");
  if (!spmd) expect_true(owner == 0, "cluster mode: the data starts on rank 0");
  must(tg_enter_data_owner(&value, sizeof value, ranks - 1, &placed), "tg_enter_data_owner");
  must(tg_owner(placed, &owner), "tg_owner (placed)");
  expect_true(owner == ranks - 1, "tg_owner gives the owner given to tg_enter_data_owner");
  expect_error(tg_enter_data_owner(&value, sizeof value, -2, &bad), TG_ERROR_INVALID_ARGUMENT,
               "negative", "tg_enter_data_owner(owner -2)");
  expect_true(bad.id == 0, "a failed tg_enter_data_owner stores handle 0");
  expect_error(tg_enter_data_owner(&value, sizeof value, ranks, &bad), TG_ERROR, "outside",
               "tg_enter_data_owner(owner = ranks)");
  /* map(alloc:): a task writes it first; fetched into the host buffer. */
  {
    long long filled = -1, set = 41;
    tg_data allocated;
    must(tg_enter_data_alloc(&filled, sizeof filled, ranks - 1, &allocated), "tg_enter_data_alloc");
    must(tg_owner(allocated, &owner), "tg_owner (alloc)");
    expect_true(owner == ranks - 1, "tg_enter_data_alloc places the data on its owner");
    tg_task_options write_all = tg_default_task_options();
    write_all.rank = ranks - 1;
    tg_access out_access = {allocated, TG_OUT};
    must(tg_submit(set_id, &out_access, 1, &write_all, &set, sizeof set), "tg_submit (alloc)");
    must(tg_fetch(allocated), "tg_fetch (alloc)");
    expect_true(filled == 41 || (spmd && rank != ranks - 1),
                "tg_enter_data_alloc's data is what its first task wrote");
    expect_error(tg_enter_data_alloc(&filled, sizeof filled, -2, &bad), TG_ERROR_INVALID_ARGUMENT,
                 "neither", "tg_enter_data_alloc(owner -2)");
    expect_true(bad.id == 0, "a failed tg_enter_data_alloc stores handle 0");
  }
  unknown.id = 12345;
  owner = 5;
  expect_error(tg_owner(unknown, &owner), TG_ERROR, NULL, "tg_owner(unknown handle)");
  expect_true(owner == -1, "a failed tg_owner stores -1");
  zero.id = 0;
  expect_error(tg_owner(zero, &owner), TG_ERROR_INVALID_ARGUMENT, "handle 0", "tg_owner(handle 0)");
  expect_error(tg_owner(h, NULL), TG_ERROR_INVALID_ARGUMENT, "NULL", "tg_owner(rank NULL)");

  /* A task on a channel (it does not communicate: it completes as any other),
   * and a channel that does not exist. */
  access.data = h;
  access.mode = TG_INOUT;
  args.factor = 3;
  args.add = 1;
  options.channel = 0;
  must(tg_submit(affine_id, &access, 1, &options, &args, sizeof args), "tg_submit on channel 0");
  options.channel = 9999;
  expect_error(tg_submit(affine_id, &access, 1, &options, &args, sizeof args), TG_ERROR, "channel",
               "tg_submit on channel 9999");
  options.channel = -1;

  /* Chains with priorities of both signs: results as in submission order. */
  for (c = 0; c < CHAINS; ++c) {
    chain[c] = c + 1;
    want[c] = c + 1;
    must(tg_enter_data(&chain[c], sizeof chain[c], &handles[c]), "tg_enter_data (chain)");
  }
  for (s = 0; s < STEPS; ++s) {
    for (c = 0; c < CHAINS; ++c) {
      tg_access a;
      a.data = handles[c];
      a.mode = TG_INOUT;
      options.priority = (c * 5 + s * 3) % 7 - 3;
      options.rank = (c + s) % ranks;
      args.factor = 1 + (c + s) % 3;
      args.add = c * 10 + s;
      must(tg_submit(affine_id, &a, 1, &options, &args, sizeof args), "tg_submit (priority)");
      want[c] = want[c] * args.factor + args.add;
    }
  }
  /* A rank outside the job: refused on every rank alike. */
  expect_error(tg_fetch_to(handles[0], ranks), TG_ERROR, "is not a rank of this job",
               "tg_fetch_to a rank outside the job");
  for (c = 0; c < CHAINS; ++c) {
    must(tg_owner(handles[c], &owner), "tg_owner (chain)");
    if (spmd && c % 2 == 0) {
      /* spmd: into every rank's buffer, or into the last rank's. */
      if (c % 4 == 0) {
        must(tg_exit_data_to(handles[c], TG_ALL_RANKS), "tg_exit_data_to (all ranks)");
        expect_true(chain[c] == want[c], "a chain gathered into every rank's buffer");
      } else {
        must(tg_fetch_to(handles[c], ranks - 1), "tg_fetch_to (last rank)");
        if (rank == ranks - 1) expect_true(chain[c] == want[c], "a chain fetched to the last rank");
        must(tg_release(handles[c]), "tg_release (chain)");
      }
      continue;
    }
    must(tg_exit_data(handles[c]), "tg_exit_data (chain)");
    /* spmd: the latest version lands on the owner only. */
    if (!spmd || owner == rank) expect_true(chain[c] == want[c], "a chain with priorities");
  }
  must(tg_owner(h, &owner), "tg_owner (h)");
  must(tg_exit_data(h), "tg_exit_data (h)");
  if (!spmd || owner == rank) expect_true(value == 4, "the channel-0 task ran: 1*3+1 = 4");
  must(tg_release(placed), "tg_release (placed)");
}

static void report(int rank) {
  printf("c_api_parity: rank %d: %s%d checks passed\n", rank, failures ? "NOT all " : "all ",
         checks - failures);
  fflush(stdout);
}

/* tg_run's main: returns rank + 1 (cluster: only rank 0 runs it: 1). */
static int parity_main(int argc, char** argv, void* user) {
  int rank = -1, job = 0;
  const int spmd = *(const int*)user;
  (void)argc;
  (void)argv;
  exercise(spmd);
  must(tg_rank(&rank), "tg_rank");
  must(tg_num_ranks(&job_ranks), "tg_num_ranks");
  expect_error(tg_run(0, NULL, parity_main, user, TG_MODE_CLUSTER, &job), TG_ERROR_STATE,
               "already started", "tg_run inside tg_run");
  return failures ? 100 : rank + 1;
}

int main(int argc, char** argv) {
  int spmd, rank = -1, ranks = 0, job = -1;
  tg_mode mode;
  const char* how = argc > 2 ? argv[1] : "";
  if (argc != 3 || (strcmp(how, "run") != 0 && strcmp(how, "start") != 0) ||
      (strcmp(argv[2], "cluster") != 0 && strcmp(argv[2], "spmd") != 0)) {
    fprintf(stderr, "usage: c_api_parity run|start cluster|spmd\n");
    return 2;
  }
  spmd = strcmp(argv[2], "spmd") == 0;
  mode = spmd ? TG_MODE_SPMD : TG_MODE_CLUSTER;
  must(tg_register_function("c_api_parity.affine", affine_task, &affine_id), "register");
  must(tg_register_function("c_api_parity.set", set_task, &set_id), "register set");

  /* Before the start: bad arguments and calls that need a running runtime. */
  expect_error(tg_is_spmd(&spmd), TG_ERROR_STATE, "tg_start", "tg_is_spmd before start");
  expect_error(tg_start_mode(NULL, NULL, (tg_mode)7), TG_ERROR_INVALID_ARGUMENT, "mode 7",
               "tg_start_mode(mode 7)");
  expect_error(tg_run(argc, argv, NULL, NULL, mode, &job), TG_ERROR_INVALID_ARGUMENT, "NULL",
               "tg_run(main_fn NULL)");
  expect_error(tg_run(argc, argv, parity_main, &spmd, (tg_mode)-1, &job), TG_ERROR_INVALID_ARGUMENT,
               "tg_run: mode", "tg_run(mode -1)");
  expect_error(tg_finish_status(0, &job), TG_ERROR_STATE, "tg_start", "tg_finish_status first");

  if (strcmp(how, "run") == 0) {
    must(tg_run(argc, argv, parity_main, &spmd, mode, &job), "tg_run");
    /* Every rank gets the job's status: the largest main_fn returned (spmd:
     * the last rank's, rank + 1; cluster: rank 0's, 1). */
    expect_true(job == (spmd ? job_ranks : 1), "tg_run's job status");
    expect_error(tg_num_ranks(&ranks), TG_ERROR_STATE, "tg_start", "tg_num_ranks after tg_run");
    printf("c_api_parity: job status %d\n", job);
    report(-1);
    return failures ? 1 : 0;
  }

  must(tg_start_mode(&argc, &argv, mode), "tg_start_mode"); /* cluster: ranks > 0 serve */
  exercise(spmd);
  must(tg_rank(&rank), "tg_rank");
  must(tg_num_ranks(&ranks), "tg_num_ranks");
  report(rank);
  must(tg_finish_status(failures ? 100 : (spmd ? rank + 2 : 3), &job), "tg_finish_status");
  printf("c_api_parity: job status %d\n", job);
  if (failures) return 1;
  if (spmd) return job == ranks + 1 ? 0 : 1; /* the largest rank + 2 */
  return job;
}
