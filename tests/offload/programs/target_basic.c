// Plain target regions on every device: device(K), map(to/from/tofrom/alloc), implicit maps,
// firstprivate scalars, and concurrent synchronous regions from several host threads.
// Work is split over the devices so that stdout does not depend on how many there are.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#include "self_check.h"

enum { kJobs = 24, kN = 4096 };

static int in[kN], out[kN], acc[kN];

int main(void) {
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  // With devices, device memory is separate from the host's; in host fallback it is the same.
  const int separate = ndev > 0;
  fprintf(stderr, "target_basic: %d device(s), initial device %d\n", ndev,
          omp_get_initial_device());

  // 1. Scalars: tofrom, from, firstprivate; jobs go round-robin over the devices.
  int before = failures;
  uint64_t h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    int value = j, on_host = -1, scratch = 100 + j;
    const int mul = 3 + j;
#pragma omp target device(dev) map(tofrom : value) map(from : on_host) firstprivate(mul)
    {
      value = value * mul + 7;
      scratch += 1;  // implicitly firstprivate: never copied back
      on_host = omp_is_initial_device();
    }
    check("scalar.value", j, value, j * (3 + j) + 7);
    check("scalar.scratch", j, scratch, 100 + j);
    check("scalar.on_host", j, on_host, !separate);
    h = mix(h, (uint64_t)value);
  }
  report("scalars", h, before);

  // 2. Arrays: each device takes one slice; to/from/tofrom/alloc on the same region.
  before = failures;
  for (int i = 0; i < kN; ++i) {
    in[i] = i * 7 - 3;
    out[i] = -1;
    acc[i] = i;
  }
  for (int d = 0; d < count; ++d) {
    const int lo = (int)((long long)kN * d / count), hi = (int)((long long)kN * (d + 1) / count);
    const int len = hi - lo;
    int tmp[64];
    const int dev = ndev > 0 ? d : omp_get_initial_device();
#pragma omp target device(dev) map(to                                                     \
                                   : in [lo:len]) map(from                                \
                                                      : out [lo:len]) map(tofrom          \
                                                                          : acc [lo:len]) \
    map(alloc                                                                             \
        : tmp [0:64]) firstprivate(lo, hi)
    {
      for (int k = 0; k < 64; ++k) tmp[k] = k;
      for (int i = lo; i < hi; ++i) {
        out[i] = in[i] * 2 + tmp[i % 64];
        acc[i] += in[i];
        in[i] = -999;  // map(to): must not reach the host when memory is separate
      }
    }
  }
  h = CHECKSUM_START;
  for (int i = 0; i < kN; ++i) {
    const int want_in = i * 7 - 3;
    check("arrays.out", i, out[i], want_in * 2 + i % 64);
    check("arrays.acc", i, acc[i], i + want_in);
    check("arrays.in", i, in[i], separate ? want_in : -999);
    h = mix(h, (uint64_t)(uint32_t)out[i]);
    h = mix(h, (uint64_t)(uint32_t)acc[i]);
  }
  report("arrays", h, before);

  // 3. Implicit maps: a global array referenced without a map clause is mapped tofrom.
  before = failures;
  for (int i = 0; i < kN; ++i) acc[i] = i;
  for (int d = 0; d < count; ++d) {
    const int dev = ndev > 0 ? d : omp_get_initial_device();
#pragma omp target device(dev)
    {
      for (int i = d; i < kN; i += count) acc[i] = acc[i] * 3 + 1;
    }
  }
  h = CHECKSUM_START;
  for (int i = 0; i < kN; ++i) {
    check("implicit.acc", i, acc[i], i * 3 + 1);
    h = mix(h, (uint64_t)(uint32_t)acc[i]);
  }
  report("implicit", h, before);

  // 4. Synchronous regions issued concurrently by host threads, one device each, several rounds.
  before = failures;
  long long results[kJobs];
#pragma omp parallel for num_threads(count < 8 ? count : 8) schedule(static, 1)
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    long long r = 0;
    const int n = 1000 + j;
#pragma omp target device(dev) map(tofrom : r) firstprivate(n)
    {
      for (int k = 1; k <= n; ++k) r += (long long)k * k;
    }
    results[j] = r;
  }
  h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const long long n = 1000 + j;
    check("threads.r", j, results[j], n * (n + 1) * (2 * n + 1) / 6);
    h = mix(h, (uint64_t)results[j]);
  }
  report("threads", h, before);

  if (failures) {
    fprintf(stderr, "target_basic: %d mismatch(es)\n", failures);
    return 1;
  }
  return 0;
}
