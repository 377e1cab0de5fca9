// Cluster mode's central planner, on rank 0 (the head): turns submitted tasks
// into versioned accesses, places them, and sends each rank batches of task
// descriptors ahead of time. A descriptor says which version each input is
// and which rank sends it; producers send straight to consumers (the head
// only orders the transfer). Completions come back in batches.
#pragma once

#include <condition_variable>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "comm/wire.h"
#include "data/directory.h"
#include "graph/dependency_tracker.h"
#include "runtime/engine.h"
#include "sched/cost_model.h"
#include "sched/placement.h"

namespace taskgrid::runtime {

struct PlannerConfig {
  int ranks = 1;
  int threads_per_rank = 1;
  int max_tag = 32767;
  std::string scheduler = "heft";
  size_t batch_bytes = 16 << 10;  // flush a rank's batch at this size
  double latency_seconds = 5e-6;
  double bandwidth_bytes_per_second = 5e9;
};

class ClusterPlanner final : public EngineListener {
 public:
  ClusterPlanner(Engine& engine, const PlannerConfig& config);

  DataHandle enter_data(void* host, size_t bytes);
  void submit(FunctionId function, const DataAccess* accesses, size_t count,
              const TaskOptions& options, const void* args, size_t args_bytes);
  void wait_all();
  void wait(DataHandle handle);
  void fetch(DataHandle handle);
  void release(DataHandle handle);
  // Waits for all tasks, then tells every rank to stop.
  void shutdown();
  const char* scheduler_name() const { return policy_->name(); }

  // EngineListener (engine thread).
  void on_completed(const wire::Completed* records, size_t count) override;
  void on_fetched(uint64_t version) override;
  void on_poll() override;

 private:
  struct InFlight {
    int rank;
    uint32_t function;
    std::pmr::vector<uint64_t> handles;
  };
  int next_tag();
  double now() const;
  // Caller holds mutex_.
  void retire(uint64_t version);
  void flush(int rank);
  void flush_all();
  void wait_until(std::unique_lock<std::mutex>& lock, const std::function<bool()>& done);

  Engine& engine_;
  PlannerConfig config_;
  sched::CostModel costs_;
  std::unique_ptr<sched::PlacementPolicy> policy_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::pmr::unsynchronized_pool_resource memory_;
  graph::DependencyTracker tracker_;
  data::Directory directory_;
  std::vector<wire::BatchWriter> batches_;
  std::vector<uint64_t> batch_since_ns_;
  std::pmr::unordered_map<uint64_t, InFlight> in_flight_{&memory_};
  std::unordered_set<uint64_t> fetches_pending_;
  uint64_t next_task_id_ = 1;
  uint64_t next_version_ = 1;
  int tag_ = 0;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  bool stopped_ = false;
  const uint64_t start_ns_;

  // Reused per submission.
  std::vector<graph::ResolvedAccess> resolved_;
  std::vector<sched::PlacedInput> placed_inputs_;
  std::vector<wire::Access> wire_accesses_;
  std::vector<int> retired_holders_;
};

}  // namespace taskgrid::runtime
