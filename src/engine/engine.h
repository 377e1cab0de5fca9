// The per-rank execution engine, the same in every mode: it applies planner
// commands (tasks, sends, retirements, broadcasts) in order, runs tasks whose
// inputs are present, and moves versions peer to peer. It is a loop that
// composes parts which own their state:
//
//   VersionStore      versions this rank holds, their buffers and waiters
//   TaskTable         decoded tasks, the local ready queue, tasks running
//   InPlaceTasks      the records this process's planner builds its rank's tasks in
//   TreeBroadcaster   tree/pipeline/p2p broadcasts (routes and chunks)
//   GroupBroadcaster  the transport's collective broadcasts (`mpi` strategy)
//   TaskChannels      task-aware communication (exec/, the one part on MPI)
//   CompletionBatcher completion records for the head
//   WorkerPool        CPU workers when TASKGRID_THREADS > 1
//   DeviceTasks       tasks on this rank's devices, their replicas and streams
//
// All communication goes through comm::Transport. quiescent() is the
// conjunction of the parts' idle().
//
// Threads: one thread drives the loop at a time. The engine thread drives it
// unless a program thread that must wait drives it instead (drive_until);
// meanwhile the engine thread sleeps, so with one rank per core no thread
// polls beside the one doing the work.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/futex_lock.h"
#include "comm/idle_backoff.h"
#include "comm/transport.h"
#include "comm/wire.h"
#include "core/command_sink.h"
#include "engine/completion_batcher.h"
#include "engine/device_tasks.h"
#include "engine/engine_stats.h"
#include "engine/group_broadcaster.h"
#include "engine/in_place_tasks.h"
#include "engine/task_table.h"
#include "engine/tree_broadcaster.h"
#include "engine/version_store.h"
#include "exec/worker_pool.h"

namespace taskgrid::exec {
class TaskChannels;
}

namespace taskgrid::engine {

class Engine final : public core::CommandSink, private VersionEvents {
 public:
  // `threads` task-running threads: the driving thread plus threads-1
  // workers. `channels`: task-aware communication (nullptr: none).
  Engine(comm::Transport& transport, int threads, int head_rank,
         std::unique_ptr<exec::TaskChannels> channels);
  Engine(comm::Transport& transport, int threads, int head_rank);
  ~Engine() override;
  // How long an idle worker spins before it sleeps, where the rank's task
  // threads fit its cores: a sleeping worker must be woken and scheduled by
  // the kernel before it runs the next ready task, a spinning one sees it at
  // once ("Threads" in docs/architecture.md has the figures).
  static constexpr uint64_t kWorkerSpinNs = 20'000;
  // Tasks shorter than this cost less run by the engine thread that readied
  // them than handed to a worker: the hand-off (the ring, a worker's wake-up,
  // the finished stack and the engine noticing it) took 2 µs on the
  // cross-rank critical path at 8 threads per rank ("Threads" in
  // docs/architecture.md).
  static constexpr uint64_t kKeepShortTaskNs = 2'000;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void set_listener(core::EngineListener* listener) { listener_ = listener; }
  // Measure every task's duration (for a cost model); off, tasks are only
  // timed when tracing. Clock reads are a visible share of a tiny task.
  void set_timing(bool timing) { timing_ = timing; }
  // execute() measures each task (Task::duration_ns).
  bool tasks_timed() const;
  // Checked mode (TASKGRID_CHECK=1): tasks run on guarded copies of their
  // buffers, checked when they end (exec/checked_buffers.h).
  void set_checked(bool checked) { checked_ = checked; }
  // How long completions may wait in a batch for the head (CompletionBatcher).
  void set_completion_delay_ns(uint64_t delay_ns) { completions_.set_delay_ns(delay_ns); }
  // spmd mode: broadcast groups are created by the program thread (prepare).
  void set_engine_creates_groups(bool creates) { groups_.set_engine_creates_groups(creates); }
  // The thread model (TASKGRID_PROGRESS): whether a waiting program thread
  // drives the loop (drive_until) or sleeps while the engine thread does.
  void set_program_drives(bool drives) { program_drives_ = drives; }
  // Runs tasks with a device implementation on `backend`'s devices, with at
  // most `max_streams` streams out per device. Before the first command.
  // `direct_sends`: MPI reads device memory (DeviceTasks).
  void set_devices(std::unique_ptr<device::Backend> backend, int max_streams,
                   bool direct_sends = false);

