// target update to/from inside target data regions: whole arrays, partial sections, strided
// sections, rows of a 2-D array, and the if clause. With separate device memory only the updated
// elements may change; in host fallback everything is shared. The checksums use values that are the
// same either way.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#include "self_check.h"

enum { kJobs = 6, kN = 1024, kRows = 16, kCols = 32, kGRows = 12, kGCols = 10 };

static int a[kJobs][kN], b[kJobs][kN];
static int m[kRows][kCols];
static int grids[kJobs][kGRows][kGCols];

int main(void) {
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  const int separate = ndev > 0;
  fprintf(stderr, "target_update: %d device(s)\n", ndev);

  // 1. Whole and partial updates of 1-D arrays, one pair of arrays per job.
  int before = failures;
  uint64_t h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    int* x = a[j];
    int* y = b[j];
    for (int i = 0; i < kN; ++i) {
      x[i] = j * 100000 + i;
      y[i] = -1;
    }
#pragma omp target data device(dev) map(to : x [0:kN]) map(alloc : y [0:kN])
    {
#pragma omp target device(dev)
      for (int i = 0; i < kN; ++i) y[i] = x[i] * 2;
#pragma omp target update device(dev) from(y [0:kN])
      for (int i = 0; i < kN; ++i) check("whole.y", j * kN + i, y[i], (j * 100000 + i) * 2);

      // Host changes all of x but sends only x[100:50]; the device copies x into y.
      for (int i = 0; i < kN; ++i) x[i] += 7;
#pragma omp target update device(dev) to(x [100:50])
#pragma omp target device(dev)
      for (int i = 0; i < kN; ++i) y[i] = x[i];
#pragma omp target update device(dev) from(y [0:kN])
      for (int i = 0; i < kN; ++i) {
        const int sent = (i >= 100 && i < 150) || !separate;
        check("partial_to.y", j * kN + i, y[i], j * 100000 + i + (sent ? 7 : 0));
      }

      // The device rewrites all of y but only y[10:20] comes back.
      for (int i = 0; i < kN; ++i) y[i] = -5;
#pragma omp target device(dev)
      for (int i = 0; i < kN; ++i) y[i] = i * 3;
#pragma omp target update device(dev) from(y [10:20])
      for (int i = 0; i < kN; ++i) {
        const int back = (i >= 10 && i < 30) || !separate;
        check("partial_from.y", j * kN + i, y[i], back ? i * 3 : -5);
      }

      // Full round trip so that both sides agree again.
#pragma omp target update device(dev) to(x [0:kN])
#pragma omp target device(dev)
      for (int i = 0; i < kN; ++i) y[i] = x[i] - i;
#pragma omp target update device(dev) from(y [0:kN])
    }
    for (int i = 0; i < kN; ++i) {
      check("final.y", j * kN + i, y[i], j * 100000 + 7);
      h = mix(h, (uint64_t)y[i]);
    }
  }
  report("sections", h, before);

  // 2. Strided (non-contiguous) update of a 2-D block: only even rows x even columns travel.
  // A 1-D stride (x[0:n:2]) is not used: clang 16 copies it as if contiguous.
  before = failures;
  h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    int(*g)[kGCols] = grids[j];
    for (int r = 0; r < kGRows; ++r)
      for (int c = 0; c < kGCols; ++c) g[r][c] = r * kGCols + c + 1;
#pragma omp target data device(dev) map(to : g [0:kGRows] [0:kGCols])
    {
#pragma omp target device(dev)
      for (int r = 0; r < kGRows; ++r)
        for (int c = 0; c < kGCols; ++c) g[r][c] = -g[r][c];
#pragma omp target update device(dev) from(g [0:kGRows / 2:2] [0:kGCols / 2:2])
    }
    for (int r = 0; r < kGRows; ++r)
      for (int c = 0; c < kGCols; ++c) {
        const int v = r * kGCols + c + 1, picked = r % 2 == 0 && c % 2 == 0;
        check("strided.g", (j * kGRows + r) * kGCols + c, g[r][c], picked || !separate ? -v : v);
        if (picked) h = mix(h, (uint64_t)g[r][c]);
      }
  }
  report("strided", h, before);

  // 3. Rows of a 2-D array, rows split over the devices, and update if(false) does nothing.
  before = failures;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) m[r][c] = r * kCols + c;
  for (int d = 0; d < count; ++d) {
    const int dev = ndev > 0 ? d : omp_get_initial_device();
    const int r0 = kRows * d / count, nr = kRows * (d + 1) / count - r0;
    if (nr == 0) continue;
    int no = 0;
#pragma omp target data device(dev) map(to : m [r0:nr] [0:kCols])
    {
#pragma omp target device(dev) firstprivate(r0, nr)
      for (int r = r0; r < r0 + nr; ++r)
        for (int c = 0; c < kCols; ++c) m[r][c] += 1000;
#pragma omp target update device(dev) from(m [r0:nr] [0:kCols]) if (no)
      for (int r = r0; r < r0 + nr; ++r)
        for (int c = 0; c < kCols; ++c)
          check("rows.skipped", r * kCols + c, m[r][c], r * kCols + c + (separate ? 0 : 1000));
#pragma omp target update device(dev) from(m [r0:nr] [0:kCols]) if (!no)
    }
  }
  h = CHECKSUM_START;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) {
      check("rows.m", r * kCols + c, m[r][c], r * kCols + c + 1000);
      h = mix(h, (uint64_t)m[r][c]);
    }
  report("rows", h, before);

  if (failures) {
    fprintf(stderr, "target_update: %d mismatch(es)\n", failures);
    return 1;
  }
  return 0;
}
