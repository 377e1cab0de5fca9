// Unstructured data: target enter data / exit data with to, alloc, from, release and delete;
// reference counting (no copy while still referenced), map(always, to), omp_target_is_present,
// and one host buffer mapped on every device at once.
// Where host fallback and separate device memory differ, the expected value depends on `separate`
// and is only checked; the checksums use values that are the same either way.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#include "self_check.h"

enum { kJobs = 8, kN = 512 };

static int bufs[kJobs][kN];
static long long tmps[kJobs][kN];
static int shared_buf[kN];

static int base_value(int j, int i) { return j * 10000 + i; }

int main(void) {
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  const int separate = ndev > 0;
  fprintf(stderr, "enter_exit_data: %d device(s)\n", ndev);

  // 1. Reference counts, one buffer per job, jobs round-robin over the devices.
  int before = failures;
  uint64_t h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    int* buf = bufs[j];
    for (int i = 0; i < kN; ++i) buf[i] = base_value(j, i);
    if (separate) check("refcount.absent_before", j, omp_target_is_present(buf, dev), 0);

#pragma omp target enter data map(to : buf [0:kN]) device(dev)
#pragma omp target enter data map(to : buf [0:kN]) device(dev)
#pragma omp target device(dev) map(tofrom : buf [0:kN])
    for (int i = 0; i < kN; ++i) buf[i] += 10;
      // Already present: the device copy (base + 10) must not be overwritten by the host's.
#pragma omp target enter data map(to : buf [0:kN]) device(dev)
#pragma omp target device(dev) map(tofrom : buf [0:kN])
    for (int i = 0; i < kN; ++i) buf[i] += 100;
    check("refcount.present", j, omp_target_is_present(buf, dev), 1);

    // Count 3 -> 2 -> 1: nothing comes back yet.
#pragma omp target exit data map(release : buf [0:kN]) device(dev)
#pragma omp target exit data map(from : buf [0:kN]) device(dev)
    for (int i = 0; i < kN; ++i)
      check("refcount.not_back", j * kN + i, buf[i], base_value(j, i) + (separate ? 0 : 110));
    check("refcount.still_present", j, omp_target_is_present(buf, dev), 1);

    // Count 1 -> 0: now the device copy comes back.
#pragma omp target exit data map(from : buf [0:kN]) device(dev)
    for (int i = 0; i < kN; ++i) {
      check("refcount.back", j * kN + i, buf[i], base_value(j, i) + 110);
      h = mix(h, (uint64_t)buf[i]);
    }
    if (separate) check("refcount.absent_after", j, omp_target_is_present(buf, dev), 0);
  }
  report("refcount", h, before);

  // 2. delete drops the mapping whatever the count and copies nothing back.
  before = failures;
  h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    int* buf = bufs[j];
    for (int i = 0; i < kN; ++i) buf[i] = base_value(j, i);
#pragma omp target enter data map(to : buf [0:kN]) device(dev)
#pragma omp target enter data map(to : buf [0:kN]) device(dev)
#pragma omp target device(dev) map(tofrom : buf [0:kN])
    for (int i = 0; i < kN; ++i) buf[i] += 1000;
#pragma omp target exit data map(delete : buf [0:kN]) device(dev)
    if (separate) check("delete.absent", j, omp_target_is_present(buf, dev), 0);
    for (int i = 0; i < kN; ++i) {
      const int extra = separate ? 0 : 1000;
      check("delete.not_back", j * kN + i, buf[i], base_value(j, i) + extra);
      h = mix(h, (uint64_t)(buf[i] - extra));
    }
  }
  report("delete", h, before);

  // 3. enter data map(alloc) + target update from + exit data map(delete).
  before = failures;
  h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    long long* tmp = tmps[j];
#pragma omp target enter data map(alloc : tmp [0:kN]) device(dev)
#pragma omp target device(dev) firstprivate(j)
    for (int i = 0; i < kN; ++i) tmp[i] = (long long)i * (j + 3);
#pragma omp target update from(tmp [0:kN]) device(dev)
#pragma omp target exit data map(delete : tmp [0:kN]) device(dev)
    for (int i = 0; i < kN; ++i) {
      check("alloc.tmp", j * kN + i, tmp[i], (long long)i * (j + 3));
      h = mix(h, (uint64_t)tmp[i]);
    }
  }
  report("alloc", h, before);

  // 4. map(always, to) copies even though the data is present.
  before = failures;
  h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    int* buf = bufs[j];
    for (int i = 0; i < kN; ++i) buf[i] = -1;
#pragma omp target enter data map(to : buf [0:kN]) device(dev)
    for (int i = 0; i < kN; ++i) buf[i] = base_value(j, i);
#pragma omp target device(dev) map(always, to : buf [0:kN])
    for (int i = 0; i < kN; ++i) buf[i] *= 2;
#pragma omp target exit data map(from : buf [0:kN]) device(dev)
    for (int i = 0; i < kN; ++i) {
      check("always.buf", j * kN + i, buf[i], base_value(j, i) * 2);
      h = mix(h, (uint64_t)buf[i]);
    }
  }
  report("always", h, before);

  // 5. The same host buffer mapped on every device at once: each device has its own copy.
  before = failures;
  for (int i = 0; i < kN; ++i) shared_buf[i] = i;
  for (int d = 0; d < count; ++d) {
    const int dev = ndev > 0 ? d : omp_get_initial_device();
#pragma omp target enter data map(to : shared_buf [0:kN]) device(dev)
  }
  for (int d = 0; d < count; ++d) {
    const int dev = ndev > 0 ? d : omp_get_initial_device();
#pragma omp target device(dev) map(tofrom : shared_buf [0:kN]) firstprivate(d)
    for (int i = 0; i < kN; ++i) shared_buf[i] += d + 1;
  }
  h = CHECKSUM_START;
  for (int d = 0; d < count; ++d) {
    const int dev = ndev > 0 ? d : omp_get_initial_device();
#pragma omp target exit data map(from : shared_buf [0:kN]) device(dev)
    // Separate copies: device d added only d + 1. Fallback: one copy got every addition.
    const int added = separate ? d + 1 : count * (count + 1) / 2;
    for (int i = 0; i < kN; ++i) {
      check("per_device.buf", d * kN + i, shared_buf[i], i + added);
      if (d == 0) h = mix(h, (uint64_t)(shared_buf[i] - added));
    }
  }
  report("per_device", h, before);

  if (failures) {
    fprintf(stderr, "enter_exit_data: %d mismatch(es)\n", failures);
    return 1;
  }
  return 0;
}
