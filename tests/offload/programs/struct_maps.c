// Struct maps: single members (array, scalar, nested), a pointer member whose pointee is mapped
// with the struct so that the runtime attaches the device pointer inside the device struct
// (structured, via pointer-to-struct, and with enter data on a struct already present), and a
// struct copied back whole, whose host pointer member must survive.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "self_check.h"

enum { kJobs = 8, kA = 16, kP = 300 };

typedef struct {
  long v[4];
  short tag;
} Inner;

typedef struct {
  int a[kA];
  double b;
  int n;
  int* p;
  Inner inner;
} S;

static S ss[kJobs];
static int payload[kJobs][kP];

static void reset(int j) {
  S* s = &ss[j];
  for (int i = 0; i < kA; ++i) s->a[i] = j * 100 + i;
  s->b = 0.5 * (j + 1);
  s->n = kP - j;
  s->p = payload[j];
  for (int i = 0; i < 4; ++i) s->inner.v[i] = j * 10 + i;
  s->inner.tag = (short)j;
  for (int i = 0; i < kP; ++i) payload[j][i] = j * 1000 + i;
}

int main(void) {
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  fprintf(stderr, "struct_maps: %d device(s)\n", ndev);

  // 1. Members only: s.a tofrom, s.b to, s.inner.v tofrom. The region touches nothing else.
  int before = failures;
  uint64_t h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    reset(j);
    S s = ss[j];
#pragma omp target device(dev) map(tofrom : s.a) map(to : s.b) map(tofrom : s.inner.v)
    {
      for (int i = 0; i < kA; ++i) s.a[i] = s.a[i] * 2 + (int)(s.b * 4);
      for (int i = 0; i < 4; ++i) s.inner.v[i] += s.a[i];
    }
    for (int i = 0; i < kA; ++i) {
      check("members.a", j * kA + i, s.a[i], (j * 100 + i) * 2 + 2 * (j + 1));
      h = mix(h, (uint64_t)s.a[i]);
    }
    for (int i = 0; i < 4; ++i) {
      check("members.inner", j * 4 + i, s.inner.v[i], j * 10 + i + (j * 100 + i) * 2 + 2 * (j + 1));
      h = mix(h, (uint64_t)s.inner.v[i]);
    }
    check("members.n", j, s.n, kP - j);
    check("members.p", j, s.p == payload[j], 1);
  }
  report("members", h, before);

  // 2. map(to: s) map(tofrom: s.p[0:n]): the device struct's p must point at the device copy.
  before = failures;
  h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    reset(j);
    S s = ss[j];
    const int n = s.n;
#pragma omp target device(dev) map(to : s) map(tofrom : s.p [0:n])
    for (int i = 0; i < s.n; ++i) s.p[i] = s.p[i] * 3 + s.a[i % kA];
    check("attach.p", j, s.p == payload[j], 1);
    for (int i = 0; i < kP; ++i) {
      const int v = j * 1000 + i;
      check("attach.payload", j * kP + i, payload[j][i], i < n ? v * 3 + (j * 100 + i % kA) : v);
      h = mix(h, (uint64_t)payload[j][i]);
    }
  }
  report("attach", h, before);

  // 3. Pointer to struct, struct copied back whole: the device changes n and the pointee; the host
  // struct gets the new n but keeps its own p (the runtime restores the host pointer).
  before = failures;
  h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    reset(j);
    S* ps = &ss[j];
#pragma omp target device(dev) map(tofrom : ps [0:1]) map(tofrom : ps->p [0:kP])
    {
      for (int i = 0; i < kP; ++i) ps->p[i] += 7;
      ps->n += 1;
      ps->inner.tag = (short)(ps->inner.tag + 40);
    }
    check("whole.p", j, ps->p == payload[j], 1);
    check("whole.n", j, ps->n, kP - j + 1);
    check("whole.tag", j, ps->inner.tag, j + 40);
    h = mix(h, (uint64_t)ps->n);
    for (int i = 0; i < kP; ++i) {
      check("whole.payload", j * kP + i, payload[j][i], j * 1000 + i + 7);
      h = mix(h, (uint64_t)payload[j][i]);
    }
  }
  report("whole", h, before);

  // 4. Unstructured: the struct is entered first, its pointee later (attaches to the resident
  // struct); regions use the struct implicitly (present), the pointee comes back by update.
  before = failures;
  h = CHECKSUM_START;
  for (int j = 0; j < kJobs; ++j) {
    const int dev = ndev > 0 ? j % count : omp_get_initial_device();
    reset(j);
    S* ps = &ss[j];
#pragma omp target enter data device(dev) map(to : ps [0:1])
#pragma omp target enter data device(dev) map(to : ps->p [0:kP])
    for (int round = 1; round <= 3; ++round) {
#pragma omp target device(dev) firstprivate(round)
      for (int i = 0; i < kP; ++i) ps->p[i] = ps->p[i] * 2 + round;
    }
#pragma omp target update device(dev) from(ps->p [0:kP])
#pragma omp target exit data device(dev) map(delete : ps->p [0:kP])
#pragma omp target exit data device(dev) map(delete : ps [0:1])
    check("unstructured.p", j, ps->p == payload[j], 1);
    for (int i = 0; i < kP; ++i) {
      int v = j * 1000 + i;
      for (int round = 1; round <= 3; ++round) v = v * 2 + round;
      check("unstructured.payload", j * kP + i, payload[j][i], v);
      h = mix(h, (uint64_t)payload[j][i]);
    }
  }
  report("unstructured", h, before);

  if (failures) {
    fprintf(stderr, "struct_maps: %d mismatch(es)\n", failures);
    return 1;
  }
  return 0;
}
