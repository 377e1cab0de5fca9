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
//
// The Planner is a composition of parts that own their state (src/plan/):
// Analysis (dependencies, directory, placement), BroadcastGroups (readers
// gathered per version), CommandBatches (per-rank batches and their
// flushing) and InFlightTasks (what completions and waits need). It holds
// the one mutex, routes each input (a send from a holder, or a broadcast
// group), and retires superseded versions.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "coll/broadcast.h"
#include "comm/blocking.h"
#include "comm/futex_lock.h"
#include "comm/wire.h"
#include "core/command_sink.h"
#include "core/function_registry.h"
#include "plan/analysis.h"
#include "plan/batches.h"
#include "plan/broadcast_groups.h"
#include "plan/divergence_check.h"
#include "plan/in_flight.h"
#include "plan/tags.h"

namespace taskgrid::plan {

enum class PlannerMode { cluster, spmd };

struct PlannerConfig {
  PlannerMode mode = PlannerMode::cluster;
  int rank = 0;  // the rank this planner runs on
  int ranks = 1;
  int threads_per_rank = 1;
  int max_tag = 32767;
  int channels = 0;                                     // task-aware communication channels
  sched::Scheduler scheduler = sched::Scheduler::heft;  // cluster mode only
  size_t batch_bytes = 16 << 10;                        // flush a rank's batch at this size
  double latency_seconds = 5e-6;
  double bandwidth_bytes_per_second = 5e9;
  // Cluster mode: each rank's device count and stream cap (heft places
  // tasks on devices too). Empty: no rank has devices.
  sched::DeviceSlots devices;
  DivergenceCheck* divergence = nullptr;  // spmd only
  // Broadcast detection (see Planner::submit) and delivery.
  coll::Strategy broadcast = coll::Strategy::none;
  size_t broadcast_min_bytes = 64 << 10;
  size_t broadcast_chunk = 0;            // 0: from the cost model
  size_t max_message = size_t{1} << 30;  // the transport's chunk limit
  // Per rank, the lowest rank on its node (empty: every rank on its own).
  std::vector<int32_t> node_of_rank;
  // Count why tasks went where (Planner::placement_report; TASKGRID_STATS).
  bool placement_stats = false;
  // Tasks this planner waits for that may be in flight before submit() waits
  // for some to finish (0: no limit): bounds the engines' memory, and a
  // program far ahead of its tasks gains nothing.
  uint64_t window = 0;
  // Bytes the tasks in flight may write before submit() waits (0: no limit).
  uint64_t window_bytes = 0;
};

class Planner final : public core::EngineListener {
 public:
  Planner(core::CommandSink& sink, const PlannerConfig& config);
  ~Planner();  // takes its waiter back from the divergence check (which outlives it)

  // owner < 0: cluster mode, the head; spmd mode, handle id modulo ranks.
  // With `fill` false the runtime's first version is left uninitialised (no
  // copy from `host`, which may then be null): for data whose first access
  // writes it, or whose host buffer only receives (fetch).
  DataHandle enter_data(void* host, size_t bytes, int owner, bool fill = true);
  // Checked mode: the last `signature_bytes` of the arguments are their
  // types (core/arg_signature.h).
  void submit(FunctionId function, const DataAccess* accesses, size_t count,
              const TaskOptions& options, const void* args, size_t args_bytes,
              size_t signature_bytes = 0);
  void wait_all();
  void wait(DataHandle handle);
  // Where fetch() copies the latest version: kHome is rank 0's host buffer in
  // cluster mode and the owner's in spmd; in spmd a rank (every rank makes the
  // call) or kAllRanks (every rank's host buffer) may be chosen instead.
  static constexpr int kHome = -2;
  static constexpr int kAllRanks = -1;
  void fetch(DataHandle handle, int to = kHome);
  void release(DataHandle handle);
  // Waits for this planner's tasks, then stops the engines it commands.
  void shutdown();
  const char* scheduler_name() const;
  // Why the tasks planned here went where they did, a few lines per rank
  // ("" unless PlannerConfig::placement_stats).
  std::string placement_report();
  // For tests: hands every batch to the sink; the tasks in flight, and how
  // many of them the in-flight table keeps outside its ring.
  void flush_for_tests();
  uint64_t in_flight_for_tests();
  size_t in_flight_moved_aside_for_tests();
  int owner(DataHandle handle);
  // The rank the current version of `handle` is (or will be) sent from:
  // its producer while it holds it (checkpoints write it there).
  int holder(DataHandle handle);