  // CommandSink. post: thread-safe; a batch for this rank is applied in order
  // with earlier local batches, others are sent as control messages.
  std::vector<char> post(int dest, std::vector<char>&& batch) override;
  void prepare_broadcast_group(const std::vector<int32_t>& members, int tag) override {
    groups_.prepare(members, tag);
  }
  bool drive_until(const std::function<bool()>& done) override;
  void wait_while_driven(const std::function<bool()>& done) override;
  void help() override;
  comm::Blocking& blocking() override { return transport_.blocking(); }
  core::LocalTaskBuilder* local_task_builder() override { return &in_place_; }

  // Runs the loop on the calling thread (the engine thread) until a shutdown
  // command was applied and everything in flight has completed.
  void run();
  void wake() { wakeup_.notify(); }

  int rank() const { return transport_.rank(); }
  EngineStats stats() const {
    EngineStats stats = stats_;
    stats.timing = timing_ ? 1 : 0;
    stats.versions_reclaimed = versions_.reclaimed();
    stats.versions_live = versions_.live();
    stats.version_bytes_held = versions_.held_bytes();
    stats.version_bytes_peak = versions_.peak_held_bytes();
    stats.pool_idle_bytes = versions_.idle_bytes();
    stats.device_replica_bytes = devices_ ? devices_->replica_bytes() : 0;
    return stats;
  }

 private:
  // VersionEvents (the parts call back).
  void version_arrived(Version* version) override { version_ready(version); }
  void version_released(Version* version) override { release_use(version); }
  void wait_on_host(Version* version, const VersionWaiter& waiter) override;
  [[noreturn]] void fail(const std::string& message) override;

  // One pass of the loop, running ready tasks if `run_tasks`; true when
  // anything happened.
  bool progress(bool run_tasks = true);
  // Runs a pool task on the driving thread with the drive lock released, so
  // that a worker finishing meanwhile can make the pass that sends its
  // outputs (worker_finished) instead of waiting for this task to end: with
  // tasks of 250 us on 4 cores per node, a simulated stencil ran at 52% of
  // its cores' speed when the engine thread kept the lock through its task.
  void execute_released(Task* task);
  void worker_finished();
  // Records whether a task just measured was short (tasks_short_).
  void note_task_length(uint64_t ns);
  bool quiescent();
  // Nothing running, ready, in transfer or posted: quiescent but for
  // completions not yet sent.
  bool settled();

  // Commands.
  void apply_batch(const char* data, size_t bytes, int source);
  void apply_task(const char* payload);
  // A task record filled (from a command, or in place by the planner): binds
  // its channel and its versions, and readies it when its inputs are present.
  void link_task(Task* task);
  void apply_send(const comm::wire::Send& send);
  void apply_retire(uint64_t version);
  void apply_create(const comm::wire::Create& create);
  void apply_fetch(const comm::wire::Fetch& fetch);
  // Ends the job: the command being applied contradicts this rank's state.
  [[noreturn]] void protocol_error(const std::string& reason);
  // Versions.
  Version* find_or_fail(uint64_t id, const char* why);
  Version* create_or_fail(uint64_t id, size_t bytes);
  void version_ready(Version* version);
  // A device task made `version` on a device: device tasks waiting for it
  // may start; other waiters need it in host memory, so it is written back.
  [[gnu::cold]] void version_on_device(Version* version);  // cold: keeps finish() lean
  void release_use(Version* version) { versions_.release_use(version); }
  void send_version(Version* version, int dest, int tag);
  // The same for a version only on a device (DeviceTasks::send).
  void send_from_device(Version* version, int dest, int tag);
  void count_send(const Version* version, int dest);  // stats and trace
  void copy_to_host(Version* version, const comm::wire::Fetch& fetch);
  comm::wire::Fetch* keep_fetch(const comm::wire::Fetch& fetch);
  comm::wire::Fetch drop_fetch(const comm::wire::Fetch* fetch);
  // Tasks.
  void make_ready(Task* task);
  // Ends the job: `task` needs a device and this rank has none.
  [[noreturn, gnu::cold]] void refuse_without_device(const Task& task);
  void dispatch_ready();
  void execute(Task* task);
  // The task's function on `context`, marked as running on this thread.
  void run_body(Task* task, TaskContext& context, uint64_t start);
  // Checked mode: the body on guarded copies of the task's buffers, which
  // are checked after it (ends the job naming the task and the fault).
  void execute_checked(Task* task, uint64_t start);
  // The task-aware communication state the task's context carries.
  void* binding(const Task* task);
  void body_finished(Task* task);
  void finish(Task* task);
  void finish_channel_tasks();
  void transfer_done(uint64_t cookie);
  // Loop pieces.
  bool drain_posted();
  bool receive_control();
  bool collect_finished();
  bool poll_devices();
  bool poll_transfers();
  bool run_ready_tasks();

