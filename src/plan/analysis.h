// Analysis: what a submission means and where it runs. Owns the dependency
// tracker (handles -> versions, and each handle's directory entry: where its
// current version lives), the version counter, and placement: the policy and
// cost model in cluster mode, owner-computes in spmd mode (deterministic, so
// every rank agrees).
//
// Per submission: resolve() the accesses, place() the task, then (after the
// caller has routed the inputs) add_outputs(). Entries returned by input()
// are the handles' own (graph::HandleState::where): the caller adds the
// holders it routes the version to; they describe the next version once
// add_outputs() has published it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/directory.h"
#include "graph/dependency_tracker.h"
#include "plan/placement_stats.h"
#include "sched/cost_model.h"
#include "sched/placement.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::plan {

struct AnalysisConfig {
  bool spmd = false;
  int rank = 0;  // this planner's rank
  int ranks = 1;
  int threads_per_rank = 1;
  sched::Scheduler scheduler = sched::Scheduler::heft;  // cluster mode only
  double latency_seconds = 5e-6;
  double bandwidth_bytes_per_second = 5e9;
  sched::DeviceSlots devices;    // cluster mode: heft places tasks on them too
  bool placement_stats = false;  // count why tasks went where (TASKGRID_STATS)
};

class Analysis {
 public:
  explicit Analysis(const AnalysisConfig& config);

  const char* scheduler_name() const { return policy_ ? policy_->name() : "owner"; }

  struct Entered {
    DataHandle handle;
    uint64_t version;  // its first version
    int owner;
    int home;  // where the first version is: the owner (spmd) or this rank (cluster)
  };
  // owner < 0: cluster mode, this rank (the head); spmd mode, handle id modulo ranks.
  Entered enter(void* host, size_t bytes, int owner);
  // The `home` the next enter(…, owner) will give.
  int next_home(int owner) const {
    if (!config_.spmd) return config_.rank;
    if (owner >= 0) return owner;
    return static_cast<int>((tracker_.next_handle_id() - 1) % static_cast<uint64_t>(config_.ranks));
  }

  // Resolves a task's accesses (throws Error on misuse, changing nothing).
  // Here, not in analysis.cpp: on every submission's path, and LTO stopped
  // inlining it into Planner::submit once that grew (30 instructions a task).
  const std::vector<graph::ResolvedAccess>& resolve(const DataAccess* accesses, size_t count) {
    tracker_.resolve(accesses, count, next_version_, resolved_);
    if (inputs_.size() != count) inputs_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      const graph::ResolvedAccess& r = resolved_[i];
      inputs_[i] = r.in_version ? &entry_of(r.in_version, *r.state) : nullptr;
    }
    return resolved_;
  }
  // Access i's input version (nullptr when access i does not read).
  data::VersionInfo* input(size_t i) const { return inputs_[i]; }
  // Places the task resolved last: the rank hint, else the policy (cluster)
  // or its owner (spmd). `task_id` places a task without data. `has_cpu`
  // and `has_device`: the function's implementations. placed_device() is
  // then the task's comm::wire::Task::device.
  int place(uint32_t function, const TaskOptions& options, uint64_t task_id, bool has_cpu = true,
            bool has_device = false);
  int placed_device() const { return placed_device_; }
  // The task resolved last runs on this planner's engines: counts it on its handles.
  void count_in_flight() { graph::DependencyTracker::count_in_flight(resolved_); }
  // The versions the task resolved last creates exist from now on, on
  // `rank`. For each (in access order), retire(the resolved access, the
  // entry of the version it supersedes) is called first, while the entry
  // still describes it (its holders must drop it), then the handle's entry
  // becomes the new version's.
  // Inline: once per submission (outlined: ~16 more instructions a task in
  // bench/planner/'s Local, the call and the captured state).
  template <typename Retire>
  [[gnu::always_inline]] void add_outputs(int rank, Retire&& retire) {
    const double ready_at = policy_ ? policy_->estimated_finish() : 0.0;
    for (const graph::ResolvedAccess& r : resolved_) {
      if (!r.out_version) continue;
      graph::HandleState& state = *r.state;
      retire(r, entry_of(r.superseded, state));
      state.where.reset(r.bytes, rank, ready_at, placed_device_ >= 0 ? placed_device_ : -1);
      state.published = r.out_version;
    }
  }

  // A task placed on `rank` finished after `seconds`, on a device or a CPU.
  void task_completed(uint32_t function, double seconds, int rank, bool on_device = false) {
    if (!policy_) return;  // only the policy reads durations
    costs_.record_duration(function, seconds,
                           on_device ? sched::Executor::device : sched::Executor::cpu);
    policy_->completed(rank);
  }

  graph::DependencyTracker& tracker() { return tracker_; }
  // The directory entry of `version`, which must be the version `state`'s
  // handle last published (std::logic_error otherwise: the planner lost
  // track of a version).
  static data::VersionInfo& entry_of(uint64_t version, graph::HandleState& state) {
    if (state.published != version) not_published(version, state);
    return state.where;
  }
  uint64_t next_version() const { return next_version_; }
  // Why tasks went where they did (PlacementStats::report); "" unless
  // AnalysisConfig::placement_stats.
  std::string placement_report() const;

 private:
  double now() const;
  // cluster: the policy decides (and is told about hinted tasks).
  int place_by_policy(uint32_t function, const TaskOptions& options, bool has_cpu, bool has_device);
  // spmd: the rank hint, else owner computes.
  int place_by_owner(const TaskOptions& options, uint64_t task_id) const;
  // TASKGRID_STATS: why the task went to `rank`.
  void count_placement(uint32_t function, const TaskOptions& options, int rank);
  [[noreturn]] static void not_published(uint64_t version, const graph::HandleState& state);

  AnalysisConfig config_;
  sched::CostModel costs_;
  std::unique_ptr<sched::PlacementPolicy> policy_;   // cluster mode
  std::unique_ptr<PlacementStats> placement_stats_;  // with TASKGRID_STATS only
  bool uses_clock_ = false;                          // heft: estimates need the clock
  double assumed_seconds_ = 0;  // heft's duration for the last task's unmeasured function
  const uint64_t start_ns_;
  graph::DependencyTracker tracker_;
  uint64_t next_version_ = 1;

  // Of the task resolved last.
  std::vector<graph::ResolvedAccess> resolved_;
  std::vector<data::VersionInfo*> inputs_;
  std::vector<sched::PlacedInput> placed_inputs_;
  int placed_device_ = TaskOptions::any_device;
};

}  // namespace taskgrid::plan
