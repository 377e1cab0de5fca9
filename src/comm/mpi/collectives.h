// Collectives over MPI, on a private duplicate of the given communicator, so
// that bookkeeping never matches the transport's or the program's messages.
#pragma once

#include <mpi.h>

#include "comm/collectives.h"

namespace taskgrid::comm::mpi {

class MpiCollectives final : public Collectives {
 public:
  // Collective over `comm`: duplicates it, finds the ranks on this node and
  // which of them share this rank's cores (their affinity masks).
  explicit MpiCollectives(MPI_Comm comm);
  // Frees the duplicate (unless MPI is already finalized).
  ~MpiCollectives() override;
  MpiCollectives(const MpiCollectives&) = delete;
  MpiCollectives& operator=(const MpiCollectives&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int ranks_on_node() const override { return ranks_on_node_; }
  int ranks_sharing_cores() const override { return ranks_sharing_cores_; }

  void allreduce_max(uint64_t* values, size_t count) override;
  std::function<bool()> start_allreduce_max(uint64_t* values, size_t count) override;
  std::vector<std::vector<char>> gather(int root, const void* mine, size_t bytes) override;
  void broadcast(int root, void* data, size_t bytes) override;
  void barrier() override;
  LinkEstimate measure_link() override;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Op max_ = MPI_OP_NULL;  // unsigned 64-bit maximum (see allreduce_max)
  int rank_ = 0;
  int size_ = 1;
  int ranks_on_node_ = 1;
  int ranks_sharing_cores_ = 1;
};

}  // namespace taskgrid::comm::mpi
