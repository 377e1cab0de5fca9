// Teams loops on every device: target teams distribute parallel for, a reduction in a teams loop,
// collapse(2), num_teams/thread_limit clauses, and a nested teams distribute + parallel for.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "self_check.h"

enum { kN = 1 << 16, kRows = 96, kCols = 80 };

static int slice_lo(int d, int count, int n) { return (int)((long long)n * d / count); }

int main(void) {
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  fprintf(stderr, "teams_loop: %d device(s)\n", ndev);

  int* x = malloc(sizeof(int) * kN);
  int* y = malloc(sizeof(int) * kN);
  long long* m = malloc(sizeof(long long) * kRows * kCols);
  if (!x || !y || !m) return 1;

  // 1. axpy-like loop, one slice per device; alpha and beta are firstprivate.
  int before = failures;
  for (int i = 0; i < kN; ++i) {
    x[i] = i % 1000;
    y[i] = 7 - i % 13;
  }
  const int alpha = 5, beta = -2;
  for (int d = 0; d < count; ++d) {
    const int lo = slice_lo(d, count, kN), hi = slice_lo(d + 1, count, kN);
    const int dev = ndev > 0 ? d : omp_get_initial_device();
#pragma omp target teams distribute parallel for device(dev) map(to                \
                                                                 : x [lo:hi - lo]) \
    map(tofrom                                                                     \
        : y [lo:hi - lo]) firstprivate(alpha, beta)
    for (int i = lo; i < hi; ++i) y[i] = alpha * x[i] + beta * y[i];
  }
  uint64_t h = CHECKSUM_START;
  for (int i = 0; i < kN; ++i) {
    check("axpy.y", i, y[i], alpha * (i % 1000) + beta * (7 - i % 13));
    h = mix(h, (uint64_t)(uint32_t)y[i]);
  }
  report("axpy", h, before);

  // 2. Reductions in a teams loop (sum and max), partial results per device summed on the host.
  before = failures;
  long long sum = 0, want_sum = 0;
  int big = -1, want_big = -1;
  for (int i = 0; i < kN; ++i) {
    want_sum += (long long)x[i] * y[i];
    if (y[i] > want_big) want_big = y[i];
  }
  for (int d = 0; d < count; ++d) {
    const int lo = slice_lo(d, count, kN), hi = slice_lo(d + 1, count, kN);
    const int dev = ndev > 0 ? d : omp_get_initial_device();
    long long part = 0;
    int part_big = -1;
#pragma omp target teams distribute parallel for device(dev) map(to : x[lo : hi - lo], \
                                                                     y[lo : hi - lo])     \
    reduction(+ : part) reduction(max : part_big)
    for (int i = lo; i < hi; ++i) {
      part += (long long)x[i] * y[i];
      if (y[i] > part_big) part_big = y[i];
    }
    sum += part;
    if (part_big > big) big = part_big;
  }
  check("reduction.sum", 0, sum, want_sum);
  check("reduction.max", 0, big, want_big);
  h = mix(mix(CHECKSUM_START, (uint64_t)sum), (uint64_t)big);
  report("reduction", h, before);

  // 3. collapse(2) over a matrix with explicit num_teams/thread_limit (kept within 2 cores, see 4).
  before = failures;
  for (int d = 0; d < count; ++d) {
    const int r0 = slice_lo(d, count, kRows), r1 = slice_lo(d + 1, count, kRows);
    const int dev = ndev > 0 ? d : omp_get_initial_device();
    long long* rows = m + (size_t)r0 * kCols;
    const int nrows = r1 - r0;
#pragma omp target teams distribute parallel for collapse(2) device(dev) num_teams(2) \
    thread_limit(1) map(from                                                          \
                        : rows [0:nrows * kCols]) firstprivate(r0)
    for (int r = 0; r < nrows; ++r)
      for (int c = 0; c < kCols; ++c) rows[r * kCols + c] = (long long)(r0 + r) * 1000 + c;
  }
  h = CHECKSUM_START;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) {
      check("collapse.m", r * kCols + c, m[r * kCols + c], (long long)r * 1000 + c);
      h = mix(h, (uint64_t)m[r * kCols + c]);
    }
  report("collapse", h, before);

  // 4. teams distribute with a nested parallel for and a per-row reduction. On a host device a
  // team is a thread, so teams x nested threads is capped (libomp warns past the core count).
  before = failures;
  long long row_sums[kRows];
  for (int d = 0; d < count; ++d) {
    const int r0 = slice_lo(d, count, kRows), r1 = slice_lo(d + 1, count, kRows);
    const int dev = ndev > 0 ? d : omp_get_initial_device();
#pragma omp target teams distribute device(dev) num_teams(2) thread_limit(1) \
    map(to                                                                   \
        : m [r0 * kCols:(r1 - r0) * kCols]) map(from                         \
                                                : row_sums [r0:r1 - r0])
    for (int r = r0; r < r1; ++r) {
      long long s = 0;
#pragma omp parallel for reduction(+ : s)
      for (int c = 0; c < kCols; ++c) s += m[r * kCols + c];
      row_sums[r] = s;
    }
  }
  h = CHECKSUM_START;
  for (int r = 0; r < kRows; ++r) {
    check("nested.row_sums", r, row_sums[r],
          (long long)r * 1000 * kCols + (long long)kCols * (kCols - 1) / 2);
    h = mix(h, (uint64_t)row_sums[r]);
  }
  report("nested", h, before);

  free(x);
  free(y);
  free(m);
  if (failures) {
    fprintf(stderr, "teams_loop: %d mismatch(es)\n", failures);
    return 1;
  }
  return 0;
}
