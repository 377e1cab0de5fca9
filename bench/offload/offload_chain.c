// Time per target region, in microseconds, for three shapes of asynchronous regions whose data is
// already resident (target enter data first, so the regions themselves move no data):
//   chain        R regions on device 0, each depend(inout: token) on the one before;
//   independent  R regions on device 0 with no dependences, then taskwait;
//   hop          R regions alternating between devices 0 and 1 (0 and 0 with one device),
//                chained by depend(inout: token).
// Every region applies v = v * 3 + i to its resident value, so a lost or reordered region changes
// the result; each repetition is checked against the same arithmetic on the host.
// Usage: offload_chain [-r R] [-n reps] [--json FILE]
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char* name;
  double min_us, median_us;
} Result;

static uint64_t step(uint64_t v, long i) { return v * 3u + (uint64_t)i; }

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static long parse_positive(const char* s, const char* what) {
  char* end = NULL;
  const long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v <= 0) {
    fprintf(stderr, "offload_chain: %s must be a positive integer, got '%s'\n", what, s);
    exit(2);
  }
  return v;
}

static const uint64_t kSeed = 12345;

// Each function issues r regions, waits for them, reads the result back and returns the seconds
// taken: the clock stops when the device has run every region, not when the host has queued them
// (a runtime may finish a `nowait` region once it is queued). The resident values are reset
// (target update to) before the clock starts.

static double run_chain(long r, int dev, uint64_t* chain, int* ok) {
  char token = 0;
  chain[0] = kSeed;
#pragma omp target update to(chain [0:1]) device(dev)
  const double t0 = omp_get_wtime();
  for (long i = 0; i < r; ++i) {
#pragma omp target nowait depend(inout : token) device(dev) map(alloc : chain [0:1]) firstprivate(i)
    chain[0] = chain[0] * 3u + (uint64_t)i;
  }
#pragma omp taskwait
#pragma omp target update from(chain [0:1]) device(dev)
  const double t = omp_get_wtime() - t0;
  uint64_t want = kSeed;
  for (long i = 0; i < r; ++i) want = step(want, i);
  if (chain[0] != want) {
    fprintf(stderr, "chain: got %llu, want %llu\n", (unsigned long long)chain[0],
            (unsigned long long)want);
    *ok = 0;
  }
  return t;
}

static double run_independent(long r, int dev, uint64_t* slots, int* ok) {
  for (long i = 0; i < r; ++i) slots[i] = kSeed + (uint64_t)i;
#pragma omp target update to(slots [0:r]) device(dev)
  const double t0 = omp_get_wtime();
  for (long i = 0; i < r; ++i) {
#pragma omp target nowait device(dev) map(alloc : slots [i:1]) firstprivate(i)
    slots[i] = slots[i] * 3u + (uint64_t)i;
  }
#pragma omp taskwait
#pragma omp target update from(slots [0:r]) device(dev)
  const double t = omp_get_wtime() - t0;
  for (long i = 0; i < r; ++i) {
    const uint64_t want = step(kSeed + (uint64_t)i, i);
    if (slots[i] != want) {
      fprintf(stderr, "independent[%ld]: got %llu, want %llu\n", i, (unsigned long long)slots[i],
              (unsigned long long)want);
      *ok = 0;
      break;
    }
  }
  return t;
}

// hop_value is resident on both hop devices; each keeps its own copy unless they are the same.
static double run_hop(long r, const int hop[2], uint64_t* hop_value, int* ok) {
  char token = 0;
  hop_value[0] = kSeed;
#pragma omp target update to(hop_value [0:1]) device(hop[0])
  if (hop[1] != hop[0]) {
#pragma omp target update to(hop_value [0:1]) device(hop[1])
  }
  const double t0 = omp_get_wtime();
  for (long i = 0; i < r; ++i) {
    const int dev = hop[i % 2];
#pragma omp target nowait depend(inout                          \
                                 : token) device(dev) map(alloc \
                                                          : hop_value [0:1]) firstprivate(i)
    hop_value[0] = hop_value[0] * 3u + (uint64_t)i;
  }
#pragma omp taskwait
  const int distinct = hop[1] != hop[0];
  uint64_t got[2];
  for (int k = 0; k < 1 + distinct; ++k) {
#pragma omp target update from(hop_value [0:1]) device(hop[k])
    got[k] = hop_value[0];
  }
  const double t = omp_get_wtime() - t0;
  for (int k = 0; k < 1 + distinct; ++k) {
    uint64_t want = kSeed;
    for (long i = 0; i < r; ++i)
      if (!distinct || i % 2 == k) want = step(want, i);
    if (got[k] != want) {
      fprintf(stderr, "hop (device %d): got %llu, want %llu\n", hop[k], (unsigned long long)got[k],
              (unsigned long long)want);
      *ok = 0;
    }
  }
  return t;
}

