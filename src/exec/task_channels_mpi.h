// Creating the task-aware channels: the MPI side (comm/mpi_backend.cpp).
#pragma once

#include <mpi.h>

#include <memory>

#include "exec/task_channels.h"

namespace taskgrid::exec {

// One communicator per channel, duplicated from `parent` (collective).
std::unique_ptr<TaskChannels> make_task_channels(MPI_Comm parent, int channels, int rank,
                                                 TaskChannels::Fail fail);

}  // namespace taskgrid::exec
