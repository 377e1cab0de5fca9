// Runtime settings from the environment (read identically on every rank, so
// a bad value fails everywhere before any rank starts waiting on another).
// One table in options.cpp lists every TASKGRID_* name: it drives reading,
// the check for misspelled names and TASKGRID_DISPLAY_ENV.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coll/broadcast.h"
#include "device/backend.h"
#include "sched/placement.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::runtime {

// TASKGRID_PROGRESS: who drives the engine while the program waits.
enum class Progress : uint8_t { program, engine };
// TASKGRID_GPU_AWARE_MPI: send device data straight from device memory.
enum class GpuAwareMpi : uint8_t { automatic, yes, no };

// Settings with a fixed set of values are enums, parsed once here; the value
// a user wrote is kept only where it is reported back (agreement, display).
struct RuntimeOptions {
  int threads = 0;  // TASKGRID_THREADS (0: cores / ranks on this node)
  sched::Scheduler scheduler = sched::Scheduler::heft;  // TASKGRID_SCHEDULER
  // The mode in effect (cluster or spmd, never from_environment), resolved by
  // resolve_mode() from the program's Mode and TASKGRID_MODE.
  Mode mode = Mode::cluster;
  std::optional<Mode> mode_variable;      // TASKGRID_MODE as set (nullopt when unset)
  Progress progress = Progress::program;  // TASKGRID_PROGRESS
  bool stats = false;                     // TASKGRID_STATS=1
  bool timing = false;     // TASKGRID_TIMING=1: time tasks even where placement needs no durations
  size_t chunk_bytes = 0;  // TASKGRID_CHUNK_BYTES (testing: force chunked transfers)
  uint64_t divergence_interval = 1024;  // TASKGRID_CHECK_INTERVAL (spmd; 0: off)
  int channels = 4;                     // TASKGRID_CHANNELS (task-aware communication)
  coll::Strategy broadcast = coll::Strategy::automatic;  // TASKGRID_BCAST
  size_t broadcast_min_bytes = 64 << 10;  // TASKGRID_BCAST_MIN_BYTES: smaller ones go on demand
  size_t broadcast_chunk = 0;             // TASKGRID_BCAST_CHUNK (0: from the cost model)
  int finalize_timeout_seconds = 30;      // TASKGRID_FINALIZE_TIMEOUT (0: no limit)
  uint64_t window =
      512;  // TASKGRID_WINDOW: tasks in flight per rank before submit waits (0: no limit)
  // TASKGRID_WINDOW_BYTES: bytes the tasks in flight per rank may write
  // before submit waits (0: no limit).
  uint64_t window_bytes = uint64_t{1} << 30;
  int display_env = 0;  // TASKGRID_DISPLAY_ENV: 0 off, 1 the settings, 2 with their meanings
  // TASKGRID_FAILURE_TIMEOUT: silence after which a rank counts as stopped (0: off).
  double failure_timeout_seconds = 5;
  double task_deadline_seconds = 0;  // TASKGRID_TASK_DEADLINE (0: none)
  bool check = false;                // TASKGRID_CHECK=1: checked mode for task code
  // Devices for tasks with a device implementation (src/device/).
  device::BackendKind device = device::BackendKind::automatic;  // TASKGRID_DEVICE
  int emulated_devices = 1;                                     // TASKGRID_EMULATED_DEVICES
  uint64_t device_memory = 0;  // TASKGRID_DEVICE_MEMORY per device (0: the device's)
  int device_streams = 4;      // TASKGRID_DEVICE_STREAMS: streams out per device
  size_t device_staging_bytes = size_t{4} << 20;       // TASKGRID_DEVICE_STAGING_BYTES
  GpuAwareMpi gpu_aware_mpi = GpuAwareMpi::automatic;  // TASKGRID_GPU_AWARE_MPI
  // Checkpoint and restart (runtime/recovery.h).
  std::string checkpoint_dir;     // TASKGRID_CHECKPOINT ("": none)
  uint64_t checkpoint_every = 0;  // TASKGRID_CHECKPOINT_EVERY (0: default 1000 when checkpointing)
  int checkpoint_keep = 1;        // TASKGRID_CHECKPOINT_KEEP
  std::string restart_dir;        // TASKGRID_RESTART ("": a fresh start)

  bool operator==(const RuntimeOptions&) const = default;
};

// Each setting read_options_from_environment() reads, with the default that
// TASKGRID_DISPLAY_ENV shows for it, in the table's order. The defaults in
// effect are RuntimeOptions' initialisers: a test holds the two together.
std::vector<std::pair<std::string, std::string>> displayed_defaults();

// Throws taskgrid::Error naming the variable and the accepted values.
RuntimeOptions read_options_from_environment();

// "cluster" or "spmd".
const char* mode_name(Mode mode);

// Resolves the mode in effect from the program's and TASKGRID_MODE (stored in
// options.mode); returns where it came from ("program", "environment",
// "default"). Throws taskgrid::Error when TASKGRID_MODE contradicts the program.
std::string resolve_mode(Mode program, RuntimeOptions& options);

// The settings every rank of a job must share, one "NAME=value" line each
// (value as set, else the default; TASKGRID_MODE: the mode in effect).
std::string job_wide_settings(const RuntimeOptions& options);
// Given every rank's job_wide_settings() (index = rank): a message naming
// each setting that differs and which ranks have which value; "" when all agree.
std::string settings_disagreement(const std::vector<std::string>& per_rank);

// One warning per TASKGRID_* variable of the environment that is no known
// name, with the nearest known name when one is close.
std::vector<std::string> unknown_setting_warnings();

// What TASKGRID_DISPLAY_ENV prints (rank 0, after start-up).
struct DisplayFacts {
  std::string mode_source;
  int threads = 0;  // in effect
  int ranks = 1;
};
std::string describe_settings(const RuntimeOptions& options, const DisplayFacts& facts);

// A launcher that says it started more than one process (e.g. Open MPI's
// mpirun around an MPICH program, which then sees one rank in each process).
struct LauncherJob {
  std::string variable;  // the size variable that says so
  int rank = -1;
  int size = 0;
};
std::optional<LauncherJob> launcher_job();

// TASKGRID_THREADS's default: the cores this rank may run on (its affinity
// mask) divided among the `ranks_sharing_cores` ranks that may run on them
// too (comm::Collectives::ranks_sharing_cores), at least 1.
int default_threads(int ranks_sharing_cores);
// The most TASKGRID_THREADS a rank that may run on `cores` cores accepts: 8
// per core, never fewer than 64, never more than kMaxThreads. Idle workers
// sleep, so some oversubscription is harmless (tasks that wait on I/O), but
// thousands of threads on a few cores take tens of seconds to start and stop
// and starve the failure detector's heartbeat thread.
constexpr int kMaxThreads = 4096;
int thread_limit(int cores);

}  // namespace taskgrid::runtime