int main(int argc, char** argv) {
  long r = 2000, reps = 5;
  const char* json = NULL;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "-r") && a + 1 < argc) {
      r = parse_positive(argv[++a], "-r");
    } else if (!strcmp(argv[a], "-n") && a + 1 < argc) {
      reps = parse_positive(argv[++a], "-n");
    } else if (!strcmp(argv[a], "--json") && a + 1 < argc) {
      json = argv[++a];
    } else {
      fprintf(stderr, "usage: %s [-r regions (2000)] [-n reps (5)] [--json FILE]\n", argv[0]);
      return strcmp(argv[a], "-h") && strcmp(argv[a], "--help") ? 2 : 0;
    }
  }

  const int ndev = omp_get_num_devices();
  const int dev0 = ndev > 0 ? 0 : omp_get_initial_device();
  const int hop[2] = {dev0, ndev > 1 ? 1 : dev0};
  uint64_t chain[1] = {0}, hop_value[1] = {0};
  uint64_t* slots = calloc((size_t)r, sizeof(uint64_t));
  double* samples = malloc(sizeof(double) * (size_t)reps);
  if (!slots || !samples) {
    fprintf(stderr, "offload_chain: out of memory\n");
    return 1;
  }

#pragma omp target enter data map(to : chain [0:1], slots [0:r]) device(dev0)
#pragma omp target enter data map(to : hop_value [0:1]) device(hop[0])
  if (hop[1] != hop[0]) {
#pragma omp target enter data map(to : hop_value [0:1]) device(hop[1])
  }

  // Warm-up: loads the image, starts the helper threads, and touches every code path once.
  int ok = 1;
  const long warm = r < 200 ? r : 200;
  run_chain(warm, dev0, chain, &ok);
  run_independent(warm, dev0, slots, &ok);
  run_hop(warm, hop, hop_value, &ok);

  Result results[3] = {{"chain", 0, 0}, {"independent", 0, 0}, {"hop", 0, 0}};
  for (int s = 0; s < 3; ++s) {
    for (long k = 0; k < reps; ++k) {
      double t = 0;
      if (s == 0) t = run_chain(r, dev0, chain, &ok);
      if (s == 1) t = run_independent(r, dev0, slots, &ok);
      if (s == 2) t = run_hop(r, hop, hop_value, &ok);
      samples[k] = t * 1e6 / (double)r;
    }
    qsort(samples, (size_t)reps, sizeof(double), compare_doubles);
    results[s].min_us = samples[0];
    results[s].median_us =
        reps % 2 ? samples[reps / 2] : 0.5 * (samples[reps / 2 - 1] + samples[reps / 2]);
  }

#pragma omp target exit data map(delete : chain [0:1], slots [0:r]) device(dev0)
#pragma omp target exit data map(delete : hop_value [0:1]) device(hop[0])
  if (hop[1] != hop[0]) {
#pragma omp target exit data map(delete : hop_value [0:1]) device(hop[1])
  }
  free(slots);
  free(samples);

  if (!ok) {
    fprintf(stderr, "offload_chain: wrong results\n");
    return 1;
  }

  const double ratio = results[0].median_us / results[1].median_us;
  printf("offload_chain: %d device(s), %ld regions x %ld reps, hop between devices %d and %d\n",
         ndev, r, reps, hop[0], hop[1]);
  printf("%-12s %12s %12s\n", "shape", "fastest_us", "median_us");
  for (int s = 0; s < 3; ++s)
    printf("%-12s %12.3f %12.3f\n", results[s].name, results[s].min_us, results[s].median_us);
  printf("chain/independent (median): %.2f\n", ratio);

  if (json) {
    FILE* f = fopen(json, "w");
    if (!f) {
      perror(json);
      return 1;
    }
    // The *_us keys are medians; the fastest repetitions are kept alongside.
    fprintf(f,
            "{\"chain_us\": %.4f, \"independent_us\": %.4f, \"hop_us\": %.4f, "
            "\"chain_over_independent\": %.4f, \"devices\": %d, \"regions\": %ld, \"reps\": %ld, "
            "\"chain_min_us\": %.4f, \"independent_min_us\": %.4f, \"hop_min_us\": %.4f, "
            "\"hop_devices\": [%d, %d]}\n",
            results[0].median_us, results[1].median_us, results[2].median_us, ratio, ndev, r, reps,
            results[0].min_us, results[1].min_us, results[2].min_us, hop[0], hop[1]);
    if (fclose(f) != 0) {
      perror(json);
      return 1;
    }
  }
  return 0;
}
