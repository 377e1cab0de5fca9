// declare target globals (a scalar, an array, an initialised table) and a declare target function:
// device copies initialised from the image, written by host updates and by device code, brought
// back with target update from, and independent on each device.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#include "self_check.h"

enum { kJobs = 8, kG = 256 };

#pragma omp declare target
int g_scalar;
int g_array[kG];
const int g_table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
static int scale(int v) { return v * 3 + g_scalar + g_table[v & 7]; }
#pragma omp end declare target

static int host_scale(int v, int s) {
  static const int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
  return v * 3 + s + table[v & 7];
}

int main(void) {
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  const int separate = ndev > 0;
  fprintf(stderr, "declare_target: %d device(s)\n", ndev);

  // 1. The initialised table is there on every device before any update.
  int before = failures;
  for (int d = 0; d < count; ++d) {
    const int dev = ndev > 0 ? d : omp_get_initial_device();
    int sum = -1;
#pragma omp target device(dev) map(from : sum)
    {
      sum = 0;
      for (int i = 0; i < 8; ++i) sum = sum * 10 + g_table[i];
    }
    check("init.sum", d, sum, 31415926);
    check("init.present", d, omp_target_is_present(g_array, dev), 1);
  }
  report("init", 31415926, before);

  // 2. Host -> device -> host round trips, jobs round-robin over the devices.
  before = failures;
  uint64_t h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    g_scalar = j;
    for (int i = 0; i < kG; ++i) g_array[i] = i * j;
#pragma omp target update to(g_scalar, g_array) device(dev)
#pragma omp target device(dev)
    {
      for (int i = 0; i < kG; ++i) g_array[i] = scale(g_array[i]);
      g_scalar += 100;
    }
    // Without an update nothing comes back: declare target data is not mapped by the region.
    if (separate) {
      check("roundtrip.stale_scalar", j, g_scalar, j);
      for (int i = 0; i < kG; ++i) check("roundtrip.stale_array", j * kG + i, g_array[i], i * j);
    }
#pragma omp target update from(g_scalar, g_array) device(dev)
    check("roundtrip.scalar", j, g_scalar, j + 100);
    h = mix(h, (uint64_t)g_scalar);
    for (int i = 0; i < kG; ++i) {
      check("roundtrip.array", j * kG + i, g_array[i], host_scale(i * j, j));
      h = mix(h, (uint64_t)g_array[i]);
    }
  }
  report("roundtrip", h, before);

  // 3. Each device keeps its own copy: write a different value on each, then read each back.
  before = failures;
  for (int d = 0; d < count; ++d) {
    const int dev = ndev > 0 ? d : omp_get_initial_device();
#pragma omp target device(dev) firstprivate(d)
    {
      g_scalar = 1000 + d;
      for (int i = 0; i < kG; ++i) g_array[i] = d * kG + i;
    }
  }
  h = CHECKSUM_START;
  for (int d = 0; d < count; ++d) {
    const int dev = ndev > 0 ? d : omp_get_initial_device();
#pragma omp target update from(g_scalar, g_array [0:kG]) device(dev)
    check("per_device.scalar", d, g_scalar, 1000 + d);
    for (int i = 0; i < kG; ++i) check("per_device.array", d * kG + i, g_array[i], d * kG + i);
    if (d == 0) {
      h = mix(h, (uint64_t)g_scalar);
      for (int i = 0; i < kG; ++i) h = mix(h, (uint64_t)g_array[i]);
    }
  }
  report("per_device", h, before);

  if (failures) {
    fprintf(stderr, "declare_target: %d mismatch(es)\n", failures);
    return 1;
  }
  return 0;
}
