// taskgrid::ranks_sharing_cores() and threads_per_rank() against the
// affinity masks the ranks run with. `sharing_cores unbound`: the masks as
// the launcher left them (nothing bound here: every rank of the node shares
// every core); `sharing_cores bound`: each rank binds itself, before start,
// to CPU rank % 2 of those it may use, so ranks of the same parity share one
// CPU. Prints "sharing_cores: ok" on rank 0 when every rank saw what it
// should (needs 2 usable CPUs for `bound`; it says so and passes otherwise).
#include <mpi.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <taskgrid/taskgrid.hpp>
#include <vector>

int main(int argc, char** argv) {
  const bool bound = argc > 1 && std::strcmp(argv[1], "bound") == 0;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cpu_set_t mask;
  sched_getaffinity(0, sizeof mask, &mask);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
  int usable_everywhere = static_cast<int>(cpus.size());
  MPI_Allreduce(MPI_IN_PLACE, &usable_everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (bound && usable_everywhere < 2) {
    if (rank == 0) std::printf("sharing_cores: ok (skipped: fewer than 2 usable CPUs)\n");
    MPI_Finalize();
    return 0;
  }
  if (bound) {
    CPU_ZERO(&mask);
    CPU_SET(cpus[static_cast<size_t>(rank % 2)], &mask);
    sched_setaffinity(0, sizeof mask, &mask);
  }
  taskgrid::start(&argc, &argv, taskgrid::Mode::spmd);
  // All ranks are on this node; bound, the ranks of this rank's parity.
  const int expected_sharing = bound ? (size + 1 - rank % 2) / 2 : size;
  const int cores = bound ? 1 : static_cast<int>(cpus.size());
  const int expected_threads = cores / expected_sharing > 1 ? cores / expected_sharing : 1;
  int wrong = 0;
  // The default thread count is checked where it is in effect.
  const bool default_threads = std::getenv("TASKGRID_THREADS") == nullptr;
  if (taskgrid::ranks_sharing_cores() != expected_sharing ||
      (default_threads && taskgrid::threads_per_rank() != expected_threads)) {
    std::printf(
        "sharing_cores: rank %d: ranks_sharing_cores() %d (expected %d), threads %d "
        "(expected %d)\n",
        rank, taskgrid::ranks_sharing_cores(), expected_sharing, taskgrid::threads_per_rank(),
        expected_threads);
    wrong = 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && !wrong) std::printf("sharing_cores: ok\n");
  std::fflush(stdout);
  const int status = taskgrid::finish(wrong);
  MPI_Finalize();  // the program initialised MPI: it finalises it
  return status;
}
