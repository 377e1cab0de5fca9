// A program that uses MPI itself beside target regions. With TaskGrid's
// plugin, MPI is initialised before main (MPI_THREAD_MULTIPLE) and finalised
// after it returns, and only rank 0 runs main (the other ranks are the
// devices): so the program initialises MPI only when it is not yet, finalises
// it only if it did, and communicates on communicators of the ranks that run
// main (here MPI_COMM_SELF), never in collectives over MPI_COMM_WORLD.
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  const int own_mpi = !initialized;
  if (own_mpi) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  }
  enum { kN = 4096 };
  static double v[kN];
  for (int i = 0; i < kN; ++i) v[i] = i;
  const int ndev = omp_get_num_devices();
  const int count = ndev > 0 ? ndev : 1;
  double partial[64] = {0};
  for (int d = 0; d < count && d < 64; ++d) {
    const int dev = ndev > 0 ? d : omp_get_initial_device();
    double sum = 0;
#pragma omp target teams distribute parallel for device(dev) map(to : v) reduction(+ : sum)
    for (int i = 0; i < kN; ++i) sum += v[i] * (d + 1);
    partial[d] = sum;
  }
  double local = 0, total = 0;
  for (int d = 0; d < count && d < 64; ++d) local += partial[d] / (d + 1);
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
  const double want = (double)count * (kN - 1) * kN / 2;
  int self_rank;
  MPI_Comm_rank(MPI_COMM_SELF, &self_rank);
  if (total != want || self_rank != 0) {
    fprintf(stderr, "uses_mpi: total %.1f, want %.1f\n", total, want);
    return 1;
  }
  printf("uses_mpi: ok\n");
  if (own_mpi) MPI_Finalize();
  return 0;
}
