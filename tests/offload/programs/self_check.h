// What every test program here shares: a failure count, a check that
// reports the first mismatches on stderr, a checksum step, and one stdout line
// per section. (Plain C; the programs stay ordinary OpenMP programs.)
#ifndef OFFLOAD_TEST_SELF_CHECK_H
#define OFFLOAD_TEST_SELF_CHECK_H

#include <stdint.h>
#include <stdio.h>

// The checksum's start value (FNV-1a's offset basis).
#define CHECKSUM_START 0xcbf29ce484222325ULL

static int failures;

static void check(const char* what, long long index, long long got, long long want) {
  if (got == want) return;
  if (++failures <= 10) fprintf(stderr, "%s[%lld]: got %lld, want %lld\n", what, index, got, want);
}

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ULL; }

// One stdout line per section; `before` is the failure count when the section started.
static void report(const char* name, uint64_t h, int before) {
  if (failures == before)
    printf("%s: ok checksum=%016llx\n", name, (unsigned long long)h);
  else
    printf("%s: FAIL\n", name);
}

#endif
