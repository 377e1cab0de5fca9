// The fatal handler of the MPI-based systems (mpi, mpi_omp, taskgrid,
// taskgrid_spmd): one rank's failure ends the whole job, naming that rank.
#pragma once

#include <string>

namespace taskbench {

// The rank the launcher put in the environment (PMI_RANK, OMPI_COMM_WORLD_RANK
// or PMIX_RANK; 0 without a launcher): the rank before MPI runs,
// e.g. to print usage messages once.
int rank_from_environment();

// Whether MPI is initialised and not yet finalised.
bool mpi_running();

// Fatal handler for taskbench::set_fatal_handler: prints "error: rank <r>:
// <diagnostic>" (MPI's rank, else rank_from_environment()) and ends the job
// with MPI_Abort, or with exit status 1 while MPI is not running. Only the
// first failing thread reports; the others wait to be taken down. A thread
// other than MPI's main one (MPI_THREAD_FUNNELED) may call it too: ending the
// job loudly matters more than the thread level, and MPICH and Open MPI both
// support it.
[[noreturn]] void abort_job(const std::string& diagnostic);

}  // namespace taskbench
