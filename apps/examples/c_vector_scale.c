/* c_vector_scale: a TaskGrid program in C.
 *
 * y is split into blocks; each round scales every block of y and adds a
 * multiple of the matching block of x (y = factor * y + alpha * x), then
 * per-block sums and one total are computed as tasks. The result is fetched
 * and compared with the same computation done sequentially; the program
 * prints the checksum and "verified" and exits 0 only when they are equal.
 * All values are small integers, so every order of the sums is exact.
 *
 *   ./c_vector_scale              one rank, local threads
 *   mpiexec -n 4 ./c_vector_scale
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taskgrid/taskgrid.h"

#define NUM_BLOCKS 8
#define BLOCK_SIZE 4096
#define ROUNDS 3

static double x[NUM_BLOCKS][BLOCK_SIZE];
static double y[NUM_BLOCKS][BLOCK_SIZE];
static double block_sums[NUM_BLOCKS];
static double total;

static double ref_y[NUM_BLOCKS][BLOCK_SIZE];

/* Ends the program when a TaskGrid call fails (exit: the runtime ends the
 * other ranks too). */
static void check(int status, const char* what) {
  if (status != TG_SUCCESS) {
    fprintf(stderr, "c_vector_scale: %s failed (%d): %s\n", what, status, tg_last_error());
    exit(1);
  }
}

static double arg_double(tg_task_context* ctx) {
  double value = 0.0;
  if (tg_task_args_size(ctx) != sizeof value) {
    tg_task_fail(ctx, "expected one double argument");
    return 0.0;
  }
  memcpy(&value, tg_task_args(ctx), sizeof value);
  return value;
}

/* ---------------------------------------------------------------- tasks -- */

/* inout y_b; args: double factor */
static void scale_task(tg_task_context* ctx) {
  double* v = (double*)tg_task_data(ctx, 0);
  size_t n = tg_task_size(ctx, 0) / sizeof(double);
  double factor = arg_double(ctx);
  size_t i;
  for (i = 0; i < n; ++i) v[i] *= factor;
}

/* in x_b, inout y_b; args: double alpha */
static void axpy_task(tg_task_context* ctx) {
  const double* xb = (const double*)tg_task_data(ctx, 0);
  double* yb = (double*)tg_task_data(ctx, 1);
  size_t n = tg_task_size(ctx, 1) / sizeof(double);
  double alpha = arg_double(ctx);
  size_t i;
  if (tg_task_size(ctx, 0) != tg_task_size(ctx, 1)) {
    tg_task_fail(ctx, "x and y blocks differ in size");
    return;
  }
  for (i = 0; i < n; ++i) yb[i] += alpha * xb[i];
}

/* in y_b, out s_b (one double) */
static void block_sum_task(tg_task_context* ctx) {
  const double* v = (const double*)tg_task_data(ctx, 0);
  size_t n = tg_task_size(ctx, 0) / sizeof(double);
  double* out = (double*)tg_task_data(ctx, 1);
  double sum = 0.0;
  size_t i;
  for (i = 0; i < n; ++i) sum += v[i];
  *out = sum;
}

/* in s_0 .. s_{B-1}, out total (one double) */
static void total_task(tg_task_context* ctx) {
  size_t count = tg_task_num_data(ctx) - 1;
  double* out = (double*)tg_task_data(ctx, count);
  double sum = 0.0;
  size_t i;
  for (i = 0; i < count; ++i) sum += *(const double*)tg_task_data(ctx, i);
  *out = sum;
}

/* ----------------------------------------------------------------- main -- */

