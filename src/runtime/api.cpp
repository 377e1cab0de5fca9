// The public API (include/taskgrid/taskgrid.hpp): process-wide runtime state,
// start-up (MPI, options, calibration, engine) and shutdown.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "comm/mpi/backend.h"
#include "comm/mpi/family.h"
#include "core/arg_signature.h"
#include "core/failure.h"
#include "core/function_registry.h"
#include "device/backend.h"
#include "device/link_probe.h"
#include "engine/engine.h"
#include "exec/running_task.h"
#include "exec/task_channels.h"
#include "plan/divergence_check.h"
#include "plan/planner.h"
#include "runtime/crash_handlers.h"
#include "runtime/internal_api.h"
#include "runtime/options.h"
#include "runtime/recovery.h"
#include "runtime/simulated_job.h"
#include "runtime/watchdog.h"
#include "trace/trace.h"

namespace taskgrid {

void TaskContext::bad_index(const char* call, size_t index) const {
  throw Error(std::string("TaskContext::") + call + "(" + std::to_string(index) +
              "): the task has " + std::to_string(num_data_) + " data accesses");
}

// Kept out of line and cold: inlined (LTO) into a task's arg<T>, it made
// the unchecked path 8 instructions longer (a larger frame, more registers).
[[gnu::cold, gnu::noinline]] void TaskContext::check_arg(size_t offset, size_t size,
                                                         uint64_t type_hash, const char* type_name,
                                                         size_t type_name_size) const {
  const std::string wrong = core::arg_mismatch(signature_, signature_size_, offset, size, type_hash,
                                               {type_name, type_name_size});
  if (wrong.empty()) return;
  // The task's name is in this thread's running-task slot (the engine's mark).
  const char* name = "?";
  if (exec::task_running_on_this_thread() == task_id_)
    name = exec::this_thread_running_task()->name.load(std::memory_order_relaxed);
  core::fail_job(rank_, "checked mode: task '" + std::string(name) + "' (id " +
                            std::to_string(task_id_) + ", rank " + std::to_string(rank_) + ") " +
                            wrong);
}

namespace runtime {

struct Runtime {
  RuntimeOptions options;
  int threads = 1;  // this rank's task threads (options.threads, or the default)
  // The transport and the bookkeeping collectives: the MPI backend's, or a
  // simulated job's (then `backend` is null).
  comm::Transport* transport = nullptr;
  comm::Collectives* collectives = nullptr;
  SimulatedJob* simulated = nullptr;
  // MPI: the transport, the bookkeeping collectives (start-up figures,
  // divergence check, stats, trace, exit status) and the channels.
  std::unique_ptr<comm::mpi::MpiBackend> backend;
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<plan::DivergenceCheck> divergence;
  std::unique_ptr<plan::Planner> planner;
  std::unique_ptr<runtime::Watchdog> watchdog;
  std::unique_ptr<comm::Thread> engine_thread;  // started through the transport seam
  // Checkpoints and restart (TASKGRID_CHECKPOINT, TASKGRID_RESTART): on the
  // ranks that run the program, when either is set.
  std::unique_ptr<runtime::Recovery> recovery;
};

}  // namespace runtime

namespace {

using runtime::Runtime;

// The process's rank (nullptr in a simulated job, whose ranks are below).
Runtime* state = nullptr;
// A simulated job (runtime/simulated_job.h) and its ranks, by rank.
runtime::SimulatedJob* simulated_job = nullptr;
std::vector<Runtime*> simulated_ranks;
bool finished = false;
// The status finish() returned (run() returns it when main_fn called finish()).
int finished_status = 0;
// Out of line: running() is on every submission's path and must stay inlined.
[[noreturn, gnu::cold, gnu::noinline]] void not_running() {
  if (finished)
    throw Error(
        "taskgrid: the runtime has finished (taskgrid::finish() was called); no TaskGrid call may "
        "follow it");
  throw Error("taskgrid: call taskgrid::start() first");
}

// The calling actor's rank in a simulated job; nullptr outside one.
[[gnu::cold, gnu::noinline]] Runtime* simulated_rank() {
  if (!simulated_job) return nullptr;
  const int rank = simulated_job->current_rank();
  return rank >= 0 && static_cast<size_t>(rank) < simulated_ranks.size()
             ? simulated_ranks[static_cast<size_t>(rank)]
             : nullptr;
}

[[gnu::cold, gnu::noinline]] Runtime& running_simulated() {
  if (Runtime* rt = simulated_rank()) return *rt;
  not_running();
}

Runtime& running() {
  if (!state) [[unlikely]]
    return running_simulated();
  return *state;
}

Runtime* current() { return state ? state : simulated_rank(); }

Runtime& running_planner() {
  Runtime& rt = running();
  if (!rt.planner) throw Error("taskgrid: this rank serves the head; only rank 0 submits work");
  return rt;
}

plan::Planner& planner() { return *running_planner().planner; }

// Calls that wait for tasks (or add to the sequence every spmd rank must
// submit alike) deadlock or diverge when a task makes them: refused on
// every rank alike, before they touch the planner.
void refuse_inside_task(const char* call) {
  if (const uint64_t task = exec::task_running_on_this_thread())
    throw Error(std::string("taskgrid::") + call + " called inside a task (id " +
                std::to_string(task) +
                "): a task may not submit, wait, fetch, enter, release or finish; do it from "
                "the program, after the tasks it depends on");
}

// The calling rank, outside a task, where it runs the program (it plans):
// one lookup for the planner and the recovery both.
Runtime& program_rank(const char* call) {
  refuse_inside_task(call);
  return running_planner();
}

// A rank that leaves before finish() would leave the others waiting forever.
// It says so and exits non-zero, which makes the launcher end the job. No
// MPI_Abort here: exit() may itself come from an MPI_Abort in progress.
void exit_guard() {
  // After fail_job the job is ending with its own message (MPI_Abort may
  // call exit() in a singleton): nothing to add.
  if (!state || finished || core::job_failing()) return;
  std::fprintf(stderr,
               "error: taskgrid: rank %d: the process is exiting before taskgrid::finish() "
               "(exit() called, or main returned without finish())\n",
               state->transport ? state->transport->rank() : -1);
  std::fflush(stderr);
  std::_Exit(1);
}

// Why no task was timed (TASKGRID_STATS then prints task_ms as n/a, not 0).
std::string untimed_reason(const runtime::RuntimeOptions& options) {
  if (options.mode == Mode::spmd) return "spmd places tasks by owner, needing no durations";
  return std::string("TASKGRID_SCHEDULER=") + sched::scheduler_name(options.scheduler) +
         " needs no durations";
}

// Collective. `placement`: rank 0's planner's report (why tasks went where).
void print_stats(comm::Collectives& collectives, const engine::EngineStats& stats,
                 const std::string& placement, const std::string& untimed) {
  const std::vector<std::vector<char>> all = collectives.gather(0, &stats, sizeof stats);
  if (collectives.rank() != 0) return;
  const int size = collectives.size();
  std::vector<engine::EngineStats> ranks(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r)
    std::memcpy(static_cast<void*>(&ranks[static_cast<size_t>(r)]),
                all[static_cast<size_t>(r)].data(), sizeof(engine::EngineStats));
  // One line per rank for each group of counters.
  const auto for_each_rank = [&](const auto& print) {
    for (int r = 0; r < size; ++r) print(r, ranks[static_cast<size_t>(r)]);
  };
  bool timed = trace::enabled();  // a trace times every task
  for (const engine::EngineStats& s : ranks) timed |= s.timing != 0;
  std::fprintf(
      stderr,
      "taskgrid stats: rank  tasks  task_ms  data_sent(msgs/bytes)  "
      "data_received(msgs/bytes)  control_sent(msgs/bytes)  control_received  reclaimed\n");
  for_each_rank([&](int r, const engine::EngineStats& s) {
    char task_ms[32] = "     n/a";
    if (timed)
      std::snprintf(task_ms, sizeof task_ms, "%8.3f", static_cast<double>(s.task_ns) * 1e-6);
    std::fprintf(
        stderr,
        "taskgrid stats: %4d %6llu %s %8llu/%-12llu %8llu/%-12llu %8llu/%-12llu %8llu %9llu\n", r,
        static_cast<unsigned long long>(s.tasks_executed), task_ms,
        static_cast<unsigned long long>(s.data_messages_sent),
        static_cast<unsigned long long>(s.data_bytes_sent),
        static_cast<unsigned long long>(s.data_messages_received),
        static_cast<unsigned long long>(s.data_bytes_received),
        static_cast<unsigned long long>(s.control_messages_sent),
        static_cast<unsigned long long>(s.control_bytes_sent),
        static_cast<unsigned long long>(s.control_messages_received),
        static_cast<unsigned long long>(s.versions_reclaimed));
  });
  if (!timed)
    std::fprintf(stderr,
                 "taskgrid stats: task_ms n/a: tasks were not timed (timing off: %s); "
                 "TASKGRID_TIMING=1 times them, one clock read per task\n",
                 untimed.c_str());
  std::fprintf(stderr, "%s", placement.c_str());
  for_each_rank([&](int r, const engine::EngineStats& s) {
    std::fprintf(stderr,
                 "taskgrid bcast stats: rank %d rooted %llu routes_received %llu chunks_sent %llu "
                 "chunks_received %llu mpi_bcasts %llu\n",
                 r, static_cast<unsigned long long>(s.broadcasts_rooted),
                 static_cast<unsigned long long>(s.broadcast_routes_received),
                 static_cast<unsigned long long>(s.broadcast_chunks_sent),
                 static_cast<unsigned long long>(s.broadcast_chunks_received),
                 static_cast<unsigned long long>(s.mpi_broadcasts));
  });
  for_each_rank([&](int r, const engine::EngineStats& s) {
    if (s.device_tasks == 0) return;
    std::fprintf(stderr,
                 "taskgrid device stats: rank %d tasks %llu bytes_in %llu bytes_out %llu "
                 "bytes_within %llu (peer %llu) replica_hits %llu evictions %llu "
                 "write_backs %llu (before evictions %llu) sends staged %llu (pieces %llu) "
                 "direct %llu\n",
                 r, static_cast<unsigned long long>(s.device_tasks),
                 static_cast<unsigned long long>(s.device_bytes_in),
                 static_cast<unsigned long long>(s.device_bytes_out),
                 static_cast<unsigned long long>(s.device_bytes_within),
                 static_cast<unsigned long long>(s.device_peer_bytes),
                 static_cast<unsigned long long>(s.device_replica_hits),
                 static_cast<unsigned long long>(s.device_evictions),
                 static_cast<unsigned long long>(s.device_write_backs),
                 static_cast<unsigned long long>(s.device_eviction_write_backs),
                 static_cast<unsigned long long>(s.device_staged_sends),
                 static_cast<unsigned long long>(s.device_staged_pieces),
                 static_cast<unsigned long long>(s.device_direct_sends));
  });
  for_each_rank([&](int r, const engine::EngineStats& s) {
    std::fprintf(stderr,
                 "taskgrid memory stats: rank %d versions_live %llu version_bytes_held %llu "
                 "version_bytes_peak %llu pool_idle_bytes %llu\n",
                 r, static_cast<unsigned long long>(s.versions_live),
                 static_cast<unsigned long long>(s.version_bytes_held),
                 static_cast<unsigned long long>(s.version_bytes_peak),
                 static_cast<unsigned long long>(s.pool_idle_bytes));
  });
}

// Common end of every rank: statistics, trace, MPI. Returns the job's exit
// status, the largest of the ranks' (every rank exits with it): when
// MPI_Finalize hangs and ranks leave one by one, the launcher may report any
// rank's status, or end the job at the first exit.
int shut_down_rank(Runtime& rt, int exit_status) {
  comm::Collectives& collectives = *rt.collectives;
  // A trace that could not be written fails the job (the user asked for it).
  if (!trace::write_job_trace(collectives)) exit_status = std::max(exit_status, 1);
  exit_status = static_cast<int>(collectives.max_over_ranks(exit_status));
  // Every rank has passed the job's last collective: a rank that leaves from
  // here on is finishing, not stopped.
  if (rt.watchdog) rt.watchdog->leave();
  rt.watchdog.reset();
  if (rt.options.stats)
    print_stats(collectives, rt.engine->stats(),
                rt.planner ? rt.planner->placement_report() : std::string(),
                untimed_reason(rt.options));
  rt.recovery.reset();
  rt.planner.reset();
  rt.divergence.reset();
  rt.engine.reset();
  if (rt.simulated) {
    // Another rank of the job may still run: nothing process-wide changes.
    simulated_ranks[static_cast<size_t>(rt.transport->rank())] = nullptr;
    delete &rt;
    return exit_status;
  }
  core::set_abort_transport(nullptr);
  const int rank = rt.transport->rank();
  core::set_message_rank(rank);
  finished = true;
  finished_status = exit_status;
  // MPI_Finalize under a deadline (it sometimes never returns with Debian's
  // MPICH over TCP, after the work is done). Rank 0 gives up first (the
  // others a second later): the launcher may end the job at the first exit,
  // and rank 0's words are the ones a user reads.
  const int timeout = rt.options.finalize_timeout_seconds;
  rt.backend->finish(timeout > 0 && rank > 0 ? timeout + 1 : timeout, exit_status);
  rt.backend.reset();
  delete state;
  state = nullptr;
  return exit_status;
}

}  // namespace

namespace {

// The job-wide settings must be the same on every rank: a rank with other
// channels, broadcasts or mode would wait for ever for what the others never
// do. Collective; throws (on every rank) naming each setting that differs.
void check_settings_agree(comm::Collectives& collectives, const runtime::RuntimeOptions& options) {
  if (collectives.size() == 1) return;
  const std::string mine = runtime::job_wide_settings(options);
  const std::vector<std::vector<char>> all = collectives.gather(0, mine.data(), mine.size());
  std::string message;
  if (collectives.rank() == 0) {
    std::vector<std::string> per_rank;
    for (const std::vector<char>& settings : all)
      per_rank.emplace_back(settings.begin(), settings.end());
    message = runtime::settings_disagreement(per_rank);
  }
  uint64_t length = message.size();
  collectives.broadcast(0, &length, sizeof length);
  message.resize(length);
  if (length) collectives.broadcast(0, message.data(), length);
  if (!message.empty()) throw Error("taskgrid::start: " + message);
}

// Cluster mode: the head's heft places tasks on every rank's devices, so it
// learns how many each rank has (ranks may differ: nodes with other GPUs)
// and how fast their hosts reach them (the slowest rank's link stands for
// all). Collective. The head's stream cap (TASKGRID_DEVICE_STREAMS) stands
// for every rank's.
sched::DeviceSlots gather_devices(comm::Collectives& collectives, int devices,
                                  const device::LinkEstimate& link, int streams) {
  struct RankDevices {
    int32_t devices;
    double latency_seconds;
    double bandwidth;
  };
  const RankDevices mine{devices, link.latency_seconds, link.bandwidth_bytes_per_second};
  std::vector<RankDevices> all;
  if (collectives.size() == 1) {
    all.push_back(mine);
  } else {
    const std::vector<std::vector<char>> gathered = collectives.gather(0, &mine, sizeof mine);
    for (const std::vector<char>& bytes : gathered) {
      RankDevices rank{};
      if (bytes.size() == sizeof rank) std::memcpy(&rank, bytes.data(), sizeof rank);
      all.push_back(rank);
    }
  }
  sched::DeviceSlots slots;
  slots.streams_per_device = streams;
  if (collectives.rank() != 0) return slots;
  bool any = false;
  for (const RankDevices& rank : all) {
    slots.devices_per_rank.push_back(rank.devices);
    any |= rank.devices > 0;
    if (rank.bandwidth <= 0) continue;
    slots.link_latency_seconds = std::max(slots.link_latency_seconds, rank.latency_seconds);
    if (slots.link_bandwidth <= 0 || rank.bandwidth < slots.link_bandwidth)
      slots.link_bandwidth = rank.bandwidth;
  }
  if (!any) slots.devices_per_rank.clear();
  return slots;
}

std::unique_ptr<runtime::Watchdog> make_watchdog(comm::mpi::MpiBackend& backend,
                                                 const runtime::RuntimeOptions& options) {
  comm::Transport& transport = backend.transport();
  const int rank = transport.rank();
  std::unique_ptr<comm::HeartbeatLink> link;
  if (transport.size() > 1 && options.failure_timeout_seconds > 0) {
    // The same on every rank (one program, one MPI): the link's set-up is collective.
    if (backend.thread_multiple()) {
      link = backend.make_heartbeat_link();
    } else if (rank == 0) {
      std::fprintf(stderr,
                   "warning: taskgrid: no detection of stopped ranks: MPI was initialised "
                   "without MPI_THREAD_MULTIPLE, which the failure detector's thread needs\n");
    }
  }
  auto watchdog = std::make_unique<runtime::Watchdog>(
      std::move(link),
      runtime::WatchdogConfig{
          .timeout_seconds = options.failure_timeout_seconds,
          .task_deadline_seconds = options.task_deadline_seconds,
          .bytes_arriving_from =
              [&transport](int peer) { return transport.bytes_arriving_from(peer); }},
      [rank](const std::string& message) { core::fail_job(rank, message); });
  watchdog->start();
  return watchdog;
}

// The engine's loop on this thread. An exception that escapes it (out of
// memory, a transport error) ends the job naming the rank and the cause,
// not through std::terminate.
void run_engine(Runtime& rt) {
  const int rank = rt.transport->rank();
  try {
    rt.engine->run();
  } catch (const std::bad_alloc&) {
    core::fail_job(rank,
                   "out of memory in the engine (std::bad_alloc); the job's data and "
                   "tasks in flight do not fit this rank's memory");
  } catch (const std::exception& error) {
    core::fail_job(rank, std::string("engine: ") + error.what());
  }
}

// The planner's settings, from the runtime's and the transport's. Collective
// (the link is measured between ranks).
plan::PlannerConfig planner_config(const runtime::RuntimeOptions& options,
                                   comm::Transport& transport, comm::Collectives& collectives,
                                   std::vector<int32_t> node_of_rank) {
  const bool spmd = options.mode == Mode::spmd;
  plan::PlannerConfig config;
  config.mode = spmd ? plan::PlannerMode::spmd : plan::PlannerMode::cluster;
  config.rank = transport.rank();
  config.ranks = transport.size();
  config.max_tag = transport.max_tag();
  config.scheduler = options.scheduler;
  config.threads_per_rank = options.threads > 0
                                ? options.threads
                                : runtime::default_threads(collectives.ranks_sharing_cores());
  if (config.ranks > 1) {
    // The cost model's network figures, the same on every rank (spmd
    // planners must all choose the same broadcast plans).
    const comm::LinkEstimate link = collectives.measure_link();
    config.latency_seconds = link.latency_seconds;
    config.bandwidth_bytes_per_second = link.bandwidth_bytes_per_second;
  }
  config.node_of_rank = std::move(node_of_rank);
  config.channels = options.channels;
  // cluster: the head plans every rank's tasks, so its window covers them all.
  config.window = options.window * static_cast<uint64_t>(spmd ? 1 : config.ranks);
  config.window_bytes = options.window_bytes * static_cast<uint64_t>(spmd ? 1 : config.ranks);
  config.broadcast = options.broadcast;
  config.broadcast_min_bytes = options.broadcast_min_bytes;
  config.broadcast_chunk = options.broadcast_chunk;
  config.placement_stats = options.stats;
  return config;
}

// Whether device data is sent straight from device memory: as the user
// chose, or (auto) where the devices are CUDA's and MPI says it reads them.
bool sends_from_device_memory(runtime::GpuAwareMpi choice, const device::Backend& devices,
                              const comm::mpi::MpiBackend& mpi) {
  switch (choice) {
    case runtime::GpuAwareMpi::yes:
      return true;
    case runtime::GpuAwareMpi::no:
      return false;
    case runtime::GpuAwareMpi::automatic:
      break;
  }
  return std::string(devices.name()) == "cuda" && mpi.reads_cuda_memory();
}

// Devices only for programs that have device tasks: loading CUDA costs
// start-up time that a CPU-only program should not pay. Returns this rank's
// device count; `link` is how fast the host reaches them (cluster mode's heft
// weighs copies). Collective where the program has device tasks.
int open_devices(Runtime& rt, device::LinkEstimate& link) {
  if (!detail::any_device_function()) return 0;
  comm::Transport& transport = rt.backend->transport();
  const bool spmd = rt.options.mode == Mode::spmd;
  int devices = 0;
  device::BackendSettings settings;
  settings.kind = rt.options.device;
  settings.emulated_devices = rt.options.emulated_devices;
  settings.memory_limit = rt.options.device_memory;
  try {
    if (auto backend = device::open_backend(settings)) {
      devices = backend->devices();
      if (!spmd && devices > 0) link = device::measure_link(*backend, 0);
      const bool direct_sends =
          sends_from_device_memory(rt.options.gpu_aware_mpi, *backend, *rt.backend);
      rt.engine->set_devices(std::move(backend), rt.options.device_streams, direct_sends);
    }
  } catch (const Error& error) {
    core::fail_job(transport.rank(), error.what());
  }
  // Where any rank has devices, transfers travel in pieces small enough
  // that a version's copy off a device overlaps its sending. Every rank
  // cuts them alike (a receiver expects the pieces its sender sends).
  uint64_t any_devices = devices > 0 ? 1 : 0;
  if (transport.size() > 1) rt.backend->collectives().allreduce_max(&any_devices, 1);
  if (any_devices) transport.set_max_chunk(rt.options.device_staging_bytes);
  return devices;
}

// Collective, right after MPI starts: where any rank's settings are bad, every
// rank with a bad setting prints its message, rank 0 names the ranks that had
// one (when it had none itself), and the whole job exits with status 2.
void stop_on_bad_settings(comm::mpi::MpiBackend& backend, std::string error, int finalize_timeout,
                          const char* what = "bad TaskGrid settings") {
  comm::Collectives& collectives = backend.collectives();
  uint64_t any_bad = error.empty() ? 0 : 1;
  if (collectives.size() > 1) collectives.allreduce_max(&any_bad, 1);
  if (!any_bad) return;
  const int rank = collectives.rank();
  constexpr char kPrefix[] = "taskgrid: ";
  if (error.rfind(kPrefix, 0) == 0) error.erase(0, sizeof kPrefix - 1);
  if (!error.empty()) std::fprintf(stderr, "error: taskgrid: rank %d: %s\n", rank, error.c_str());
  const char bad = error.empty() ? 0 : 1;
  const std::vector<std::vector<char>> all = collectives.size() > 1
                                                 ? collectives.gather(0, &bad, 1)
                                                 : std::vector<std::vector<char>>{{bad}};
  if (rank == 0 && !bad) {
    std::string ranks;
    for (size_t r = 0; r < all.size(); ++r)
      if (!all[r].empty() && all[r][0]) {
        // Appended in place: a temporary string here trips GCC 12's
        // -Wstringop-overflow (a false positive) once LTO inlines it.
        if (!ranks.empty()) ranks += ", ";
        ranks += std::to_string(r);
      }
    std::fprintf(stderr,
                 "error: taskgrid: rank 0: stopping the job: %s on rank(s) %s "
                 "(their messages say which)\n",
                 what, ranks.c_str());
  }
  std::fflush(stderr);
  backend.finish(finalize_timeout, 2);
  std::exit(2);
}

runtime::RecoverySettings recovery_settings(const runtime::RuntimeOptions& options) {
  runtime::RecoverySettings settings;
  settings.checkpoint_dir = options.checkpoint_dir;
  settings.every = options.checkpoint_every;
  settings.keep = options.checkpoint_keep;
  settings.restart_dir = options.restart_dir;
  return settings;
}

// Collective, at start-up: every rank reads its part of the checkpoint to
// restart from (cluster mode's serving ranks restore versions too); where
// any rank cannot, or the ranks see different checkpoints, the job stops on
// every rank with status 2 (a refused checkpoint: relaunching cannot help).
void prepare_restart(comm::mpi::MpiBackend& backend, const runtime::RecoverySettings& settings,
                     const runtime::RuntimeOptions& options) {
  comm::Collectives& collectives = backend.collectives();
  uint64_t restart_point = 0;
  std::string error = runtime::prepare_recovery(settings, collectives.rank(), collectives.size(),
                                                options.mode, restart_point);
  // The newest checkpoint each rank found, and whether any failed: a folder
  // that is not one shared folder shows here.
  uint64_t seen[3] = {restart_point, ~restart_point, error.empty() ? 0u : 1u};
  if (collectives.size() > 1) collectives.allreduce_max(seen, 3);
  if (error.empty() && seen[2] == 0 && seen[0] != ~seen[1])
    error = "TASKGRID_RESTART=" + settings.restart_dir +
            ": the ranks see different newest checkpoints (after " + std::to_string(~seen[1]) +
            " to " + std::to_string(seen[0]) +
            " submissions): the folder must be one folder shared by every rank";
  stop_on_bad_settings(backend, error, options.finalize_timeout_seconds,
                       "a checkpoint it cannot restart from");
  if (restart_point > 0 && collectives.rank() == 0) {
    std::fprintf(stderr,
                 "taskgrid: rank 0: restarting from %s/ckpt-%llu: the first %llu submissions are "
                 "replayed\n",
                 settings.restart_dir.c_str(), static_cast<unsigned long long>(restart_point),
                 static_cast<unsigned long long>(restart_point));
    std::fflush(stderr);
  }
}

// The planner and the engine's thread of a rank that runs the program.
void start_program(Runtime& rt, const plan::PlannerConfig& config) {
  rt.planner = std::make_unique<plan::Planner>(*rt.engine, config);
  rt.engine->set_listener(rt.planner.get());
  rt.engine_thread = rt.transport->start_thread([&rt] { run_engine(rt); });
}

// The spmd divergence check compares the ranks' submissions: a job of one
// rank has nothing to compare, and recording each submission cost it ~100
// instructions a task (bench/overhead/instructions.py).
bool checks_divergence(bool spmd, int ranks, const runtime::RuntimeOptions& options) {
  return spmd && ranks > 1 && options.divergence_interval > 0;
}

// start_rank() in a simulated job: the calling actor's rank, on the job's
// transport and collectives. The settings are read and checked as with MPI.
bool start_simulated_rank(Mode mode) {
  runtime::SimulatedJob& job = *simulated_job;
  const int rank = job.current_rank();
  if (rank < 0 || rank >= job.ranks())
    throw Error("taskgrid::start: the calling thread belongs to no rank of the simulated job");
  if (simulated_ranks[static_cast<size_t>(rank)])
    throw Error("taskgrid::start: rank " + std::to_string(rank) + " already started");
  auto rt = std::make_unique<Runtime>();
  rt->simulated = &job;
  rt->transport = &job.transport(rank);
  rt->collectives = &job.collectives(rank);
  comm::Transport& transport = *rt->transport;
  rt->options = runtime::read_options_from_environment();
  runtime::resolve_mode(mode, rt->options);
  const char* left_out = !rt->options.checkpoint_dir.empty()     ? "TASKGRID_CHECKPOINT"
                         : !rt->options.restart_dir.empty()      ? "TASKGRID_RESTART"
                         : rt->options.task_deadline_seconds > 0 ? "TASKGRID_TASK_DEADLINE"
                                                                 : nullptr;
  if (left_out)
    throw Error(std::string("taskgrid::start: a simulated job has no ") + left_out +
                " (see runtime/simulated_job.h)");
  rt->options.channels = 0;  // task-aware channels are MPI communicators
  if (rt->options.threads <= 0) rt->options.threads = job.threads_per_rank();
  exec::this_thread_running_task();
  check_settings_agree(*rt->collectives, rt->options);
  const bool spmd = rt->options.mode == Mode::spmd;
  plan::PlannerConfig config = planner_config(rt->options, transport, *rt->collectives, {});
  rt->threads = config.threads_per_rank;
  rt->engine =
      std::make_unique<engine::Engine>(transport, config.threads_per_rank, spmd ? rank : 0);
  rt->engine->set_engine_creates_groups(!spmd);
  rt->engine->set_program_drives(rt->options.progress == runtime::Progress::program);
  config.max_message = transport.max_chunk();
  if (checks_divergence(spmd, config.ranks, rt->options)) {
    rt->divergence =
        std::make_unique<plan::DivergenceCheck>(*rt->collectives, rt->options.divergence_interval);
    config.divergence = rt->divergence.get();
  }
  rt->engine->set_timing((!spmd && sched::needs_task_durations(rt->options.scheduler)) ||
                         rt->options.timing);
  Runtime& started = *rt.release();
  simulated_ranks[static_cast<size_t>(rank)] = &started;
  if (rank == 0 || spmd) {
    start_program(started, config);
    return true;
  }
  return false;
}

// Starts this rank. Returns true where the program runs (rank 0 in cluster
// mode, every rank in spmd); false on a cluster rank that must serve.
bool start_rank(int* argc, char*** argv, Mode mode) {
  core::install_terminate_handler();
  if (simulated_job) return start_simulated_rank(mode);
  if (state) throw Error("taskgrid::start: already started");
  if (finished) throw Error("taskgrid::start: the runtime cannot be restarted after finish()");
  auto rt = std::make_unique<Runtime>();
  const int launcher_rank = core::launcher_rank();
  if (launcher_rank <= 0)
    for (const std::string& warning : runtime::unknown_setting_warnings())
      std::fprintf(stderr, "%s\n", warning.c_str());
  // Settings are read before MPI (the backend needs some), but a bad one is
  // reported after MPI has started, by every rank together: a rank launched
  // with its own environment (an MPMD launch, a per-node profile) must not
  // leave the others waiting in MPI_Init for a peer that has already gone.
  std::string settings_error;
  std::string mode_source;
  try {
    rt->options = runtime::read_options_from_environment();
    mode_source = runtime::resolve_mode(mode, rt->options);
  } catch (const Error& error) {
    settings_error = error.what();
    rt->options = runtime::RuntimeOptions{};
  }

  try {
    rt->backend = std::make_unique<comm::mpi::MpiBackend>(argc, argv, rt->options.chunk_bytes);
  } catch (const std::runtime_error& error) {
    throw Error(std::string("taskgrid::start: ") + error.what());
  }
  comm::Transport& transport = rt->backend->transport();
  comm::Collectives& collectives = rt->backend->collectives();
  rt->transport = &transport;
  rt->collectives = &collectives;
  // A launcher of another MPI starts N processes that each see a world of one:
  // they would run N separate jobs, each computing everything.
  if (transport.size() == 1)
    if (const auto job = runtime::launcher_job()) {
      // The launcher's rank: Open MPI's singleton start sets its own rank
      // variable to 0, which would otherwise name every process rank 0.
      core::set_message_rank(job->rank);
      throw Error("taskgrid: launched as rank " + std::to_string(job->rank) + " of " +
                  std::to_string(job->size) + " by " + job->variable +
                  " but MPI sees a single rank: the program's MPI (" + comm::mpi::mpi_family() +
                  ") does not match the launcher; start it with " + comm::mpi::mpi_launcher());
    }
  const int rank = transport.rank();
  core::set_message_rank(rank);
  stop_on_bad_settings(*rt->backend, settings_error, rt->options.finalize_timeout_seconds);
  core::set_abort_transport(&transport);
  runtime::install_crash_handlers(rank);
  // The program's thread runs tasks too (it drives the engine while it
  // waits): give it its slot, and its signal stack, now.
  exec::this_thread_running_task();
  check_settings_agree(collectives, rt->options);
  const runtime::RecoverySettings recovery = recovery_settings(rt->options);
  if (recovery.enabled()) prepare_restart(*rt->backend, recovery, rt->options);
  trace::configure(rank);
  rt->watchdog = make_watchdog(*rt->backend, rt->options);

  const bool spmd = rt->options.mode == Mode::spmd;
  plan::PlannerConfig config =
      planner_config(rt->options, transport, collectives, rt->backend->node_of_rank());
  // spmd: every rank plans for itself and is its own "head" for completions.
  // One communicator per task-aware channel (collective: every rank, here).
  std::unique_ptr<exec::TaskChannels> channels;
  if (rt->options.channels > 0)
    channels = rt->backend->make_channels(rt->options.channels, &core::fail_job);
  rt->threads = config.threads_per_rank;
  rt->engine = std::make_unique<engine::Engine>(transport, config.threads_per_rank, spmd ? rank : 0,
                                                std::move(channels));
  rt->engine->set_engine_creates_groups(!spmd);
  rt->engine->set_program_drives(rt->options.progress == runtime::Progress::program);
  rt->engine->set_checked(rt->options.check);
  device::LinkEstimate device_link;
  const int devices = open_devices(*rt, device_link);
  config.max_message = transport.max_chunk();
  if (!spmd)
    config.devices = gather_devices(collectives, devices, device_link, rt->options.device_streams);
  if (checks_divergence(spmd, config.ranks, rt->options)) {
    rt->divergence =
        std::make_unique<plan::DivergenceCheck>(collectives, rt->options.divergence_interval);
    config.divergence = rt->divergence.get();
  }
  // Durations feed the scheduler's cost model where it needs them (cluster
  // mode places; spmd places by owner). The task deadline needs each task's
  // start time.
  // TASKGRID_TIMING=1 asks for durations for the statistics only.
  rt->engine->set_timing((!spmd && sched::needs_task_durations(rt->options.scheduler)) ||
                         rt->options.task_deadline_seconds > 0 || rt->options.timing);
  if (rank == 0 && rt->options.display_env > 0) {
    runtime::DisplayFacts facts;
    facts.mode_source = mode_source;
    facts.threads = config.threads_per_rank;
    facts.ranks = config.ranks;
    std::fprintf(stderr, "%s", runtime::describe_settings(rt->options, facts).c_str());
    std::fflush(stderr);
  }
  state = rt.release();
  static const bool guard_installed = [] { return std::atexit(exit_guard) == 0; }();
  (void)guard_installed;

  if (rank == 0 || spmd) {
    start_program(*state, config);
    if (recovery.enabled())
      state->recovery = std::make_unique<runtime::Recovery>(*state->planner, rank, transport.size(),
                                                            state->options.mode);
    return true;
  }
  return false;
}

}  // namespace

void runtime::set_simulated_job(SimulatedJob* job) {
  if (state) throw Error("taskgrid: a simulated job cannot start beside a running rank");
  simulated_job = job;
  simulated_ranks.assign(job ? static_cast<size_t>(job->ranks()) : 0, nullptr);
}

void start(int* argc, char*** argv, Mode mode) {
  if (start_rank(argc, argv, mode)) return;
  // Cluster mode: this rank serves the head until it says stop, then exits
  // without returning to the program, which cannot finalize MPI here.
  Runtime& rt = running();
  run_engine(rt);
  if (rt.simulated) {
    runtime::SimulatedJob& job = *rt.simulated;
    job.end_rank(shut_down_rank(rt, 0));
  }
  rt.backend->finalize_for_program();
  std::exit(shut_down_rank(rt, 0));
}

int run(int argc, char** argv, const std::function<int(int, char**)>& main_fn,
        const RunOptions& options) {
  if (!start_rank(&argc, &argv, options.mode)) {
    // A serving rank: returns like the others, with the job's status.
    Runtime& rt = running();
    run_engine(rt);
    return shut_down_rank(rt, 0);
  }
  const int status = main_fn(argc, argv);
  if (!current()) return finished_status;  // main_fn called finish() itself
  return finish(status);
}

int finish(int exit_status) {
  refuse_inside_task("finish");
  Runtime& rt = running();
  if (rt.recovery) rt.recovery->finishing();
  if (rt.planner) rt.planner->shutdown();
  if (rt.engine_thread) {
    rt.engine_thread->join();
    rt.engine_thread.reset();
  }
  return shut_down_rank(rt, exit_status);
}

int rank() { return running().transport->rank(); }
int num_ranks() { return running().transport->size(); }
int threads_per_rank() { return running().threads; }
int ranks_sharing_cores() { return running().collectives->ranks_sharing_cores(); }
bool is_running() { return current() != nullptr; }
Mode mode() { return running().options.mode; }

namespace {
// A rank given to fetch/exit_data: a rank (the planner checks it is one of
// the job's) or all_ranks.
int chosen_rank(const char* call, int rank) {
  static_assert(all_ranks == plan::Planner::kAllRanks);
  if (rank < 0 && rank != all_ranks)
    throw Error(std::string("taskgrid::") + call + ": rank " + std::to_string(rank) +
                " is negative (give a rank, or taskgrid::all_ranks)");
  return rank;
}
// fetch / exit_data, through the checkpoint's replay where one is restarted from.
void fetch_to(const char* call, DataHandle h, int rank, bool release) {
  Runtime& rt = program_rank(call);
  plan::Planner& p = *rt.planner;
  runtime::Recovery* recovery = rt.recovery.get();
  if (recovery && !recovery->fetching(h, rank, release)) {
    if (release) p.release(h);
    return;
  }
  p.fetch(h, rank);
  if (recovery) recovery->fetched(h, rank, release);
  if (release) p.release(h);
}
}  // namespace

namespace {
DataHandle enter(void* host, size_t bytes, int owner, bool fill) {
  Runtime& rt = program_rank("enter_data");
  plan::Planner& p = *rt.planner;
  runtime::Recovery* recovery = rt.recovery.get();
  if (!recovery) return p.enter_data(host, bytes, owner, fill);
  // Replayed: the handle is made, its bytes come from the checkpoint.
  if (!recovery->entering(bytes, owner)) fill = false;
  const DataHandle h = p.enter_data(host, bytes, owner, fill);
  recovery->entered(h, host, bytes);
  return h;
}
}  // namespace

DataHandle enter_data(void* host, size_t bytes) { return enter(host, bytes, -1, true); }
DataHandle enter_data(void* host, size_t bytes, int owner) {
  if (owner < 0)
    throw Error("taskgrid::enter_data: owner rank " + std::to_string(owner) + " is negative");
  return enter(host, bytes, owner, true);
}
DataHandle enter_data_alloc(void* host, size_t bytes) { return enter(host, bytes, -1, false); }
DataHandle enter_data_alloc(void* host, size_t bytes, int owner) {
  if (owner < 0)
    throw Error("taskgrid::enter_data_alloc: owner rank " + std::to_string(owner) + " is negative");
  return enter(host, bytes, owner, false);
}
int owner(DataHandle h) { return planner().owner(h); }

DataHandle detail::enter_data_unfilled(void* host, size_t bytes) {
  return enter(host, bytes, -1, false);
}
bool is_spmd() { return running().options.mode == Mode::spmd; }
void fetch(DataHandle h) { fetch_to("fetch", h, plan::Planner::kHome, false); }
void fetch(DataHandle h, int rank) { fetch_to("fetch", h, chosen_rank("fetch", rank), false); }
void exit_data(DataHandle h) { fetch_to("exit_data", h, plan::Planner::kHome, true); }
void exit_data(DataHandle h, int rank) {
  fetch_to("exit_data", h, chosen_rank("exit_data", rank), true);
}
void release(DataHandle h) {
  Runtime& rt = program_rank("release");
  if (runtime::Recovery* recovery = rt.recovery.get()) recovery->releasing(h);
  plan::Planner& p = *rt.planner;
  p.release(h);
}

namespace {
// Out of line: the test on the way costs two comparisons, the messages a
// call (a helper that tested and threw cost 16 instructions per task).
[[noreturn, gnu::cold, gnu::noinline]] void bad_packed_args(const void* args, size_t args_size) {
  if (!args)
    throw Error("taskgrid::submit_packed: null args with args_size " + std::to_string(args_size));
  throw Error("taskgrid::submit_packed: " + std::to_string(args_size) +
              " bytes of by-value arguments; the limit is taskgrid::max_task_args_bytes (" +
              std::to_string(max_task_args_bytes) + "; register large data with enter_data)");
}
inline void check_packed_args(const void* args, size_t args_size) {
  if (args_size > max_task_args_bytes || (!args && args_size > 0)) [[unlikely]]
    bad_packed_args(args, args_size);
}
// With checkpoints or a restart: numbers and hashes the submission (and may
// take a checkpoint first); true where a restarted run replays it (no task
// runs). Otherwise one test of a null pointer on every submission's path.
inline bool replayed(Runtime& rt, FunctionId fn, const DataAccess* accesses, size_t count,
                     const TaskOptions& options, const void* args, size_t args_size) {
  runtime::Recovery* recovery = rt.recovery.get();
  return recovery && !recovery->submitting(fn, accesses, count, args, args_size, options.channel);
}
}  // namespace

void submit_packed(FunctionId fn, std::initializer_list<DataAccess> accesses,
                   const TaskOptions& options, const void* args, size_t args_size) {
  // The program's own list: never null. Only the arguments can be.
  check_packed_args(args, args_size);
  Runtime& rt = program_rank("submit");
  plan::Planner& p = *rt.planner;
  if (replayed(rt, fn, accesses.begin(), accesses.size(), options, args, args_size)) [[unlikely]]
    return;
  p.submit(fn, accesses.begin(), accesses.size(), options, args, args_size);
}
void submit_packed(FunctionId fn, const DataAccess* accesses, size_t num_accesses,
                   const TaskOptions& options, const void* args, size_t args_size) {
  if (!accesses && num_accesses > 0)
    throw Error("taskgrid::submit_packed: null accesses with num_accesses " +
                std::to_string(num_accesses));
  check_packed_args(args, args_size);
  Runtime& rt = program_rank("submit");
  plan::Planner& p = *rt.planner;
  if (replayed(rt, fn, accesses, num_accesses, options, args, args_size)) [[unlikely]]
    return;
  p.submit(fn, accesses, num_accesses, options, args, args_size);
}

void detail::submit_typed(FunctionId fn, std::initializer_list<DataAccess> accesses,
                          const TaskOptions& options, const void* args, size_t args_size,
                          const ArgType* types, size_t num_types) {
  Runtime& rt = program_rank("submit");
  plan::Planner& planner = *rt.planner;
  if (replayed(rt, fn, accesses.begin(), accesses.size(), options, args, args_size)) [[unlikely]]
    return;
  if (!rt.options.check) {
    planner.submit(fn, accesses.begin(), accesses.size(), options, args, args_size);
    return;
  }
  // Checked mode: the types travel after the arguments (pointers would not
  // mean anything on another rank). submit() bounded args_size already.
  thread_local std::vector<char> typed;
  typed.assign(static_cast<const char*>(args), static_cast<const char*>(args) + args_size);
  core::append_arg_signature(typed, types, num_types);
  planner.submit(fn, accesses.begin(), accesses.size(), options, typed.data(), typed.size(),
                 typed.size() - args_size);
}

void wait_all() {
  Runtime& rt = program_rank("wait_all");
  plan::Planner& p = *rt.planner;
  if (runtime::Recovery* recovery = rt.recovery.get(); recovery && !recovery->waiting(0)) return;
  p.wait_all();
}
void wait(DataHandle h) {
  Runtime& rt = program_rank("wait");
  plan::Planner& p = *rt.planner;
  if (runtime::Recovery* recovery = rt.recovery.get(); recovery && !recovery->waiting(h.id)) return;
  p.wait(h);
}

}  // namespace taskgrid
