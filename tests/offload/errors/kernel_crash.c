// A target region on device 0 that writes through a null pointer. The pointer is read from a
// volatile and written through a volatile lvalue so that no optimisation can drop the store.
// With devices, the offload runtime has to report the dead kernel; in host fallback the process
// itself gets SIGSEGV. Exit code 3 means the region returned, which must not happen.
#include <omp.h>
#include <stdio.h>

static int* volatile null_ptr;

int main(void) {
  const int ndev = omp_get_num_devices();
  const int dev = ndev > 0 ? 0 : omp_get_initial_device();
  int* bad = null_ptr;
  int seen = 0;
  fprintf(stderr, "kernel_crash: null store on device %d of %d\n", dev, ndev);
#pragma omp target device(dev) firstprivate(bad) map(from : seen)
  {
    *(volatile int*)bad = 42;
    seen = 1;
  }
  fprintf(stderr, "kernel_crash: the region returned (seen=%d)\n", seen);
  return 3;
}
