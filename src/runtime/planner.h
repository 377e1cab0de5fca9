// The planner: turns submitted tasks into versioned accesses, places them,
// and issues engine commands (comm/wire.h). One planner, two modes:
//
//  cluster  rank 0 (the head) runs the program and plans for every rank: it
//           sends each rank batches of task descriptors ahead of time; the
//           engines report completions back in batches.
//  spmd     every rank runs the program and submits the same sequence; every
//           rank plans the whole sequence (a replicated planner) but keeps
//           only the commands for itself: its own tasks, and the sends and
//           receives its tasks' inputs and outputs require. No head, no
//           control messages. Placement is deterministic: the rank hint, else
//           the owner of the first written handle, else of the first read.
//
// In both modes a task's input descriptor says which version it reads and
// which rank sends it; producers send straight to consumers.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <set>
#include <unordered_set>
#include <vector>

#include "coll/broadcast.h"
#include "comm/wire.h"
#include "data/directory.h"
#include "data/node_pool.h"
#include "graph/dependency_tracker.h"
#include "runtime/command_sink.h"
#include "runtime/divergence_check.h"
#include "sched/cost_model.h"
#include "sched/placement.h"

namespace taskgrid::runtime {

enum class PlannerMode { cluster, spmd };

struct PlannerConfig {
  PlannerMode mode = PlannerMode::cluster;
  int rank = 0;  // the rank this planner runs on
  int ranks = 1;
  int threads_per_rank = 1;
  int max_tag = 32767;
  int channels = 0;                // task-aware communication channels
  std::string scheduler = "heft";  // cluster mode only
  size_t batch_bytes = 16 << 10;   // flush a rank's batch at this size
  double latency_seconds = 5e-6;
  double bandwidth_bytes_per_second = 5e9;
  DivergenceCheck* divergence = nullptr;  // spmd only
  // Broadcast detection (see Planner::submit) and delivery.
  coll::Strategy broadcast = coll::Strategy::none;
  size_t broadcast_min_bytes = 64 << 10;
  size_t broadcast_chunk = 0;            // 0: from the cost model
  size_t max_message = size_t{1} << 30;  // the transport's chunk limit
  // Per rank, the lowest rank on its node (empty: every rank on its own).
  std::vector<int32_t> node_of_rank;
  // Tasks this planner waits for that may be in flight before submit() waits
  // for some to finish (0: no limit): bounds the engines' memory, and a
  // program far ahead of its tasks gains nothing.
  uint64_t window = 0;
};

class Planner final : public EngineListener {
 public:
  Planner(CommandSink& sink, const PlannerConfig& config);

  // owner < 0: cluster mode, the head; spmd mode, handle id modulo ranks.
  DataHandle enter_data(void* host, size_t bytes, int owner);
  void submit(FunctionId function, const DataAccess* accesses, size_t count,
              const TaskOptions& options, const void* args, size_t args_bytes);
  void wait_all();
  void wait(DataHandle handle);
  // cluster: into rank 0's host buffer; spmd: into the owner's.
  void fetch(DataHandle handle);
  void release(DataHandle handle);
  // Waits for this planner's tasks, then stops the engines it commands.
  void shutdown();
  const char* scheduler_name() const;
  int owner(DataHandle handle);

  // EngineListener (engine thread).
  void on_completed(const wire::Completed* records, size_t count) override;
  void on_fetched(uint64_t version) override;
  void on_poll() override;

