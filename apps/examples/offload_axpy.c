// An unmodified OpenMP program: with TaskGrid's plugin, each device is
// another rank of the MPI job. Built by clang-16 alone:
//   clang-16 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu offload_axpy.c -o offload_axpy
#include <omp.h>
#include <stdio.h>

enum { N = 1 << 20, BLOCKS = 8 };
static double x[N], y[N];

int main(void) {
  const int devices = omp_get_num_devices();  // ranks - 1 with the plugin
  for (int i = 0; i < N; ++i) x[i] = i, y[i] = 1.0;
  const int block = N / BLOCKS;
  for (int b = 0; b < BLOCKS; ++b) {
    const int device = devices > 0 ? b % devices : omp_get_initial_device();
    double* xb = x + b * block;
    double* yb = y + b * block;
    // Blocks run at once on their devices; the depend clause orders the
    // second pass of a block after its first.
#pragma omp target teams distribute parallel for nowait device(device) depend(inout : yb[0]) \
    map(to : xb[0:block]) map(tofrom : yb[0:block])
    for (int i = 0; i < block; ++i) yb[i] += 2.0 * xb[i];
#pragma omp target teams distribute parallel for nowait device(device) depend(inout : yb[0]) \
    map(tofrom : yb[0:block])
    for (int i = 0; i < block; ++i) yb[i] *= 0.5;
  }
#pragma omp taskwait
  double sum = 0;
  for (int i = 0; i < N; ++i) sum += y[i];
  printf("offload_axpy: %d devices, sum %.1f\n", devices, sum);
  return sum == 0.5 * N + (double)N * (N - 1) / 2 ? 0 : 1;
}
