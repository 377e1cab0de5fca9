/* c_first_program: the user guide's first program in C. One task scales a
 * vector, a second one sums it; the program checks the sum and exits 0 only
 * when it is right.
 *
 *   mpiexec.mpich -n 2 build/bin/c_first_program
 */
#include <stdio.h>
#include <string.h>

#include "taskgrid/taskgrid.h"

#define N 1000

static void scale(tg_task_context* ctx) {
  double* v = (double*)tg_task_data(ctx, 0);
  size_t n = tg_task_size(ctx, 0) / sizeof(double);
  double factor;
  size_t i;
  memcpy(&factor, tg_task_args(ctx), sizeof factor);
  for (i = 0; i < n; ++i) v[i] *= factor;
}

static void sum(tg_task_context* ctx) {
  const double* v = (const double*)tg_task_data(ctx, 0);
  size_t n = tg_task_size(ctx, 0) / sizeof(double);
  double* total = (double*)tg_task_data(ctx, 1);
  size_t i;
  *total = 0.0;
  for (i = 0; i < n; ++i) *total += v[i];
}

/* Every call returns a status; tg_last_error() says what went wrong. */
static int check(int status, const char* call) {
  if (status != TG_SUCCESS) fprintf(stderr, "c_first_program: %s: %s\n", call, tg_last_error());
  return status;
}

int main(int argc, char** argv) {
  static double v[N];
  double total = 0.0, factor = 2.0;
  uint32_t scale_id, sum_id;
  tg_data vh, th;
  tg_access scale_access[1], sum_access[2];
  int i, job_status = 1;

  for (i = 0; i < N; ++i) v[i] = 1.0;
  /* Every rank registers the same functions under the same names, before tg_start. */
  if (check(tg_register_function("scale", scale, &scale_id), "tg_register_function") ||
      check(tg_register_function("sum", sum, &sum_id), "tg_register_function") ||
      check(tg_start(&argc, &argv), "tg_start")) /* cluster mode: ranks > 0 serve here */
    return 1;

  if (check(tg_enter_data(v, sizeof v, &vh), "tg_enter_data") ||
      check(tg_enter_data(&total, sizeof total, &th), "tg_enter_data")) {
    tg_finish_status(1, &job_status); /* the job's status: the largest of the ranks' */
    return job_status;
  }
  scale_access[0].data = vh;
  scale_access[0].mode = TG_INOUT;
  sum_access[0].data = vh;
  sum_access[0].mode = TG_IN;
  sum_access[1].data = th;
  sum_access[1].mode = TG_OUT;
  check(tg_submit(scale_id, scale_access, 1, NULL, &factor, sizeof factor), "tg_submit");
  check(tg_submit(sum_id, sum_access, 2, NULL, NULL, 0), "tg_submit");
  check(tg_exit_data(th), "tg_exit_data"); /* waits for the sum and copies it into total */
  check(tg_exit_data(vh), "tg_exit_data");

  printf("c_first_program: sum = %.1f (expected %.1f)\n", total, 2.0 * N);
  if (check(tg_finish_status(total == 2.0 * N ? 0 : 1, &job_status), "tg_finish_status")) return 1;
  return job_status;
}