 private:
  struct InFlight {
    int rank;
    uint32_t function;
    bool communicates;  // a task-aware communication task (on a channel)
    std::pmr::vector<uint64_t> handles;
  };
  // Readers of one version on ranks that do not hold it, gathered while the
  // planning window is open; delivered together (a broadcast when there are
  // two or more).
  struct PendingBroadcast {
    uint64_t version;
    size_t bytes;
    int root;
    int tag;
    uint64_t opened_at;  // submission count
    uint64_t opened_ns;
    std::vector<int32_t> readers;
  };
  bool spmd() const { return config_.mode == PlannerMode::spmd; }
  bool detects_broadcasts(size_t bytes) const {
    return config_.broadcast != coll::Strategy::none && config_.ranks > 2 &&
           bytes >= config_.broadcast_min_bytes;
  }
  // Commands for `rank` are built only where they will run: every rank's in
  // cluster mode (on the head), only this rank's in spmd mode.
  bool emits_for(int rank) const { return !spmd() || rank == config_.rank; }
  // The ranks whose batches can hold commands, [first, end): in spmd only
  // this rank's, so a submission costs the same whatever the job's size.
  int first_emitting_rank() const { return spmd() ? config_.rank : 0; }
  int end_emitting_rank() const { return spmd() ? config_.rank + 1 : config_.ranks; }
  int place(const sched::PlacementRequest& request, const TaskOptions& options);
  int next_tag();
  double now() const;
  // Caller holds mutex_.
  PendingBroadcast& pending_broadcast(uint64_t version, const data::VersionInfo& info);
  void deliver(PendingBroadcast& group);
  // The strategy that delivers `group` (members: its ranks, sorted).
  coll::Strategy strategy_for(const PendingBroadcast& group,
                              const std::vector<int32_t>& members) const;
  void deliver_broadcasts(bool all);  // all: else only those whose window closed
  void deliver_broadcast_of(uint64_t version);
  // Without mutex_ (spmd, mpi strategy): creates the communicators that the
  // broadcasts delivered since the last call need, at the same point of the
  // program on every member.
  void create_broadcast_comms(std::unique_lock<std::mutex>& lock);
  void retire(uint64_t version);
  void flush(int rank);
  void flush_all();
  void wait_until(std::unique_lock<std::mutex>& lock, const std::function<bool()>& done);
  // Waits while the window is full (see PlannerConfig::window).
  void wait_for_window(std::unique_lock<std::mutex>& lock);
  bool window_full() const;

  CommandSink& sink_;
  PlannerConfig config_;
  sched::CostModel costs_;
  std::unique_ptr<sched::PlacementPolicy> policy_;  // cluster mode
  bool uses_clock_ = false;                         // heft: estimates need the clock

  std::mutex mutex_;
  std::condition_variable changed_;
  data::NodePool memory_;
  graph::DependencyTracker tracker_;
  data::Directory directory_;
  std::vector<int> owners_;  // per handle id - 1
  std::vector<wire::BatchWriter> batches_;
  std::vector<uint64_t> batch_since_ns_;
  std::pmr::unordered_map<uint64_t, InFlight> in_flight_{&memory_};
  std::unordered_set<uint64_t> fetches_pending_;
  std::vector<PendingBroadcast> pending_broadcasts_;  // in opening order
  std::vector<std::pair<std::vector<int32_t>, int>> comms_to_create_;
  // Member sets of the MPI broadcasts issued so far (each has a communicator
  // on its members, which MPI has a limited supply of).
  std::set<std::vector<int32_t>> mpi_member_sets_;
  uint64_t submissions_ = 0;
  uint64_t next_task_id_ = 1;
  uint64_t next_version_ = 1;
  int tag_ = 0;
  uint64_t submitted_ = 0;  // tasks this planner waits for
  uint64_t completed_ = 0;
  int waiters_ = 0;  // program threads blocked in wait_until
  // The program waits in wait_for_window, on its own condition: the waits of
  // wait_until wake on every drained handle, which would wake it for nothing.
  bool window_waiting_ = false;
  std::condition_variable window_open_;
  uint64_t communicating_in_flight_ = 0;  // channel tasks submitted, not completed
  bool stopped_ = false;
  const uint64_t start_ns_;

  // Reused per submission.
  std::vector<graph::ResolvedAccess> resolved_;
  std::vector<sched::PlacedInput> placed_inputs_;
  std::vector<wire::Access> wire_accesses_;
  std::vector<int> retired_holders_;
};

}  // namespace taskgrid::runtime
