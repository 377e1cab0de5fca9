#include "mpi_abort.h"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace taskbench {

int rank_from_environment() {
  // MPICH's Hydra sets PMI_RANK, Open MPI OMPI_COMM_WORLD_RANK, PMIx
  // launchers (Slurm, PRRTE) PMIX_RANK.
  for (const char* name : {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"})
    if (const char* value = std::getenv(name)) return std::atoi(value);
  return 0;
}

bool mpi_running() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

[[noreturn]] void abort_job(const std::string& diagnostic) {
  static std::atomic_flag reported = ATOMIC_FLAG_INIT;
  if (!reported.test_and_set()) {
    const bool mpi_up = mpi_running();
    int rank = rank_from_environment();
    if (mpi_up) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "error: rank %d: %s\n", rank, diagnostic.c_str());
    std::fflush(stderr);
    std::fflush(stdout);
    if (mpi_up) {
      // MPICH's launcher tears the job down on MPI_Abort and may drop output
      // it has not forwarded yet: give it a moment to carry the message out.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::_Exit(1);
  }
  // Another thread is already taking the job down.
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

}  // namespace taskbench
