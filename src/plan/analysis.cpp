#include "plan/analysis.h"

#include <stdexcept>
#include <string>

#include "trace/trace.h"

namespace taskgrid::plan {

Analysis::Analysis(const AnalysisConfig& config)
    : config_(config),
      costs_(config.latency_seconds, config.bandwidth_bytes_per_second),
      start_ns_(trace::now_ns()) {
  costs_.set_device_link(config.devices.link_latency_seconds, config.devices.link_bandwidth);
  if (!config.spmd) {
    policy_ = sched::make_policy(config.scheduler, config.ranks, config.threads_per_rank, costs_,
                                 config.devices);
    uses_clock_ = std::string(policy_->name()) == "heft";
  }
  if (config.placement_stats) placement_stats_ = std::make_unique<PlacementStats>(config.ranks);
}

std::string Analysis::placement_report() const {
  return placement_stats_ ? placement_stats_->report(scheduler_name(), costs_) : std::string();
}

double Analysis::now() const {
  // Only heft reads times; the others skip a clock read per submission.
  return uses_clock_ ? static_cast<double>(trace::now_ns() - start_ns_) * 1e-9 : 0.0;
}

Analysis::Entered Analysis::enter(void* host, size_t bytes, int owner) {
  const uint64_t id = tracker_.next_handle_id();
  if (owner < 0) owner = config_.spmd ? static_cast<int>((id - 1) % config_.ranks) : 0;
  const uint64_t version = next_version_++;
  const DataHandle handle = tracker_.add_handle(host, bytes, version, owner);
  // The first version starts where the program's data is: on the owner in
  // spmd mode; on the head in cluster mode, where only the head has the
  // program's memory (the owner is then just recorded).
  const int home = config_.spmd ? owner : config_.rank;
  graph::HandleState& state = tracker_.state(handle);
  state.where.reset(bytes, home, now());
  state.published = version;
  return {handle, version, owner, home};
}

void Analysis::not_published(uint64_t version, const graph::HandleState& state) {
  throw std::logic_error("directory: version " + std::to_string(version) + " of data handle " +
                         std::to_string(state.id) + " is not its current one (" +
                         std::to_string(state.published) + ")");
}

int Analysis::place(uint32_t function, const TaskOptions& options, uint64_t task_id, bool has_cpu,
                    bool has_device) {
  placed_device_ = options.device;
  const int rank = policy_ ? place_by_policy(function, options, has_cpu, has_device)
                           : place_by_owner(options, task_id);
  if (placement_stats_) [[unlikely]]
    count_placement(function, options, rank);
  return rank;
}

int Analysis::place_by_policy(uint32_t function, const TaskOptions& options, bool has_cpu,
                              bool has_device) {
  // The policy sees where each input version lives (and is told about
  // hinted tasks too: they load their rank).
  placed_inputs_.clear();
  for (const data::VersionInfo* info : inputs_)
    if (info) placed_inputs_.push_back({info});
  sched::PlacementRequest request{function, options.cost, placed_inputs_.data(),
                                  placed_inputs_.size(), now()};
  request.has_cpu = has_cpu;
  request.has_device = has_device;
  request.device_hint = options.device;
  int rank = options.rank;
  if (rank < 0)
    rank = policy_->place_and_book(request);
  else
    policy_->placed(request, rank);
  placed_device_ = policy_->chosen_device(options.device);
  assumed_seconds_ = 0;
  if (placement_stats_ && uses_clock_ && sched::uncalibrated(costs_, request)) [[unlikely]]
    assumed_seconds_ = sched::estimated_task_seconds(costs_, request);
  return rank;
}

// Out of line: only TASKGRID_STATS pays for it (place() stays inlined in submit).
[[gnu::noinline]] void Analysis::count_placement(uint32_t function, const TaskOptions& options,
                                                 int rank) {
  bool inputs_there = true;
  for (const data::VersionInfo* info : inputs_) inputs_there &= !info || info->holds(rank);
  placement_stats_->count(function, rank, options.rank >= 0, inputs_there,
                          policy_ ? assumed_seconds_ : 0);
}

int Analysis::place_by_owner(const TaskOptions& options, uint64_t task_id) const {
  if (options.rank >= 0) return options.rank;
  // spmd: owner computes. Deterministic on every rank by construction.
  for (const graph::ResolvedAccess& r : resolved_)
    if (r.out_version) return r.owner;
  for (const graph::ResolvedAccess& r : resolved_)
    if (r.in_version) return r.owner;
  return static_cast<int>(task_id % static_cast<uint64_t>(config_.ranks));
}

}  // namespace taskgrid::plan
