#include "runtime/cluster_planner.h"

#include <chrono>
#include <functional>

#include "trace/trace.h"

namespace taskgrid::runtime {
namespace {

// Transfer tags start above the transport's control tags.
constexpr int kFirstDataTag = 16;
// A rank's batch is flushed by the engine loop once it is this old, so a
// program that submits a little and then computes still gets its tasks run.
constexpr uint64_t kBatchMaxAgeNs = 100'000;

}  // namespace

ClusterPlanner::ClusterPlanner(Engine& engine, const PlannerConfig& config)
    : engine_(engine),
      config_(config),
      costs_(config.latency_seconds, config.bandwidth_bytes_per_second),
      policy_(sched::make_policy(config.scheduler, config.ranks, config.threads_per_rank, costs_)),
      batches_(static_cast<size_t>(config.ranks)),
      batch_since_ns_(static_cast<size_t>(config.ranks), 0),
      start_ns_(trace::now_ns()) {}

double ClusterPlanner::now() const { return static_cast<double>(trace::now_ns() - start_ns_) * 1e-9; }

int ClusterPlanner::next_tag() {
  // Tags cycle; a collision needs 2^28 transfers in flight between one pair.
  tag_ = tag_ >= config_.max_tag - kFirstDataTag ? 0 : tag_ + 1;
  return kFirstDataTag + tag_;
}

void ClusterPlanner::flush(int rank) {
  wire::BatchWriter& batch = batches_[static_cast<size_t>(rank)];
  if (batch.empty()) return;
  engine_.post(rank, std::move(batch.bytes()));
  batch.bytes() = {};
  batch_since_ns_[static_cast<size_t>(rank)] = 0;
}

void ClusterPlanner::flush_all() {
  for (int r = 0; r < config_.ranks; ++r) flush(r);
}

void ClusterPlanner::retire(uint64_t version) {
  directory_.remove(version, retired_holders_);
  for (int holder : retired_holders_)
    batches_[static_cast<size_t>(holder)].add(wire::Kind::retire, wire::Retire{version});
}

DataHandle ClusterPlanner::enter_data(void* host, size_t bytes) {
  if (!host && bytes > 0) throw Error("taskgrid::enter_data: null pointer with a non-zero size");
  // map(to:) copies now: the program may reuse its buffer afterwards.
  char* buffer = data::allocate_buffer(bytes);
  if (bytes) std::memcpy(buffer, host, bytes);
  std::lock_guard lock(mutex_);
  if (stopped_) throw Error("taskgrid::enter_data after finish()");
  const uint64_t version = next_version_++;
  const DataHandle handle = tracker_.add_handle(host, bytes, version);
  directory_.add(version, bytes, 0, now());
  batches_[0].add(wire::Kind::create, wire::Create{version, bytes, buffer});
  return handle;
}

void ClusterPlanner::submit(FunctionId function, const DataAccess* accesses, size_t count,
                            const TaskOptions& options, const void* args, size_t args_bytes) {
  const detail::RegisteredFunction* registered = detail::find_function(function);
  if (!registered)
    throw Error("taskgrid::submit: function id " + std::to_string(function.value) +
                " is not registered");
  if (options.rank >= config_.ranks || options.rank < -1)
    throw Error("taskgrid::submit: rank hint " + std::to_string(options.rank) +
                " is outside the job (" + std::to_string(config_.ranks) + " ranks)");
  std::unique_lock lock(mutex_);
  if (stopped_) throw Error("taskgrid::submit after finish()");
  tracker_.resolve(accesses, count, next_version_, resolved_);

  // Placement sees where each input version lives.
  placed_inputs_.clear();
  for (const graph::ResolvedAccess& r : resolved_)
    if (r.in_version) placed_inputs_.push_back({&directory_.at(r.in_version)});
  const sched::PlacementRequest request{function.value, options.cost, placed_inputs_.data(),
                                        placed_inputs_.size(), now()};
  const int rank = options.rank >= 0 ? options.rank : policy_->place(request);
  policy_->placed(request, rank);
  const double finish_estimate = policy_->estimated_finish();

  const uint64_t task_id = next_task_id_++;
  wire_accesses_.resize(count);
  auto [slot, inserted] = in_flight_.try_emplace(
      task_id, InFlight{rank, function.value, std::pmr::vector<uint64_t>(&memory_)});
  for (size_t i = 0; i < count; ++i) {
    const graph::ResolvedAccess& r = resolved_[i];
    wire::Access& w = wire_accesses_[i];
    w = wire::Access{r.in_version, r.out_version, r.bytes, -1, 0, static_cast<uint8_t>(r.mode), {}};
    if (r.in_version) {
      data::VersionInfo& info = directory_.at(r.in_version);
      if (!info.holds(rank)) {
        // Order the transfer from a holder, preferably the producer.
        const int source = info.holds(info.producer) ? info.producer : info.holders.front();
        const int tag = next_tag();
        batches_[static_cast<size_t>(source)].add(wire::Kind::send,
                                                  wire::Send{r.in_version, rank, tag});
        info.holders.push_back(rank);
        w.source = source;
        w.tag = tag;
      }
    }
    slot->second.handles.push_back(r.handle);
    tracker_.state(DataHandle{r.handle}).tasks_in_flight += 1;
  }
  batches_[static_cast<size_t>(rank)].add_task(
      wire::Task{task_id, function.value, static_cast<uint32_t>(count),
                 static_cast<uint32_t>(args_bytes), 0},
      wire_accesses_.data(), args);
  // New versions exist from now on; the versions they replace get no new
  // readers, so every holder may drop them once its current uses are done.
  for (const graph::ResolvedAccess& r : resolved_) {
    if (!r.out_version) continue;
    directory_.add(r.out_version, r.bytes, rank, finish_estimate);
    retire(r.superseded);
  }
  submitted_ += 1;
  for (int r = 0; r < config_.ranks; ++r) {
    wire::BatchWriter& batch = batches_[static_cast<size_t>(r)];
    if (batch.empty()) continue;
    if (batch_since_ns_[static_cast<size_t>(r)] == 0) batch_since_ns_[static_cast<size_t>(r)] = trace::now_ns();
    if (batch.size() >= config_.batch_bytes) flush(r);
  }
}

void ClusterPlanner::wait_until(std::unique_lock<std::mutex>& lock,
                                const std::function<bool()>& done) {
  flush_all();
  changed_.wait(lock, done);
}

void ClusterPlanner::wait_all() {
  std::unique_lock lock(mutex_);
  wait_until(lock, [this] { return completed_ == submitted_; });
}

void ClusterPlanner::wait(DataHandle handle) {
  std::unique_lock lock(mutex_);
  tracker_.state(handle);  // throws for unknown handles
  wait_until(lock, [&] { return tracker_.state(handle).tasks_in_flight == 0; });
}

void ClusterPlanner::fetch(DataHandle handle) {
  std::unique_lock lock(mutex_);
  graph::HandleState& state = tracker_.state(handle);
  wait_until(lock, [&] { return state.tasks_in_flight == 0; });
  if (!state.host) return;
  const uint64_t version = state.current_version;
  data::VersionInfo& info = directory_.at(version);
  wire::Fetch fetch{version, -1, 0, state.host, state.bytes};
  if (!info.holds(0)) {
    fetch.source = info.holds(info.producer) ? info.producer : info.holders.front();
    fetch.tag = next_tag();
    batches_[static_cast<size_t>(fetch.source)].add(wire::Kind::send,
                                                    wire::Send{version, 0, fetch.tag});
  }
  batches_[0].add(wire::Kind::fetch, fetch);
  fetches_pending_.insert(version);
  wait_until(lock, [&] { return fetches_pending_.count(version) == 0; });
}

void ClusterPlanner::release(DataHandle handle) {
  std::lock_guard lock(mutex_);
  retire(tracker_.release(handle));
}

void ClusterPlanner::shutdown() {
  std::unique_lock lock(mutex_);
  wait_until(lock, [this] { return completed_ == submitted_; });
  stopped_ = true;
  for (int r = 0; r < config_.ranks; ++r)
    batches_[static_cast<size_t>(r)].add(wire::Kind::shutdown, char{0});
  flush_all();
}

void ClusterPlanner::on_completed(const wire::Completed* records, size_t count) {
  {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < count; ++i) {
      auto it = in_flight_.find(records[i].task_id);
      if (it == in_flight_.end()) continue;
      for (uint64_t handle : it->second.handles)
        tracker_.any_state(handle).tasks_in_flight -= 1;
      costs_.record_duration(it->second.function, static_cast<double>(records[i].duration_ns) * 1e-9);
      policy_->completed(it->second.rank);
      in_flight_.erase(it);
      completed_ += 1;
    }
  }
  changed_.notify_all();
}

void ClusterPlanner::on_fetched(uint64_t version) {
  {
    std::lock_guard lock(mutex_);
    fetches_pending_.erase(version);
  }
  changed_.notify_all();
}

void ClusterPlanner::on_poll() {
  // Never block the engine behind a submitting thread: try, else next time.
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  const uint64_t now_ns = trace::now_ns();
  for (int r = 0; r < config_.ranks; ++r) {
    uint64_t& since = batch_since_ns_[static_cast<size_t>(r)];
    if (since != 0 && now_ns - since >= kBatchMaxAgeNs) flush(r);
  }
}

}  // namespace taskgrid::runtime
