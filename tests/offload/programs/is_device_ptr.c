// Device pointers handed to regions: is_device_ptr with omp_target_alloc memory (and an offset into
// it), use_device_ptr / use_device_addr inside target data, omp_get_mapped_ptr, and
// omp_target_associate_ptr / omp_target_disassociate_ptr.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#include "self_check.h"

enum { kJobs = 8, kN = 2048 };

static long long hb[kN], arr[kN];

int main(void) {
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  const int host = omp_get_initial_device();
  const int separate = ndev > 0;
  fprintf(stderr, "is_device_ptr: %d device(s)\n", ndev);

  // 1. omp_target_alloc memory filled and reduced on the device, never touching the host.
  int before = failures;
  uint64_t h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : host;
    long long* d = omp_target_alloc(sizeof(long long) * kN, dev);
    if (!d) return 1;
    long long* upper = d + kN / 2;  // device pointer arithmetic is fine on the host side
    long long sum = 0;
#pragma omp target teams distribute parallel for device(dev) is_device_ptr(d) firstprivate(j)
    for (int i = 0; i < kN; ++i) d[i] = (long long)i * i + j;
#pragma omp target teams distribute parallel for device(dev) is_device_ptr(upper) reduction(+ : sum)
    for (int i = 0; i < kN / 2; ++i) sum += upper[i];
    omp_target_free(d, dev);
    long long want = 0;
    for (int i = kN / 2; i < kN; ++i) want += (long long)i * i + j;
    check("alloc.sum", j, sum, want);
    h = mix(h, (uint64_t)sum);
  }
  report("alloc", h, before);

  // 2. use_device_ptr / use_device_addr give the device address of mapped data; it agrees with
  // omp_get_mapped_ptr and can be passed to a region with is_device_ptr.
  before = failures;
  h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : host;
    long long* p = hb;
    for (int i = 0; i < kN; ++i) {
      hb[i] = i + j;
      arr[i] = 2 * i;
    }
    void* mapped = NULL;
#pragma omp target data device(dev) map(tofrom : p [0:kN])
    {
      // In host fallback omp_get_mapped_ptr works but logs a "Libomptarget error" line.
      mapped = separate ? omp_get_mapped_ptr(p, dev) : p;
#pragma omp target data device(dev) use_device_ptr(p)
      {
        check("use_ptr.mapped", j, p == mapped, 1);
        if (separate) check("use_ptr.differs", j, p != hb, 1);
#pragma omp target device(dev) is_device_ptr(p)
        for (int i = 0; i < kN; ++i) p[i] *= 3;
      }
    }
#pragma omp target data device(dev) map(tofrom : arr)
    {
      mapped = separate ? omp_get_mapped_ptr(arr, dev) : arr;
#pragma omp target data device(dev) use_device_addr(arr)
      {
        long long* a = arr;  // inside this region arr names the device copy
        check("use_addr.mapped", j, (void*)a == mapped, 1);
#pragma omp target device(dev) is_device_ptr(a)
        for (int i = 0; i < kN; ++i) a[i] += 1;
      }
    }
    for (int i = 0; i < kN; ++i) {
      check("use_ptr.hb", j * kN + i, hb[i], 3LL * (i + j));
      check("use_addr.arr", j * kN + i, arr[i], 2LL * i + 1);
      h = mix(h, (uint64_t)hb[i]);
    }
  }
  report("use_device", h, before);

  // 3. Associate host memory with an allocation: mapping then uses that allocation and copies
  // nothing on its own (the association is permanently present), so data goes by target update.
  before = failures;
  h = CHECKSUM_START;
  if (separate) {
    for (int j = 0; j < kJobs; ++j) {
      const int dev = j % count;
      long long* d = omp_target_alloc(sizeof hb, dev);
      if (!d) return 1;
      for (int i = 0; i < kN; ++i) hb[i] = 5 * i + j;
      check("associate.rc", j, omp_target_associate_ptr(hb, d, sizeof hb, 0, dev), 0);
      check("associate.mapped", j, omp_get_mapped_ptr(hb, dev) == (void*)d, 1);
#pragma omp target update device(dev) to(hb)
#pragma omp target device(dev) map(tofrom : hb)
      for (int i = 0; i < kN; ++i) hb[i] += 1000;
      // Still the host values: tofrom on present data does not copy back.
      check("associate.stale", j, hb[7], 5 * 7 + j);
      long long direct[4];
      omp_target_memcpy(direct, d, sizeof direct, 0, 0, host, dev);
      check("associate.direct", j, direct[3], 5 * 3 + j + 1000);
#pragma omp target update device(dev) from(hb)
      check("associate.disassociate", j, omp_target_disassociate_ptr(hb, dev), 0);
      omp_target_free(d, dev);
      for (int i = 0; i < kN; ++i) {
        check("associate.hb", j * kN + i, hb[i], 5 * i + j + 1000);
        h = mix(h, (uint64_t)hb[i]);
      }
    }
  } else {
    // Host fallback has no device memory to associate; print the checksum a device run gives.
    for (int j = 0; j < kJobs; ++j)
      for (int i = 0; i < kN; ++i) h = mix(h, (uint64_t)(5 * i + j + 1000));
  }
  report("associate", h, before);

  if (failures) {
    fprintf(stderr, "is_device_ptr: %d mismatch(es)\n", failures);
    return 1;
  }
  return 0;
}