int main(int argc, char** argv) {
  uint32_t scale_id, axpy_id, block_sum_id, total_id;
  tg_data xh[NUM_BLOCKS], yh[NUM_BLOCKS], sh[NUM_BLOCKS], th;
  tg_access total_accesses[NUM_BLOCKS + 1];
  const double factor = 2.0, alpha = 3.0;
  double ref_total = 0.0;
  int ranks = 1, round, b, i, mismatches = 0;

  /* Every rank registers the same functions, in the same order, before tg_start. */
  check(tg_register_function("c_vector_scale.scale", scale_task, &scale_id), "register scale");
  check(tg_register_function("c_vector_scale.axpy", axpy_task, &axpy_id), "register axpy");
  check(tg_register_function("c_vector_scale.block_sum", block_sum_task, &block_sum_id),
        "register block_sum");
  check(tg_register_function("c_vector_scale.total", total_task, &total_id), "register total");

  check(tg_start(&argc, &argv), "tg_start"); /* ranks > 0 serve rank 0 and exit here */
  check(tg_num_ranks(&ranks), "tg_num_ranks");

  for (b = 0; b < NUM_BLOCKS; ++b) {
    for (i = 0; i < BLOCK_SIZE; ++i) {
      const int k = b * BLOCK_SIZE + i;
      x[b][i] = (double)(k % 97);
      y[b][i] = (double)(k % 13);
      ref_y[b][i] = y[b][i];
    }
    check(tg_enter_data(x[b], sizeof x[b], &xh[b]), "enter x");
    check(tg_enter_data(y[b], sizeof y[b], &yh[b]), "enter y");
    check(tg_enter_data(&block_sums[b], sizeof block_sums[b], &sh[b]), "enter block sum");
  }
  check(tg_enter_data(&total, sizeof total, &th), "enter total");

  for (round = 0; round < ROUNDS; ++round) {
    for (b = 0; b < NUM_BLOCKS; ++b) {
      tg_task_options options = tg_default_task_options();
      tg_access scale_access[1];
      tg_access axpy_access[2];
      scale_access[0].data = yh[b];
      scale_access[0].mode = TG_INOUT;
      axpy_access[0].data = xh[b];
      axpy_access[0].mode = TG_IN;
      axpy_access[1].data = yh[b];
      axpy_access[1].mode = TG_INOUT;
      options.rank = (b + round) % ranks; /* move blocks between ranks */
      check(tg_submit(scale_id, scale_access, 1, &options, &factor, sizeof factor), "submit scale");
      check(tg_submit(axpy_id, axpy_access, 2, NULL, &alpha, sizeof alpha), "submit axpy");
    }
  }
  for (b = 0; b < NUM_BLOCKS; ++b) {
    tg_access sum_access[2];
    sum_access[0].data = yh[b];
    sum_access[0].mode = TG_IN;
    sum_access[1].data = sh[b];
    sum_access[1].mode = TG_OUT;
    check(tg_submit(block_sum_id, sum_access, 2, NULL, NULL, 0), "submit block_sum");
    total_accesses[b].data = sh[b];
    total_accesses[b].mode = TG_IN;
  }
  total_accesses[NUM_BLOCKS].data = th;
  total_accesses[NUM_BLOCKS].mode = TG_OUT;
  check(tg_submit(total_id, total_accesses, NUM_BLOCKS + 1, NULL, NULL, 0), "submit total");

  for (b = 0; b < NUM_BLOCKS; ++b) {
    check(tg_exit_data(yh[b]), "exit y");
    check(tg_exit_data(sh[b]), "exit block sum");
    check(tg_release(xh[b]), "release x");
  }
  check(tg_exit_data(th), "exit total");

  /* The same computation, sequentially. */
  for (round = 0; round < ROUNDS; ++round)
    for (b = 0; b < NUM_BLOCKS; ++b)
      for (i = 0; i < BLOCK_SIZE; ++i) ref_y[b][i] = factor * ref_y[b][i] + alpha * x[b][i];
  for (b = 0; b < NUM_BLOCKS; ++b) {
    double ref_sum = 0.0;
    for (i = 0; i < BLOCK_SIZE; ++i) {
      ref_sum += ref_y[b][i];
      if (y[b][i] != ref_y[b][i]) ++mismatches;
    }
    if (block_sums[b] != ref_sum) ++mismatches;
    ref_total += ref_sum;
  }

  printf("c_vector_scale: %d ranks, %d blocks of %d doubles, %d rounds\n", ranks, NUM_BLOCKS,
         BLOCK_SIZE, ROUNDS);
  printf("checksum: %.1f (sequential: %.1f)\n", total, ref_total);
  if (mismatches != 0 || total != ref_total) {
    printf("MISMATCH: %d elements or block sums differ\n", mismatches);
    tg_finish();
    return 1;
  }
  printf("verified\n");
  return tg_finish();
}
