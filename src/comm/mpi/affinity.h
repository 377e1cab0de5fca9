// Which ranks of a node share this rank's cores: their CPU affinity masks,
// exchanged once at start. A launcher that binds nothing gives every rank the
// whole node (they all share); srun --cpu-bind or Open MPI's binding gives
// each rank cores of its own (it shares with nobody). The default thread
// count and the idle policy both divide a rank's cores among those sharing
// them, not among all of the node's ranks.
#pragma once

#include <mpi.h>

#include <vector>

namespace taskgrid::comm::mpi {

// The cores this process may run on (its affinity mask; 0 if unreadable).
int usable_cores();

// For each rank of `node` (by its rank there): whether it may run on one of
// this rank's cores; this rank's own entry is true. A mask that cannot be
// read counts as overlapping every other. Collective over `node`.
std::vector<bool> ranks_sharing_my_cores(MPI_Comm node);

}  // namespace taskgrid::comm::mpi
