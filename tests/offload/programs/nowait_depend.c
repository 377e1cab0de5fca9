// Asynchronous target tasks: nowait + depend(in/out/inout) chains per device, a chain hopping over
// all devices, fan-out from one device to all and fan-in back (depend iterator and taskwait), and
// nowait enter/update/exit data interleaved with host tasks.
// Every update is order-sensitive (x = x * 3 + k), so a dependence that is not honoured shows up.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#include "self_check.h"

enum { kLanes = 8, kLaneLen = 256, kSteps = 40, kHops = 64, kParts = 8, kN = 8192 };

static unsigned lanes[kLanes][kLaneLen];
static unsigned base[kN], out[kN];
static unsigned staged[kN];

int main(void) {
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  fprintf(stderr, "nowait_depend: %d device(s)\n", ndev);

  // 1. One dependent chain per lane, lanes spread over the devices and issued from a parallel
  // region so that chains on different devices are in flight together. Data stays resident.
  int before = failures;
  char lane_tok[kLanes];
  for (int l = 0; l < kLanes; ++l)
    for (int i = 0; i < kLaneLen; ++i) lanes[l][i] = (unsigned)(l * 1000 + i);
#pragma omp parallel num_threads(2)
#pragma omp single
  for (int l = 0; l < kLanes; ++l) {
    const int dev = ndev > 0 ? l % count : omp_get_initial_device();
    unsigned* lane = lanes[l];
#pragma omp target enter data nowait depend(out                               \
                                            : lane_tok[l]) device(dev) map(to \
                                                                           : lane [0:kLaneLen])
    for (int k = 0; k < kSteps; ++k) {
#pragma omp target nowait depend(inout : lane_tok[l]) device(dev) firstprivate(k)
      for (int i = 0; i < kLaneLen; ++i) lane[i] = lane[i] * 3u + (unsigned)k;
    }
#pragma omp target exit data nowait depend(inout                               \
                                           : lane_tok[l]) device(dev) map(from \
                                                                          : lane [0:kLaneLen])
  }
  // The single's implicit barrier completes all the tasks.
  uint64_t h = CHECKSUM_START;
  for (int l = 0; l < kLanes; ++l)
    for (int i = 0; i < kLaneLen; ++i) {
      unsigned want = (unsigned)(l * 1000 + i);
      for (int k = 0; k < kSteps; ++k) want = want * 3u + (unsigned)k;
      check("chains.lane", l * kLaneLen + i, lanes[l][i], want);
      h = mix(h, lanes[l][i]);
    }
  report("chains", h, before);

  // 2. One value hopping over all devices in turn, mapped tofrom by every region.
  before = failures;
  unsigned v = 1;
  for (int k = 0; k < kHops; ++k) {
    const int dev = ndev > 0 ? k % count : omp_get_initial_device();
#pragma omp target nowait depend(inout : v) device(dev) map(tofrom : v) firstprivate(k)
    v = v * 3u + (unsigned)k;
  }
#pragma omp taskwait
  unsigned want_v = 1;
  for (int k = 0; k < kHops; ++k) want_v = want_v * 3u + (unsigned)k;
  check("hops.v", 0, v, want_v);
  report("hops", mix(CHECKSUM_START, v), before);

  // 3. Fan-out: device 0 produces base; kParts regions on all devices read it (depend in) and
  // each write one part of out; fan-in: the last device sums all parts after all of them
  // (depend iterator over the part tokens); a second fan-in by taskwait and a host sum.
  before = failures;
  char base_tok = 0, part_tok[kParts];
  unsigned long long total = 0;
  {
    const int dev0 = ndev > 0 ? 0 : omp_get_initial_device();
    const int devl = ndev > 0 ? count - 1 : omp_get_initial_device();
#pragma omp target nowait depend(out : base_tok) device(dev0) map(from : base [0:kN])
    for (int i = 0; i < kN; ++i) base[i] = (unsigned)i * 2654435761u;
    for (int p = 0; p < kParts; ++p) {
      const int dev = ndev > 0 ? p % count : omp_get_initial_device();
      const int lo = kN / kParts * p, len = kN / kParts;
#pragma omp target nowait depend(in                                            \
                                 : base_tok) depend(out                        \
                                                    : part_tok[p]) device(dev) \
    map(to                                                                     \
        : base [lo:len]) map(from                                              \
                             : out [lo:len]) firstprivate(p)
      for (int i = lo; i < lo + len; ++i) out[i] = (base[i] >> 3) + (unsigned)p;
    }
#pragma omp target nowait depend(iterator(it = 0                                           \
                                          : kParts),                                       \
                                 in                                                        \
                                 : part_tok[it]) device(devl) map(to                       \
                                                                  : out [0:kN]) map(tofrom \
                                                                                    : total)
    for (int i = 0; i < kN; ++i) total += out[i];
#pragma omp taskwait
  }
  unsigned long long want_total = 0, host_total = 0;
  for (int i = 0; i < kN; ++i) {
    const unsigned b = (unsigned)i * 2654435761u;
    check("fan.base", i, base[i], b);
    check("fan.out", i, out[i], (b >> 3) + (unsigned)(i / (kN / kParts)));
    want_total += (b >> 3) + (unsigned)(i / (kN / kParts));
    host_total += out[i];
  }
  check("fan.total", 0, (long long)total, (long long)want_total);
  check("fan.host_total", 0, (long long)host_total, (long long)want_total);
  report("fan", mix(CHECKSUM_START, total), before);

  // 4. Asynchronous data movement mixed with host tasks on one chain per device:
  // enter data to -> +1 on device -> update from -> host *2 -> update to -> +3 -> exit data from.
  // The result is the same whether or not device memory is separate from the host's.
  before = failures;
  char stage_tok[kParts];
  for (int i = 0; i < kN; ++i) staged[i] = (unsigned)i;
  for (int p = 0; p < kParts; ++p) {
    const int dev = ndev > 0 ? p % count : omp_get_initial_device();
    const int lo = kN / kParts * p, len = kN / kParts;
#pragma omp target enter data nowait depend(out                                \
                                            : stage_tok[p]) device(dev) map(to \
                                                                            : staged [lo:len])
    // Without the map clause the whole array would be mapped implicitly, overlapping the section.
#pragma omp target nowait depend(inout : stage_tok[p]) device(dev) map(tofrom : staged [lo:len])
    for (int i = lo; i < lo + len; ++i) staged[i] += 1;
#pragma omp target update nowait depend(inout : stage_tok[p]) device(dev) from(staged [lo:len])
#pragma omp task depend(inout : stage_tok[p]) firstprivate(lo, len)
    for (int i = lo; i < lo + len; ++i) staged[i] *= 2;
#pragma omp target update nowait depend(inout : stage_tok[p]) device(dev) to(staged [lo:len])
#pragma omp target nowait depend(inout : stage_tok[p]) device(dev) map(tofrom : staged [lo:len])
    for (int i = lo; i < lo + len; ++i) staged[i] += 3;
#pragma omp target exit data nowait depend(inout                                \
                                           : stage_tok[p]) device(dev) map(from \
                                                                           : staged [lo:len])
  }
#pragma omp taskwait
  h = CHECKSUM_START;
  for (int i = 0; i < kN; ++i) {
    check("staged", i, staged[i], ((unsigned)i + 1) * 2 + 3);
    h = mix(h, staged[i]);
  }
  report("staged", h, before);

  if (failures) {
    fprintf(stderr, "nowait_depend: %d mismatch(es)\n", failures);
    return 1;
  }
  return 0;
}
