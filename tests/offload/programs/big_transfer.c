// One large buffer mapped tofrom to a device, changed there element by element, brought back and
// checked in full. Usage: big_transfer [MiB (default 64)] [device (default: the last one)].
// Sizes past 2048 MiB are the point (32-bit counts and offsets would wrap), so everything that
// holds a size or an index is size_t.
#include <errno.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t initial(size_t i) { return (uint64_t)i * 0x9E3779B97F4A7C15ULL + 1; }

#pragma omp declare target
static uint64_t transform(uint64_t v, size_t i) { return (v ^ (v >> 29)) + (uint64_t)i * 3; }
#pragma omp end declare target

int main(int argc, char** argv) {
  size_t mib = 64;
  if (argc > 1) {
    char* end = NULL;
    errno = 0;
    const unsigned long long v = strtoull(argv[1], &end, 10);
    if (errno || *end || v == 0 || v > ((size_t)-1 >> 20)) {
      fprintf(stderr, "usage: %s [MiB > 0] [device]\n", argv[0]);
      return 2;
    }
    mib = (size_t)v;
  }
  const int ndev = omp_get_num_devices();
  int dev = ndev > 0 ? ndev - 1 : omp_get_initial_device();
  if (argc > 2 && ndev > 0) dev = (atoi(argv[2]) % ndev + ndev) % ndev;
  const size_t bytes = mib << 20;
  const size_t n = bytes / sizeof(uint64_t);
  fprintf(stderr, "big_transfer: %zu MiB (%zu elements) on device %d of %d\n", mib, n, dev, ndev);

  uint64_t* buf = malloc(bytes);
  if (!buf) {
    fprintf(stderr, "big_transfer: cannot allocate %zu bytes\n", bytes);
    return 1;
  }
  for (size_t i = 0; i < n; ++i) buf[i] = initial(i);

#pragma omp target teams distribute parallel for device(dev) map(tofrom : buf [0:n])
  for (size_t i = 0; i < n; ++i) buf[i] = transform(buf[i], i);

  size_t bad = 0;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t want = transform(initial(i), i);
    if (buf[i] != want && ++bad <= 10)
      fprintf(stderr, "buf[%zu]: got %016llx, want %016llx\n", i, (unsigned long long)buf[i],
              (unsigned long long)want);
    h = (h ^ buf[i]) * 0x100000001b3ULL;
  }
  free(buf);
  if (bad) {
    fprintf(stderr, "big_transfer: %zu of %zu elements wrong\n", bad, n);
    printf("big_transfer: FAIL size=%zuMiB\n", mib);
    return 1;
  }
  printf("big_transfer: ok size=%zuMiB checksum=%016llx\n", mib, (unsigned long long)h);
  return 0;
}
