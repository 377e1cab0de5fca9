// A target region on device 0 that calls abort(). With devices, the offload runtime has to report
// the dead kernel; in host fallback the process itself aborts. Exit code 3 means the region
// returned, which must not happen.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  const int ndev = omp_get_num_devices();
  const int dev = ndev > 0 ? 0 : omp_get_initial_device();
  int seen = 0;
  fprintf(stderr, "kernel_abort: abort() on device %d of %d\n", dev, ndev);
#pragma omp target device(dev) map(from : seen)
  {
    abort();
    seen = 1;
  }
  fprintf(stderr, "kernel_abort: the region returned (seen=%d)\n", seen);
  return 3;
}
