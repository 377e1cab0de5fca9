// BroadcastGroups: readers of one version on ranks that do not hold it,
// gathered while the planning window is open and delivered together (a
// broadcast with the configured strategy when two or more ranks read it, a
// point-to-point transfer for one). Owns the pending groups in opening order,
// the member sets of the MPI broadcasts issued so far (each costs a
// communicator) and the communicators still to be created (spmd, mpi). It
// writes the delivery commands into the command batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "coll/broadcast.h"
#include "data/directory.h"
#include "plan/batches.h"
#include "plan/tags.h"

namespace taskgrid::plan {

struct BroadcastConfig {
  coll::Strategy strategy = coll::Strategy::none;
  size_t min_bytes = 64 << 10;  // smaller inputs are sent point to point
  size_t chunk = 0;             // 0: from the cost model
  size_t max_message = size_t{1} << 30;
  double latency_seconds = 5e-6;
  double bandwidth_bytes_per_second = 5e9;
  int rank = 0;  // this planner's rank
  int ranks = 1;
  bool spmd = false;
  // Per rank, the lowest rank on its node (empty: every rank on its own).
  std::vector<int32_t> node_of_rank;
};

class BroadcastGroups {
 public:
  BroadcastGroups(const BroadcastConfig& config, CommandBatches& batches, TransferTags& tags);

  // Whether an input of `bytes` not on its reader's rank joins a group.
  bool detects(size_t bytes) const {
    return config_.strategy != coll::Strategy::none && config_.ranks > 2 &&
           bytes >= config_.min_bytes;
  }
  // Adds `reader` to the group of `version` (opened now if there is none,
  // rooted at a holder) and returns the group's tag. The caller records the
  // reader as a holder.
  int join(uint64_t version, const data::VersionInfo& info, int reader, uint64_t submissions);

  bool empty() const { return pending_.empty(); }
  size_t pending() const { return pending_.size(); }
  // Delivers the groups opened at least `window` submissions ago.
  void deliver_due(uint64_t submissions);
  void deliver_all();
  // Delivers the group of `version` if it is pending, and every group opened
  // before it (groups go out in opening order: a root posts an MPI broadcast
  // only once its data exists, so a younger group first could wait for data
  // that needs an older one, a deadlock).
  void deliver_through(uint64_t version);
  // Cluster mode: delivers every group once the oldest is `max_age_ns` old.
  void deliver_if_older_than(uint64_t now_ns, uint64_t max_age_ns);

  // spmd, mpi: the communicators that the groups delivered since the last
  // call need (members, tag); the caller creates them outside its lock.
  bool has_communicators_to_create() const { return !comms_to_create_.empty(); }
  std::vector<std::pair<std::vector<int32_t>, int>> take_communicators_to_create() {
    return std::exchange(comms_to_create_, {});
  }

  // The strategy that delivers a group rooted at `root` to `members` (its
  // ranks, sorted).
  coll::Strategy strategy_for(int root, const std::vector<int32_t>& members) const;
  // Submissions a group stays open for.
  uint64_t window() const;

 private:
  struct Group {
    uint64_t version;
    size_t bytes;
    int root;
    int tag;
    uint64_t opened_at;  // submission count
    uint64_t opened_ns;  // cluster mode only
    std::vector<int32_t> readers;
  };
  void deliver(Group& group);
  void deliver_first(size_t count);

  BroadcastConfig config_;
  CommandBatches& batches_;
  TransferTags& tags_;
  std::vector<Group> pending_;  // in opening order
  std::vector<std::pair<std::vector<int32_t>, int>> comms_to_create_;
  std::set<std::vector<int32_t>> mpi_member_sets_;
};

}  // namespace taskgrid::plan
