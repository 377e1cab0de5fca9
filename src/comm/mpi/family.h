#pragma once
// What differs between the two MPI families TaskGrid supports (MPICH and Open
// MPI), in one place: the settings TaskGrid gives an MPI it starts, and the
// checks a layer makes when it needs a part of MPI that one family lacks.
// docs/mpi-families.md lists every difference and where it is handled.

#include <string>

namespace taskgrid::comm::mpi {

// The family this library was compiled against: "MPICH" or "Open MPI".
const char* mpi_family();

// The launcher of this family, by its Debian name: "mpiexec.mpich" or
// "mpirun.openmpi".
const char* mpi_launcher();

// MPI's own version line (MPI_Get_library_version's first line), e.g.
// "MPICH Version: 4.0.2" or "Open MPI v4.1.4, ...". Needs MPI initialised.
std::string mpi_library_version();

// Called just before TaskGrid initialises MPI. Open MPI: selects the one-sided
// components the PGAS layer works with (OMPI_MCA_osc=sm,ucx) unless the user
// chose them. Its default, osc/rdma, crashes in MPI_Compare_and_swap over the
// shared-memory transport (vader) and refuses MPI_Win_create at one rank;
// osc/pt2pt refuses MPI_THREAD_MULTIPLE. MPICH: nothing.
void prepare_mpi_start();

// Empty when MPI's one-sided components can carry the PGAS layer's windows;
// otherwise why not and what to set (Open MPI with osc/rdma selectable).
std::string one_sided_problem();

}  // namespace taskgrid::comm::mpi
