// Maps fresh data for every region, many times over: device memory is
// allocated and freed per region, so freed ranges are reclaimed and reused
// (with data of other sizes) while regions run on every device.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { kRounds = 600, kMaxN = 3000 };

int main(void) {
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  fprintf(stderr, "many_maps: %d device(s)\n", ndev);
  uint64_t checksum = 0xcbf29ce484222325ULL;
  int failures = 0;
  for (int round = 0; round < kRounds; ++round) {
    const int dev = ndev > 0 ? round % count : omp_get_initial_device();
    const int n = 1 + (round * 7919) % kMaxN;
    long* buffer = malloc((size_t)n * sizeof *buffer);
    for (int i = 0; i < n; ++i) buffer[i] = round + i;
#pragma omp target teams distribute parallel for device(dev) map(tofrom : buffer [0:n])
    for (int i = 0; i < n; ++i) buffer[i] = buffer[i] * 2 + 1;
    for (int i = 0; i < n; ++i) {
      const long want = (long)(round + i) * 2 + 1;
      if (buffer[i] != want && ++failures <= 10)
        fprintf(stderr, "round %d: buffer[%d] = %ld, want %ld\n", round, i, buffer[i], want);
    }
    checksum = (checksum ^ (uint64_t)buffer[n - 1]) * 0x100000001b3ULL;
    free(buffer);
  }
  if (failures) {
    printf("many_maps: FAIL\n");
    return 1;
  }
  printf("many_maps: ok checksum=%016llx\n", (unsigned long long)checksum);
  return 0;
}
