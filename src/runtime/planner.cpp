#include "runtime/planner.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "data/buffer_pool.h"
#include "runtime/function_registry.h"
#include "trace/trace.h"

namespace taskgrid::runtime {
namespace {

// Transfer tags start above the transport's control tags.
constexpr int kFirstDataTag = 16;
// A rank's batch is flushed by the engine loop once it is this old, so a
// program that submits a little and then computes still gets its tasks run.
constexpr uint64_t kBatchMaxAgeNs = 100'000;
// By-value arguments travel in every descriptor: large data belongs in handles.
constexpr size_t kMaxArgsBytes = 64 << 10;
// Readers of a version gathered for a broadcast: the group is delivered once
// this many tasks were submitted after it opened (the same point on every
// rank in spmd mode), or at the next wait, fetch, release or supersession.
constexpr uint64_t kMinBroadcastWindow = 64;

}  // namespace

Planner::Planner(CommandSink& sink, const PlannerConfig& config)
    : sink_(sink),
      config_(config),
      costs_(config.latency_seconds, config.bandwidth_bytes_per_second),
      batches_(static_cast<size_t>(config.ranks)),
      batch_since_ns_(static_cast<size_t>(config.ranks), 0),
      start_ns_(trace::now_ns()) {
  if (!spmd()) {
    policy_ = sched::make_policy(config.scheduler, config.ranks, config.threads_per_rank, costs_);
    uses_clock_ = std::string(policy_->name()) == "heft";
  }
}

const char* Planner::scheduler_name() const { return policy_ ? policy_->name() : "owner"; }

double Planner::now() const {
  // Only heft reads times; the others skip a clock read per submission.
  return uses_clock_ ? static_cast<double>(trace::now_ns() - start_ns_) * 1e-9 : 0.0;
}

int Planner::next_tag() {
  // Tags cycle; a collision needs 2^28 transfers in flight between one pair.
  // In spmd mode every rank draws the same tags in the same order.
  tag_ = tag_ >= config_.max_tag - kFirstDataTag ? 0 : tag_ + 1;
  return kFirstDataTag + tag_;
}

void Planner::flush(int rank) {
  wire::BatchWriter& batch = batches_[static_cast<size_t>(rank)];
  batch_since_ns_[static_cast<size_t>(rank)] = 0;
  if (batch.empty()) return;
  sink_.post(rank, std::move(batch.bytes()));
  batch.bytes() = {};
  batch.reserve(config_.batch_bytes + 1024);
}

void Planner::flush_all() {
  for (int r = first_emitting_rank(); r < end_emitting_rank(); ++r) flush(r);
}

void Planner::retire(uint64_t version) {
  // Readers gathered for a broadcast get it before the holders may drop it.
  deliver_broadcast_of(version);
  directory_.remove(version, retired_holders_);
  for (int holder : retired_holders_)
    if (emits_for(holder))
      batches_[static_cast<size_t>(holder)].add(wire::Kind::retire, wire::Retire{version});
}

int Planner::owner(DataHandle handle) {
  std::lock_guard lock(mutex_);
  tracker_.state(handle);
  return owners_[handle.id - 1];
}

DataHandle Planner::enter_data(void* host, size_t bytes, int owner) {
  if (!host && bytes > 0) throw Error("taskgrid::enter_data: null pointer with a non-zero size");
  if (owner >= config_.ranks)
    throw Error("taskgrid::enter_data: owner rank " + std::to_string(owner) +
                " is outside the job (" + std::to_string(config_.ranks) + " ranks)");
  std::lock_guard lock(mutex_);
  if (stopped_) throw Error("taskgrid::enter_data after finish()");
  const uint64_t version = next_version_++;
  const DataHandle handle = tracker_.add_handle(host, bytes, version);
  if (owner < 0) owner = spmd() ? static_cast<int>((handle.id - 1) % config_.ranks) : 0;
  owners_.push_back(owner);
  // The first version starts where the program's data is: on the owner in
  // spmd mode; on the head in cluster mode, where only the head has the
  // program's memory (the owner is then just recorded).
  const int home = spmd() ? owner : config_.rank;
  directory_.add(version, bytes, home, now());
  if (emits_for(home)) {
    // map(to:) copies now: the program may reuse its buffer afterwards.
    char* buffer = data::allocate_buffer(bytes);
    if (bytes) std::memcpy(buffer, host, bytes);
    batches_[static_cast<size_t>(home)].add(wire::Kind::create,
                                            wire::Create{version, bytes, buffer});
  }
  if (config_.divergence) config_.divergence->record_data(bytes, owner);
  return handle;
}

int Planner::place(const sched::PlacementRequest& request, const TaskOptions& options) {
  if (options.rank >= 0) return options.rank;
  if (policy_) return policy_->place(request);
  // spmd: owner computes. Deterministic on every rank by construction.
  for (const graph::ResolvedAccess& r : resolved_)
    if (r.out_version) return owners_[r.handle - 1];
  for (const graph::ResolvedAccess& r : resolved_)
    if (r.in_version) return owners_[r.handle - 1];
  return static_cast<int>(next_task_id_ % static_cast<uint64_t>(config_.ranks));
}

void Planner::submit(FunctionId function, const DataAccess* accesses, size_t count,
                     const TaskOptions& options, const void* args, size_t args_bytes) {
  if (!detail::find_function(function))
    throw Error("taskgrid::submit: function id " + std::to_string(function.value) +
                " is not registered");
  if (options.rank >= config_.ranks || options.rank < -1)
    throw Error("taskgrid::submit: rank hint " + std::to_string(options.rank) +
                " is outside the job (" + std::to_string(config_.ranks) + " ranks)");
  if (options.channel < -1 || options.channel >= config_.channels)
    throw Error("taskgrid::submit: channel " + std::to_string(options.channel) +
                " does not exist (TASKGRID_CHANNELS=" + std::to_string(config_.channels) + ")");
  if (args_bytes > kMaxArgsBytes)
    throw Error("taskgrid::submit: " + std::to_string(args_bytes) +
                " bytes of by-value arguments; the limit is " + std::to_string(kMaxArgsBytes) +
                " (register large data with enter_data)");
  std::unique_lock lock(mutex_);
  if (stopped_) throw Error("taskgrid::submit after finish()");
  if (window_full()) wait_for_window(lock);
  tracker_.resolve(accesses, count, next_version_, resolved_);
  if (config_.divergence)
    config_.divergence->record_task(function.value, accesses, count, options.rank, args,
                                    args_bytes);

  // Placement sees where each input version lives.
  placed_inputs_.clear();
  for (const graph::ResolvedAccess& r : resolved_)
    if (r.in_version) placed_inputs_.push_back({&directory_.at(r.in_version)});
  const sched::PlacementRequest request{function.value, options.cost, placed_inputs_.data(),
                                        placed_inputs_.size(), now()};
  const int rank = place(request, options);
  if (policy_) policy_->placed(request, rank);
  const double finish_estimate = policy_ ? policy_->estimated_finish() : 0.0;
  const bool local = emits_for(rank);

  const uint64_t task_id = next_task_id_++;
  wire_accesses_.resize(count);
  InFlight* record = nullptr;
  if (local)
    record = &in_flight_
                  .try_emplace(task_id, InFlight{rank, function.value, options.channel >= 0,
                                                 std::pmr::vector<uint64_t>(&memory_)})
                  .first->second;
  for (size_t i = 0; i < count; ++i) {
    const graph::ResolvedAccess& r = resolved_[i];
    wire::Access& w = wire_accesses_[i];
    w = wire::Access{r.in_version, r.out_version, r.bytes, -1, 0, static_cast<uint8_t>(r.mode), {}};
    if (r.in_version) {
      data::VersionInfo& info = directory_.at(r.in_version);
      if (!info.holds(rank) && detects_broadcasts(r.bytes)) {
        // Gather the reader ranks of this version: delivered together, as a
        // broadcast when tasks on two or more ranks read it.
        PendingBroadcast& group = pending_broadcast(r.in_version, info);
        group.readers.push_back(rank);
        info.holders.push_back(rank);
        w.source = wire::kSourceBroadcast;
        w.tag = group.tag;
      } else if (!info.holds(rank)) {
        // Order the transfer from a holder, preferably the producer; the
        // consumer's rank holds a replica from now on, so later readers there
        // take it from its store (one transfer per rank and version).
        const int source = info.holds(info.producer) ? info.producer : info.holders.front();
        const int tag = next_tag();
        if (emits_for(source))
          batches_[static_cast<size_t>(source)].add(wire::Kind::send,
                                                    wire::Send{r.in_version, rank, tag});
        info.holders.push_back(rank);
        w.source = source;
        w.tag = tag;
      }
    }
    if (record) {
      record->handles.push_back(r.handle);
      tracker_.state(DataHandle{r.handle}).tasks_in_flight += 1;
    }
  }
  if (local) {
    const auto name_bytes = static_cast<uint32_t>(options.name ? std::strlen(options.name) : 0);
    batches_[static_cast<size_t>(rank)].add_task(
        wire::Task{task_id, function.value, static_cast<uint32_t>(count),
                   static_cast<uint32_t>(args_bytes), options.channel, name_bytes, 0},
        wire_accesses_.data(), args, options.name);
  }
  // New versions exist from now on; the versions they replace get no new
  // readers, so every holder may drop them once its current uses are done.
  for (const graph::ResolvedAccess& r : resolved_) {
    if (!r.out_version) continue;
    directory_.add(r.out_version, r.bytes, rank, finish_estimate);
    retire(r.superseded);
  }
  if (local) {
    submitted_ += 1;
    if (options.channel >= 0) communicating_in_flight_ += 1;
  }
  submissions_ += 1;
  if (!pending_broadcasts_.empty()) deliver_broadcasts(false);
  for (int r = first_emitting_rank(); r < end_emitting_rank(); ++r) {
    if (batches_[static_cast<size_t>(r)].empty()) continue;
    uint64_t& since = batch_since_ns_[static_cast<size_t>(r)];
    if (since == 0) since = trace::now_ns();
    if (batches_[static_cast<size_t>(r)].size() >= config_.batch_bytes) flush(r);
  }
  if (!comms_to_create_.empty()) create_broadcast_comms(lock);
  if (config_.divergence && config_.divergence->due()) {
    lock.unlock();
    config_.divergence->check();
  }
}

// ----------------------------------------------------------- broadcasts ---

Planner::PendingBroadcast& Planner::pending_broadcast(uint64_t version,
                                                      const data::VersionInfo& info) {
  for (PendingBroadcast& group : pending_broadcasts_)
    if (group.version == version) return group;
  const int root = info.holds(info.producer) ? info.producer : info.holders.front();
  pending_broadcasts_.push_back(
      {version, info.bytes, root, next_tag(), submissions_, trace::now_ns(), {}});
  return pending_broadcasts_.back();
}

coll::Strategy Planner::strategy_for(const PendingBroadcast& group,
                                     const std::vector<int32_t>& members) const {
  // A single reader is served point to point (a p2p "broadcast" to one).
  if (members.size() <= 2) return coll::Strategy::p2p;
  coll::Strategy strategy = config_.broadcast;
  // Within one node every copy crosses the same memory, not a link of its
  // own, so trees buy nothing and MPI's shared-memory broadcast is fastest
  // (8 ranks, 256 MiB, Open MPI: mpi 0.38 s, tree 0.67 s, pipeline 0.83 s).
  if (strategy == coll::Strategy::automatic && !config_.node_of_rank.empty() &&
      std::all_of(members.begin(), members.end(), [&](int32_t rank) {
        return config_.node_of_rank[static_cast<size_t>(rank)] ==
               config_.node_of_rank[static_cast<size_t>(group.root)];
      }))
    strategy = coll::Strategy::mpi;
  // Each member set costs a communicator (MPICH has a few thousand context
  // ids in all): past the cap, new sets go by tree. Every spmd planner sees
  // the same sets in the same order, so all choose alike.
  constexpr size_t kMaxMpiMemberSets = 64;
  if (strategy == coll::Strategy::mpi && mpi_member_sets_.size() >= kMaxMpiMemberSets &&
      mpi_member_sets_.count(members) == 0)
    strategy = coll::Strategy::tree;
  return strategy;
}

void Planner::deliver(PendingBroadcast& group) {
  const int participants = static_cast<int>(group.readers.size()) + 1;
  std::vector<int32_t> members = group.readers;
  members.push_back(group.root);
  std::sort(members.begin(), members.end());
  const coll::Plan plan =
      coll::choose_plan(strategy_for(group, members), group.bytes, participants,
                        {config_.latency_seconds, config_.bandwidth_bytes_per_second},
                        config_.broadcast_chunk, config_.max_message);
  if (plan.strategy == coll::Strategy::mpi) {
    mpi_member_sets_.insert(members);
    const wire::MpiBroadcast command{group.version,
                                     group.bytes,
                                     plan.chunk_bytes,
                                     group.root,
                                     group.tag,
                                     static_cast<uint32_t>(members.size()),
                                     0};
    for (int32_t member : members)
      if (emits_for(member))
        batches_[static_cast<size_t>(member)].add(wire::Kind::mpi_broadcast, command,
                                                  members.data(), members.size() * sizeof(int32_t));
    if (spmd()) {
      const bool member = std::binary_search(members.begin(), members.end(), config_.rank);
      if (member) comms_to_create_.emplace_back(std::move(members), group.tag);
    } else {
      // Members create the communicator together when they join: every one
      // must have its command now (the head's own batch last, so the head's
      // engine cannot block before the others' batches are out).
      for (int32_t member : members)
        if (member != config_.rank) flush(member);
      flush(config_.rank);
    }
    return;
  }
  if (!emits_for(group.root)) return;
  const wire::Route route{group.version,
                          group.bytes,
                          plan.chunk_bytes,
                          group.tag,
                          static_cast<uint32_t>(group.readers.size()),
                          static_cast<uint8_t>(plan.shape),
                          static_cast<uint8_t>(plan.forward_each_chunk),
                          {}};
  batches_[static_cast<size_t>(group.root)].add(wire::Kind::broadcast, route, group.readers.data(),
                                                group.readers.size() * sizeof(int32_t));
}

void Planner::deliver_broadcasts(bool all) {
  const uint64_t window =
      std::max<uint64_t>(kMinBroadcastWindow, 4 * static_cast<uint64_t>(config_.ranks));
  size_t delivered = 0;
  for (; delivered < pending_broadcasts_.size(); ++delivered) {
    PendingBroadcast& group = pending_broadcasts_[delivered];
    if (!all && submissions_ - group.opened_at < window) break;  // later ones opened later
    deliver(group);
  }
  pending_broadcasts_.erase(pending_broadcasts_.begin(),
                            pending_broadcasts_.begin() + static_cast<std::ptrdiff_t>(delivered));
}

void Planner::deliver_broadcast_of(uint64_t version) {
  // Groups are delivered in the order they opened, always: MPI broadcasts
  // sharing a communicator are posted in delivery order, and a root posts
  // only once its data exists, so a group delivered ahead of an older one
  // could wait for data that needs the older one (a deadlock).
  for (size_t i = 0; i < pending_broadcasts_.size(); ++i) {
    if (pending_broadcasts_[i].version != version) continue;
    for (size_t j = 0; j <= i; ++j) deliver(pending_broadcasts_[j]);
    pending_broadcasts_.erase(pending_broadcasts_.begin(),
                              pending_broadcasts_.begin() + static_cast<std::ptrdiff_t>(i + 1));
    return;
  }
}

void Planner::create_broadcast_comms(std::unique_lock<std::mutex>& lock) {
  std::vector<std::pair<std::vector<int32_t>, int>> todo;
  todo.swap(comms_to_create_);
  // Blocking and collective among the members: never while holding the
  // planner lock, which the engine thread needs to report completions.
  lock.unlock();
  for (const auto& [members, tag] : todo) sink_.prepare_broadcast_group(members, tag);
  lock.lock();
}

void Planner::wait_until(std::unique_lock<std::mutex>& lock, const std::function<bool()>& done) {
  deliver_broadcasts(true);
  flush_all();
  if (!comms_to_create_.empty()) create_broadcast_comms(lock);
  if (config_.divergence) {
    // Collective: every rank reaches it at the same point of its sequence.
    lock.unlock();
    config_.divergence->check();
    lock.lock();
  }
  waiters_ += 1;
  changed_.wait(lock, done);
  waiters_ -= 1;
}

bool Planner::window_full() const {
  // Never while readers are gathered for a broadcast (in spmd every rank
  // delivers them at the same point of its sequence, which a rank waiting
  // here would not reach) or while channel tasks are in flight (their peers
  // may be tasks this rank has not submitted yet).
  return config_.window > 0 && submitted_ - completed_ >= config_.window &&
         pending_broadcasts_.empty() && communicating_in_flight_ == 0;
}

void Planner::wait_for_window(std::unique_lock<std::mutex>& lock) {
  flush_all();  // the engines must have the tasks to finish them
  window_waiting_ = true;
  window_open_.wait(lock, [this] { return submitted_ - completed_ <= config_.window / 2; });
  window_waiting_ = false;
}

void Planner::wait_all() {
  std::unique_lock lock(mutex_);
  wait_until(lock, [this] { return completed_ == submitted_; });
}

void Planner::wait(DataHandle handle) {
  std::unique_lock lock(mutex_);
  tracker_.state(handle);  // throws for unknown handles
  wait_until(lock, [&] { return tracker_.state(handle).tasks_in_flight == 0; });
}

void Planner::fetch(DataHandle handle) {
  std::unique_lock lock(mutex_);
  graph::HandleState& state = tracker_.state(handle);
  const int home = spmd() ? owners_[handle.id - 1] : 0;
  const uint64_t version = state.current_version;
  data::VersionInfo& info = directory_.at(version);
  wire::Fetch fetch{version, -1, 0, state.host, state.bytes};
  // No host buffer (a 0-byte handle entered with nullptr): nothing to bring
  // home, so no transfer may be ordered either (nobody would receive it).
  if (!info.holds(home) && state.host) {
    fetch.source = info.holds(info.producer) ? info.producer : info.holders.front();
    fetch.tag = next_tag();
    if (emits_for(fetch.source))
      batches_[static_cast<size_t>(fetch.source)].add(wire::Kind::send,
                                                      wire::Send{version, home, fetch.tag});
  }
  const bool receives = emits_for(home) && state.host;
  if (receives) {
    batches_[static_cast<size_t>(home)].add(wire::Kind::fetch, fetch);
    fetches_pending_.insert(version);
  }
  wait_until(lock, [&] {
    return state.tasks_in_flight == 0 && (!receives || fetches_pending_.count(version) == 0);
  });
}

void Planner::release(DataHandle handle) {
  std::unique_lock lock(mutex_);
  retire(tracker_.release(handle));
  if (!comms_to_create_.empty()) create_broadcast_comms(lock);
}

void Planner::shutdown() {
  std::unique_lock lock(mutex_);
  wait_until(lock, [this] { return completed_ == submitted_; });
  stopped_ = true;
  for (int r = 0; r < config_.ranks; ++r)
    if (emits_for(r)) batches_[static_cast<size_t>(r)].add(wire::Kind::shutdown, char{0});
  // This rank's own batch last: once its engine applies the shutdown it may
  // stop, and every other rank's batch must have been handed to it by then.
  for (int r = 0; r < config_.ranks; ++r)
    if (r != config_.rank) flush(r);
  flush(config_.rank);
}

void Planner::on_completed(const wire::Completed* records, size_t count) {
  bool wake = false;
  bool window_opens = false;
  {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < count; ++i) {
      auto it = in_flight_.find(records[i].task_id);
      if (it == in_flight_.end()) continue;
      for (uint64_t handle : it->second.handles)
        if (--tracker_.any_state(handle).tasks_in_flight == 0) wake = true;
      costs_.record_duration(it->second.function,
                             static_cast<double>(records[i].duration_ns) * 1e-9);
      if (policy_) policy_->completed(it->second.rank);
      if (it->second.communicates) communicating_in_flight_ -= 1;
      in_flight_.erase(it);
      completed_ += 1;
    }
    // Wake a waiting program only when what it waits for may have happened
    // (all tasks done, or some handle's tasks done): waking it per completion
    // costs two context switches per task.
    wake = waiters_ > 0 && (wake || completed_ == submitted_);
    // A full window reopens at half: one wake-up per window/2 tasks, not per task.
    window_opens = window_waiting_ && submitted_ - completed_ <= config_.window / 2;
  }
  if (wake) changed_.notify_all();
  if (window_opens) window_open_.notify_one();
}

void Planner::on_fetched(uint64_t version) {
  {
    std::lock_guard lock(mutex_);
    fetches_pending_.erase(version);
  }
  changed_.notify_all();
}

void Planner::on_poll() {
  // Never block the engine behind a submitting thread: try, else next time.
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  const uint64_t now_ns = trace::now_ns();
  // Cluster mode: the head may also deliver gathered readers once they have
  // waited as long as a batch may (never in spmd mode, where every rank must
  // deliver at the same point of the program).
  if (!spmd() && !pending_broadcasts_.empty() &&
      now_ns - pending_broadcasts_.front().opened_ns >= kBatchMaxAgeNs)
    deliver_broadcasts(true);
  for (int r = first_emitting_rank(); r < end_emitting_rank(); ++r) {
    const uint64_t since = batch_since_ns_[static_cast<size_t>(r)];
    if (since != 0 && now_ns - since >= kBatchMaxAgeNs) flush(r);
  }
}

}  // namespace taskgrid::runtime
