#include "plan/broadcast_groups.h"

#include <algorithm>

#include "trace/trace.h"

namespace taskgrid::plan {
namespace {

// Readers of a version gathered for a broadcast: the group is delivered once
// this many tasks were submitted after it opened (the same point on every
// rank in spmd mode), or at the next wait, fetch, release or supersession.
constexpr uint64_t kMinBroadcastWindow = 64;
// Each member set of an MPI broadcast costs a communicator (MPICH has a few
// thousand context ids in all): past this many, new sets go by tree.
constexpr size_t kMaxMpiMemberSets = 64;

}  // namespace

BroadcastGroups::BroadcastGroups(const BroadcastConfig& config, CommandBatches& batches,
                                 TransferTags& tags)
    : config_(config), batches_(batches), tags_(tags) {}

uint64_t BroadcastGroups::window() const {
  return std::max<uint64_t>(kMinBroadcastWindow, 4 * static_cast<uint64_t>(config_.ranks));
}

int BroadcastGroups::join(uint64_t version, const data::VersionInfo& info, int reader,
                          uint64_t submissions) {
  for (Group& group : pending_)
    if (group.version == version) {
      group.readers.push_back(reader);
      return group.tag;
    }
  // Only cluster mode delivers by age; spmd ranks never read the clock here.
  const uint64_t now_ns = config_.spmd ? 0 : trace::now_ns();
  pending_.push_back(
      {version, info.bytes, info.source(), tags_.next(), submissions, now_ns, {reader}});
  return pending_.back().tag;
}

coll::Strategy BroadcastGroups::strategy_for(int root, const std::vector<int32_t>& members) const {
  // A single reader is served point to point (a p2p "broadcast" to one).
  if (members.size() <= 2) return coll::Strategy::p2p;
  coll::Strategy strategy = config_.strategy;
  // Within one node every copy crosses the same memory, not a link of its
  // own, so trees buy nothing and MPI's shared-memory broadcast is fastest
  // (8 ranks, 256 MiB, Open MPI: mpi 0.38 s, tree 0.67 s, pipeline 0.83 s).
  if (strategy == coll::Strategy::automatic && !config_.node_of_rank.empty() &&
      std::all_of(members.begin(), members.end(), [&](int32_t rank) {
        return config_.node_of_rank[static_cast<size_t>(rank)] ==
               config_.node_of_rank[static_cast<size_t>(root)];
      }))
    strategy = coll::Strategy::mpi;
  // Every spmd planner sees the same sets in the same order, so all choose
  // alike past the cap.
  if (strategy == coll::Strategy::mpi && mpi_member_sets_.size() >= kMaxMpiMemberSets &&
      mpi_member_sets_.count(members) == 0)
    strategy = coll::Strategy::tree;
  return strategy;
}

void BroadcastGroups::deliver(Group& group) {
  const int participants = static_cast<int>(group.readers.size()) + 1;
  std::vector<int32_t> members = group.readers;
  members.push_back(group.root);
  std::sort(members.begin(), members.end());
  const coll::Plan plan =
      coll::choose_plan(strategy_for(group.root, members), group.bytes, participants,
                        {config_.latency_seconds, config_.bandwidth_bytes_per_second},
                        config_.chunk, config_.max_message);
  if (plan.strategy == coll::Strategy::mpi) {
    mpi_member_sets_.insert(members);
    const comm::wire::MpiBroadcast command{group.version,
                                           group.bytes,
                                           plan.chunk_bytes,
                                           group.root,
                                           group.tag,
                                           static_cast<uint32_t>(members.size()),
                                           0};
    for (int32_t member : members)
      if (batches_.emits_for(member))
        batches_.to(member).add(comm::wire::Kind::mpi_broadcast, command, members.data(),
                                members.size() * sizeof(int32_t));
    if (config_.spmd) {
      if (std::binary_search(members.begin(), members.end(), config_.rank))
        comms_to_create_.emplace_back(std::move(members), group.tag);
    } else {
      // Members create the communicator together when they join: every one
      // must have its command now (the head's own batch last, so the head's
      // engine cannot block before the others' batches are out).
      for (int32_t member : members)
        if (member != config_.rank) batches_.flush(member);
      batches_.flush(config_.rank);
    }
    return;
  }
  if (!batches_.emits_for(group.root)) return;
  const comm::wire::Route route{group.version,
                                group.bytes,
                                plan.chunk_bytes,
                                group.tag,
                                static_cast<uint32_t>(group.readers.size()),
                                static_cast<uint8_t>(plan.shape),
                                static_cast<uint8_t>(plan.forward_each_chunk),
                                {}};
  batches_.to(group.root)
      .add(comm::wire::Kind::broadcast, route, group.readers.data(),
           group.readers.size() * sizeof(int32_t));
}

void BroadcastGroups::deliver_first(size_t count) {
  for (size_t i = 0; i < count; ++i) deliver(pending_[i]);
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(count));
}

void BroadcastGroups::deliver_due(uint64_t submissions) {
  const uint64_t open_for = window();
  size_t due = 0;
  // Later groups opened later: stop at the first that is not due.
  while (due < pending_.size() && submissions - pending_[due].opened_at >= open_for) ++due;
  deliver_first(due);
}

void BroadcastGroups::deliver_all() { deliver_first(pending_.size()); }

void BroadcastGroups::deliver_through(uint64_t version) {
  for (size_t i = 0; i < pending_.size(); ++i)
    if (pending_[i].version == version) return deliver_first(i + 1);
}

void BroadcastGroups::deliver_if_older_than(uint64_t now_ns, uint64_t max_age_ns) {
  if (!pending_.empty() && now_ns - pending_.front().opened_ns >= max_age_ns) deliver_all();
}

}  // namespace taskgrid::plan
