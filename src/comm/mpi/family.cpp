#include "comm/mpi/family.h"

#include <mpi.h>

#include <cstdlib>
#include <string_view>

namespace taskgrid::comm::mpi {

namespace {
// The one-sided components that work with the PGAS layer on Open MPI 4.1:
// sm for shared-memory windows (MPI_Win_allocate_shared, and MPI_Win_allocate
// within a node), ucx for windows over memory the program owns (MPI_Win_create).
constexpr const char* kOpenMpiOsc = "sm,ucx";

#if defined(OPEN_MPI) && OPEN_MPI
constexpr bool kOpenMpi = true;
#else
constexpr bool kOpenMpi = false;
#endif
}  // namespace

const char* mpi_family() { return kOpenMpi ? "Open MPI" : "MPICH"; }

const char* mpi_launcher() { return kOpenMpi ? "mpirun.openmpi" : "mpiexec.mpich"; }

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<size_t>(length));
  if (auto end = version.find_first_of("\r\n"); end != std::string::npos) version.resize(end);
  return version;
}

void prepare_mpi_start() {
  if (kOpenMpi) setenv("OMPI_MCA_osc", kOpenMpiOsc, /*overwrite=*/0);
}

std::string one_sided_problem() {
  if (!kOpenMpi) return {};
  // Open MPI reads the component list from OMPI_MCA_osc at MPI_Init (mpirun's
  // --mca osc LIST sets it too). Unset, it may choose osc/rdma.
  const char* text = std::getenv("OMPI_MCA_osc");
  const std::string_view list = text ? text : "";
  const bool excluding = !list.empty() && list.front() == '^';
  const bool rdma_listed = list.find("rdma") != std::string_view::npos;
  const bool rdma_possible = list.empty() || (excluding ? !rdma_listed : rdma_listed);
  const bool pt2pt_only = list == "pt2pt";
  if (rdma_possible)
    return "Open MPI may choose its osc/rdma one-sided component (OMPI_MCA_osc='" +
           std::string(list) +
           "'), which crashes in MPI_Compare_and_swap over shared memory (vader) and fails "
           "MPI_Win_create at one rank; run with OMPI_MCA_osc=" +
           kOpenMpiOsc +
           " (TaskGrid sets it when it initialises MPI; a program that initialises MPI itself "
           "must set it first)";
  if (pt2pt_only)
    return "Open MPI's osc/pt2pt does not support MPI_THREAD_MULTIPLE; run with OMPI_MCA_osc=" +
           std::string(kOpenMpiOsc);
  return {};
}

}  // namespace taskgrid::comm::mpi
