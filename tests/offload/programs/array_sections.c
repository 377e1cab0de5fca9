// Array sections with offsets: a[100:200] style maps on static arrays and heap pointers (the device
// must index them with the host's absolute indices), two disjoint sections of one allocation in
// one region, and a subsection of data already present (no transfer of its own).
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "self_check.h"

enum { kJobs = 8, kN = 1000 };

static int in[kN], out[kN], acc[kN];

int main(void) {
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  const int separate = ndev > 0;
  fprintf(stderr, "array_sections: %d device(s)\n", ndev);

  // 1. in[300:200] to, out[100:200] from, acc[600:300] tofrom, all in one region.
  int before = failures;
  uint64_t h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    for (int i = 0; i < kN; ++i) {
      in[i] = i * 3 + j;
      out[i] = -7;
      acc[i] = i;
    }
#pragma omp target device(dev) map(to                                              \
                                   : in [300:200]) map(from                        \
                                                       : out [100:200]) map(tofrom \
                                                                            : acc [600:300])
    {
      for (int i = 0; i < 200; ++i) out[100 + i] = in[300 + i] + 1;
      for (int i = 600; i < 900; ++i) acc[i] = acc[i] * 2 + in[300 + i % 200];
    }
    for (int i = 0; i < kN; ++i) {
      check("static.out", j * kN + i, out[i], i >= 100 && i < 300 ? (i + 200) * 3 + j + 1 : -7);
      check("static.acc", j * kN + i, acc[i],
            i >= 600 && i < 900 ? i * 2 + (300 + i % 200) * 3 + j : i);
      h = mix(h, (uint64_t)out[i]);
      h = mix(h, (uint64_t)acc[i]);
    }
  }
  report("static", h, before);

  // 2. Heap pointer sections at an offset, and two disjoint sections of one allocation.
  before = failures;
  h = CHECKSUM_START;
  double* p = malloc(sizeof(double) * kN);
  if (!p) return 1;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    for (int i = 0; i < kN; ++i) p[i] = i + 0.25 * j;
    double* low = p + 10;
    double* high = p + 700;
#pragma omp target device(dev) map(tofrom                                  \
                                   : p [250:100]) map(tofrom               \
                                                      : low [0:40]) map(to \
                                                                        : high [0:50])
    {
      for (int i = 250; i < 350; ++i) p[i] = p[i] * 2;
      for (int i = 0; i < 40; ++i) low[i] = -low[i] + high[i];
    }
    for (int i = 0; i < kN; ++i) {
      double want = i + 0.25 * j;
      if (i >= 250 && i < 350) want *= 2;
      if (i >= 10 && i < 50) want = -want + (i + 690 + 0.25 * j);
      check("heap.p", j * kN + i, (long long)(p[i] * 4), (long long)(want * 4));
      h = mix(h, (uint64_t)(long long)(p[i] * 4));
    }
  }
  free(p);
  report("heap", h, before);

  // 3. A subsection of present data: the inner tofrom moves nothing; update from brings back part.
  before = failures;
  h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    for (int i = 0; i < kN; ++i) acc[i] = i + j;
#pragma omp target data device(dev) map(to : acc [0:kN])
    {
#pragma omp target device(dev) map(tofrom : acc [100:200])
      for (int i = 100; i < 300; ++i) acc[i] += 1000;
      for (int i = 0; i < kN; ++i) {
        const int changed = !separate && i >= 100 && i < 300;
        check("nested.inner", j * kN + i, acc[i], i + j + (changed ? 1000 : 0));
      }
#pragma omp target update device(dev) from(acc [150:10])
    }
    for (int i = 0; i < kN; ++i) {
      const int changed = i >= 150 && i < 160 ? 1 : !separate && i >= 100 && i < 300;
      check("nested.acc", j * kN + i, acc[i], i + j + (changed ? 1000 : 0));
      if (i >= 150 && i < 160) h = mix(h, (uint64_t)acc[i]);
    }
  }
  report("nested", h, before);

  if (failures) {
    fprintf(stderr, "array_sections: %d mismatch(es)\n", failures);
    return 1;
  }
  return 0;
}
