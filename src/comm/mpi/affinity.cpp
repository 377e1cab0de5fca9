#include "comm/mpi/affinity.h"

#include <sched.h>

namespace taskgrid::comm::mpi {

int usable_cores() {
  cpu_set_t mask;
  return sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : 0;
}

std::vector<bool> ranks_sharing_my_cores(MPI_Comm node) {
  int me = 0;
  int ranks = 1;
  MPI_Comm_rank(node, &me);
  MPI_Comm_size(node, &ranks);
  cpu_set_t mine;
  // Left empty where unreadable: an empty mask overlaps every other below.
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);
  std::vector<cpu_set_t> masks(static_cast<size_t>(ranks));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, masks.data(), sizeof mine, MPI_BYTE, node);
  std::vector<bool> sharing(static_cast<size_t>(ranks), false);
  for (int peer = 0; peer < ranks; ++peer) {
    cpu_set_t& theirs = masks[static_cast<size_t>(peer)];
    cpu_set_t common;
    CPU_AND(&common, &mine, &theirs);
    sharing[static_cast<size_t>(peer)] =
        peer == me || CPU_COUNT(&mine) == 0 || CPU_COUNT(&theirs) == 0 || CPU_COUNT(&common) > 0;
  }
  return sharing;
}

}  // namespace taskgrid::comm::mpi