  // EngineListener (engine thread).
  void on_completed(const comm::wire::Completed* records, size_t count) override;
  void on_fetched(uint64_t version) override;
  void on_poll() override;

 private:
  bool spmd() const { return config_.mode == PlannerMode::spmd; }
  // Caller holds mutex_.
  // Orders input `r` of a task on `rank` from where it is: a send from a
  // holder, or a broadcast group for large inputs; says where it comes from
  // (`source`, `tag`).
  void route_input(const graph::ResolvedAccess& r, data::VersionInfo& info, int rank,
                   int32_t& source, int32_t& tag);
  // Tells the holders of `version` (its entry `where`) to drop it, all but
  // `folded` (-1: none), whose superseding task's access says so instead.
  void retire(uint64_t version, const data::VersionInfo& where, int folded);
  // Whether access `r` of a task encoded here retires, on the task's rank,
  // the version it reads (comm::wire::kRetiresInput): it reads and writes
  // the same handle, so its input is the version its output supersedes. Not
  // for a version a broadcast may carry: its group's commands for the task's
  // rank may be delivered after the task (a later batch), and the rank must
  // still hold the version then, as the retire command after them ensured.
  bool retires_own_input(const graph::ResolvedAccess& r) const {
    return r.mode == AccessMode::inout && r.in_version == r.superseded &&
           !broadcasts_.detects(r.bytes);
  }
  // Without mutex_ (spmd, mpi strategy): creates the communicators that the
  // broadcasts delivered since the last call need, at the same point of the
  // program on every member.
  void create_broadcast_comms(std::unique_lock<comm::FutexLock>& lock);
  // A submitting thread runs a pass of the engine every this many submissions.
  static constexpr uint64_t kHelpEvery = 64;
  void wait_until(std::unique_lock<comm::FutexLock>& lock, const std::function<bool()>& done);
  // Waits (lock held on entry and exit) until `done`, driving the sink if it can.
  void block(std::unique_lock<comm::FutexLock>& lock, comm::Condition& condition,
             const std::function<bool()>& done);
  // Waits while the window is full (see PlannerConfig::window).
  void wait_for_window(std::unique_lock<comm::FutexLock>& lock);
  bool window_full() const;
  bool window_half_empty() const;
  // Whether a task with a device implementation, sent to `rank` with
  // comm::wire::Task::device `device`, runs on a device there (any_device: the
  // engine's choice, a device wherever the rank has one).
  bool runs_on_device(int device, int rank) const {
    if (device >= 0) return true;
    const std::vector<int>& per_rank = config_.devices.devices_per_rank;
    return device == TaskOptions::any_device && static_cast<size_t>(rank) < per_rank.size() &&
           per_rank[static_cast<size_t>(rank)] > 0;
  }

  core::CommandSink& sink_;
  PlannerConfig config_;

  // The lock and both conditions block through the sink's Blocking.
  comm::FutexLock mutex_;  // guards everything below
  comm::Condition changed_;
  plan::TransferTags tags_;
  plan::CommandBatches batches_;
  plan::Analysis analysis_;
  core::LocalTaskBuilder* const local_builder_;  // nullptr: this rank's tasks are encoded too
  plan::BroadcastGroups broadcasts_;
  plan::InFlightTasks in_flight_;
  std::unordered_set<uint64_t> fetches_pending_;
  uint64_t submissions_ = 0;
  uint64_t next_task_id_ = 1;
  // The function submitted last (registered functions are never removed).
  const detail::RegisteredFunction* last_function_ = nullptr;
  uint32_t last_function_id_ = 0;
  int waiters_ = 0;  // program threads blocked in wait_until
  // The program waits in wait_for_window, on its own condition: the waits of
  // wait_until wake on every drained handle, which would wake it for nothing.
  bool window_waiting_ = false;
  comm::Condition window_open_;
  bool stopped_ = false;
};

}  // namespace taskgrid::plan