  comm::Transport& transport_;
  core::EngineListener* listener_ = nullptr;
  bool timing_ = true;
  bool checked_ = false;
  bool shutdown_requested_ = false;
  // The command apply_batch is applying and its batch's sender, for messages.
  comm::wire::Kind applying_kind_ = comm::wire::Kind::task;
  int applying_source_ = -1;
  bool program_drives_ = true;
  EngineStats stats_;

  // Parts.
  VersionStore versions_;
  TaskTable tasks_;
  TreeBroadcaster trees_;
  GroupBroadcaster groups_;
  std::unique_ptr<exec::TaskChannels> channels_;
  CompletionBatcher completions_;
  InPlaceTasks in_place_;
  std::unique_ptr<exec::WorkerPool<Task>> workers_;
  std::unique_ptr<DeviceTasks> devices_;  // nullptr: no device on this rank

  // Posted batches (any thread) -> the driving thread. `has_posted_` lets the
  // loop skip the lock when nothing was posted.
  comm::FutexLock posted_mutex_;
  std::atomic<bool> has_posted_{false};
  std::vector<std::pair<int, std::vector<char>>> posted_;
  std::vector<std::pair<int, std::vector<char>>> posted_taken_;
  // Batches this rank applied, emptied, for the planner's next ones: the
  // driving thread collects them in `applied_batches_` and hands them over
  // (to `spare_batches_`, under posted_mutex_) at its next drain.
  std::vector<std::vector<char>> applied_batches_;
  std::vector<std::vector<char>> spare_batches_;
  static constexpr size_t kSpareBatches = 8;

  // Driving: one thread at a time holds drive_mutex_ for a pass of the loop.
  // While a program thread drives (helpers_ > 0) the engine thread sleeps.
  comm::FutexLock drive_mutex_;
  std::atomic<int> helpers_{0};
  std::atomic<int> drivers_in_tasks_{0};  // inside execute_released()
  // Whether the last task measured (by a worker, or by the engine thread for
  // one it kept) ran under kKeepShortTaskNs: written only when it changes, so
  // that workers running the same kind of task do not pass its line around.
  std::atomic<bool> tasks_short_{false};
  // Under the drive lock: whether this pass runs tasks, so may keep one.
  bool keep_short_tasks_ = false;
  // When a program thread last drove or helped: the engine thread stays
  // asleep for kProgramGraceNs after it, as the program is likely back soon.
  // kProgramNeverSeen until then (a simulated clock starts at 0: without it,
  // every rank's engine slept through the job's first millisecond).
  static constexpr uint64_t kProgramNeverSeen = ~uint64_t{0};
  std::atomic<uint64_t> program_seen_ns_{kProgramNeverSeen};
  static constexpr uint64_t kProgramGraceNs = 1'000'000;
  comm::Wakeup wakeup_;
  comm::IdleBackoff backoff_;  // the engine thread's

  // Reused per pass.
  std::vector<Task*> newly_ready_;
  std::vector<Task*> finished_;
  std::vector<Task*> finished_on_devices_;
  std::vector<Version*> written_back_;
  std::vector<void*> channel_done_;
  std::vector<uint64_t> transfers_done_;
  std::vector<char> control_in_;
  std::vector<comm::wire::Completed> completed_remote_;
  // Fetches in progress (rare: the program waits for each): received
  // straight into the program's buffer, or waiting for a local version.
  std::vector<std::unique_ptr<comm::wire::Fetch>> fetches_;
};

}  // namespace taskgrid::engine
