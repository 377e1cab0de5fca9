// The heartbeat link over MPI: its own communicator (a duplicate of the
// job's), so beats never match the transport's or the program's receives.
#pragma once

#include <memory>

#include "comm/heartbeat.h"

namespace taskgrid::comm::mpi {

// Collective over MPI_COMM_WORLD (duplicates it). Needs MPI_THREAD_MULTIPLE:
// the watchdog's thread calls MPI beside the engine's.
std::unique_ptr<HeartbeatLink> make_mpi_heartbeat_link();

}  // namespace taskgrid::comm::mpi
