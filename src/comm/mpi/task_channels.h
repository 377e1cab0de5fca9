// Task-aware channels over MPI: exec::TaskChannels (exec/task_channels.h) is
// defined in task_channels.cpp beside this, since its requests are MPI's.
// Created by the MPI backend (comm/mpi/backend.cpp).
#pragma once

#include <mpi.h>

#include <memory>

#include "exec/task_channels.h"

namespace taskgrid::comm::mpi {

// One communicator per channel, duplicated from `parent` (collective).
std::unique_ptr<exec::TaskChannels> make_task_channels(MPI_Comm parent, int channels, int rank,
                                                       exec::TaskChannels::Fail fail);

}  // namespace taskgrid::comm::mpi
