// Internal: the PGAS layer's device state (device.cpp): this rank's device
// backend, its device buffers, a staging buffer, and per group the path of
// device collectives (with the group's NCCL communicator).
#pragma once

#include <cstdint>

#include "pgas/state.h"

namespace taskgrid::pgas {

// Not collective: frees what is left (NCCL communicators, buffers, the
// stream, the backend). Called by finalize() before the groups' communicators go.
void finalize_device(State& s);
// Not collective: destroys `group_id`'s NCCL communicator, if any (free_group).
void release_group_device(State& s, uint32_t group_id);

}  // namespace taskgrid::pgas
