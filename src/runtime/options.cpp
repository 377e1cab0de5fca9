#include "runtime/options.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "core/failure.h"
#include "taskgrid/version.h"

extern char** environ;

namespace taskgrid::runtime {
namespace {

// The variable's value, or nullptr when it is unset or empty.
const char* variable(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

// A whole number in [low, high]; otherwise throws "NAME="VALUE" <rule>".
long long read_number(const char* name, const char* value, long long low, long long high,
                      const char* rule) {
  char* end = nullptr;
  const long long number = std::strtoll(value, &end, 10);
  if (end == value || *end != '\0' || number < low || number > high)
    throw Error(std::string("taskgrid: ") + name + "=\"" + value + "\" " + rule);
  return number;
}

// A value parsed by the layer that owns its names (`parse` returns nullopt
// for no such name); otherwise throws "NAME="VALUE" is not <what>; choose <listed>".
template <typename Enum, typename Parse>
Enum read_named(const char* name, const char* value, Parse parse, const char* what,
                const char* listed) {
  if (const std::optional<Enum> parsed = parse(value)) return *parsed;
  throw Error(std::string("taskgrid: ") + name + "=\"" + value + "\" is not " + what + "; choose " +
              listed);
}

// One of `choices` (names this file owns), as its enum value; otherwise throws as read_named.
template <typename Enum>
Enum read_choice(const char* name, const char* value,
                 std::initializer_list<std::pair<const char*, Enum>> choices, const char* what,
                 const char* listed) {
  const auto lookup = [choices](const char* text) -> std::optional<Enum> {
    for (const auto& [choice_name, choice] : choices)
      if (std::strcmp(text, choice_name) == 0) return choice;
    return std::nullopt;
  };
  return read_named<Enum>(name, value, lookup, what, listed);
}

// On or off: 1, yes, true, on / 0, no, false, off; otherwise throws as read_named.
bool read_switch(const char* name, const char* value) {
  return read_choice<bool>(name, value,
                           {{"1", true},
                            {"yes", true},
                            {"true", true},
                            {"on", true},
                            {"0", false},
                            {"no", false},
                            {"false", false},
                            {"off", false}},
                           "a switch", "1, yes, true or on; 0, no, false or off");
}

// Seconds in [0, high], fractions allowed; otherwise throws.
double read_seconds(const char* name, const char* value, double high, const char* rule) {
  char* end = nullptr;
  const double seconds = std::strtod(value, &end);
  if (end == value || *end != '\0' || !(seconds >= 0 && seconds <= high))
    throw Error(std::string("taskgrid: ") + name + "=\"" + value + "\" " + rule);
  return seconds;
}

constexpr long long kNoLimit = 1LL << 62;

// The cores this process may run on (its affinity mask: a launcher or batch
// system may bind it to fewer than the node has).
int usable_cores() {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) return std::max(1, CPU_COUNT(&mask));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

using Parser = void (*)(RuntimeOptions&, const char* name, const char* value);

// Every setting: its name, the default shown by TASKGRID_DISPLAY_ENV, what it
// does, and how start() reads it; or, for a setting read elsewhere (listed
// here so that it is known and displayed), who reads it.
struct Setting {
  const char* name;
  const char* fallback;
  const char* meaning;
  Parser parse;
  const char* read_by = nullptr;  // when parse is nullptr
  // May differ between the ranks of a job (a rank's own resources or
  // reporting); all others are checked to agree at start-up.
  bool per_rank = false;
};

const Setting kSettings[] = {
    {"TASKGRID_MODE", "cluster",
     "cluster (rank 0 runs the program) or spmd (every rank does); only confirms the program's",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.mode_variable =
           read_choice<Mode>(name, value, {{"cluster", Mode::cluster}, {"spmd", Mode::spmd}},
                             "a mode", "cluster or spmd");
     }},
    {"TASKGRID_THREADS", "its cores / ranks on them",
     "worker threads per rank (1 to 8 per core the rank may run on, at least 64 allowed)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.threads = static_cast<int>(
           read_number(name, value, 1, 4096, "must be a whole number from 1 to 4096"));
       const int cores = usable_cores();
       const int limit = thread_limit(cores);
       if (o.threads > limit)
         throw Error(std::string("taskgrid: ") + name + "=\"" + value + "\" is more than " +
                     std::to_string(limit) + ", the most threads a rank may start here (8 per " +
                     "core it may run on, " + std::to_string(cores) +
                     " cores, and never fewer than 64): more only compete for the cores and "
                     "starve the failure detector's heartbeat");
     },
     nullptr, true},
    {"TASKGRID_SCHEDULER", "heft", "cluster placement: round_robin, locality or heft",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.scheduler = read_named<sched::Scheduler>(name, value, sched::parse_scheduler,
                                                  "a scheduler", "round_robin, locality or heft");
     }},
    {"TASKGRID_PROGRESS", "program",
     "who drives the engine while the program waits: program or engine",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.progress = read_choice<Progress>(
           name, value, {{"program", Progress::program}, {"engine", Progress::engine}},
           "a progress model", "program or engine");
     },
     nullptr, true},
    {"TASKGRID_WINDOW", "512", "tasks in flight per rank before submit waits (0: no limit)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.window = static_cast<uint64_t>(
           read_number(name, value, 0, kNoLimit, "must be a whole number of tasks (0: no limit)"));
     },
     nullptr, true},
    {"TASKGRID_WINDOW_BYTES", "1073741824",
     "bytes the tasks in flight per rank may write before submit waits (0: no limit)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.window_bytes = static_cast<uint64_t>(
           read_number(name, value, 0, kNoLimit, "must be a number of bytes (0: no limit)"));
     },
     nullptr, true},
    {"TASKGRID_CHANNELS", "4", "communicators for task-aware communication (0 to 256)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.channels = static_cast<int>(
           read_number(name, value, 0, 256, "must be a whole number from 0 to 256"));
     }},
    {"TASKGRID_BCAST", "auto", "broadcast strategy: none, p2p, mpi, tree, pipeline or auto",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.broadcast = read_named<coll::Strategy>(
           name, value, [](const char* text) { return coll::parse_strategy(text); },
           "a broadcast strategy", "none, p2p, mpi, tree, pipeline or auto");
     }},
    {"TASKGRID_BCAST_MIN_BYTES", "65536", "smallest version broadcast ahead of demand (bytes)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.broadcast_min_bytes = static_cast<size_t>(
           read_number(name, value, 0, kNoLimit,
                       "must be a number of bytes (0: broadcast versions of any size)"));
     }},
    {"TASKGRID_BCAST_CHUNK", "0", "pipelined broadcast chunk in bytes (0: from the cost model)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.broadcast_chunk = static_cast<size_t>(read_number(
           name, value, 0, kNoLimit,
           "must be a number of bytes (0: chosen from measured latency and bandwidth)"));
     }},
    {"TASKGRID_CHECK_INTERVAL", "1024",
     "spmd divergence check every N submissions (0: off; none at one rank)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.divergence_interval = static_cast<uint64_t>(read_number(
           name, value, 0, 8192, "must be a number of submissions from 0 (the check off) to 8192"));
     }},
    {"TASKGRID_FINALIZE_TIMEOUT", "30", "seconds MPI_Finalize may take (0: no limit)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.finalize_timeout_seconds = static_cast<int>(read_number(
           name, value, 0, 86400, "must be a number of seconds from 0 (no limit) to 86400"));
     },
     nullptr, true},
    {"TASKGRID_FAILURE_TIMEOUT", "5",
     "seconds without a heartbeat before a rank is declared stopped (0: no detection)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.failure_timeout_seconds = read_seconds(
           name, value, 86400, "must be a number of seconds from 0 (no detection) to 86400");
       if (o.failure_timeout_seconds > 0 && o.failure_timeout_seconds < 0.1)
         throw Error(std::string("taskgrid: ") + name + "=\"" + value +
                     "\" is too short to tell a busy rank from a stopped one; use 0.1 or more");
     }},
    {"TASKGRID_TASK_DEADLINE", "0", "seconds a task may run before the job fails (0: no limit)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.task_deadline_seconds =
           read_seconds(name, value, 1e9, "must be a number of seconds (0: no limit)");
     },
     nullptr, true},
    {"TASKGRID_CHECKPOINT", "(none)",
     "folder of the job's checkpoints (one every TASKGRID_CHECKPOINT_EVERY submissions; every "
     "rank must see it: a shared file system)",
     [](RuntimeOptions& o, const char*, const char* value) { o.checkpoint_dir = value; }},
    {"TASKGRID_CHECKPOINT_EVERY", "1000",
     "submissions between checkpoints (with TASKGRID_CHECKPOINT)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.checkpoint_every = static_cast<uint64_t>(
           read_number(name, value, 1, kNoLimit, "must be a positive number of submissions"));
     }},
    {"TASKGRID_CHECKPOINT_KEEP", "1", "complete checkpoints kept (older ones are removed)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.checkpoint_keep = static_cast<int>(
           read_number(name, value, 1, 1000, "must be a whole number from 1 to 1000"));
     }},
    {"TASKGRID_RESTART", "(none)",
     "restart from the newest complete checkpoint in this folder (same program, same ranks)",
     [](RuntimeOptions& o, const char*, const char* value) { o.restart_dir = value; }},
    {"TASKGRID_CHECK", "0",
     "1: checked mode for task code: guard zones around task buffers, in buffers verified "
     "unchanged, arguments read as the types they were submitted as (slower)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.check =
           read_choice<bool>(name, value, {{"0", false}, {"1", true}}, "a check choice", "0 or 1");
     }},
    {"TASKGRID_DEVICE", "auto",
     "devices for tasks with a device implementation: auto (CUDA GPUs if any), cuda, emulated "
     "or none",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.device = read_named<device::BackendKind>(
           name, value, [](const char* text) { return device::find_backend_kind(text); },
           "a device backend", "auto, cuda, emulated or none");
     },
     nullptr, true},
    {"TASKGRID_EMULATED_DEVICES", "1", "devices per rank when TASKGRID_DEVICE=emulated (1 to 64)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.emulated_devices =
           static_cast<int>(read_number(name, value, 1, 64, "must be a whole number from 1 to 64"));
     },
     nullptr, true},
    {"TASKGRID_DEVICE_MEMORY", "0",
     "bytes of each device the runtime may use (0: the device's free memory; emulated: 1 GiB)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.device_memory = static_cast<uint64_t>(read_number(
           name, value, 0, kNoLimit, "must be a number of bytes (0: the device's free memory)"));
     },
     nullptr, true},
    {"TASKGRID_DEVICE_STREAMS", "4", "streams in use at once per device (1 to 256)",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.device_streams = static_cast<int>(
           read_number(name, value, 1, 256, "must be a whole number from 1 to 256"));
     },
     nullptr, true},
    {"TASKGRID_DEVICE_STAGING_BYTES", "4194304",
     "where a rank has devices: transfers above this many bytes travel in pieces of it, so a "
     "version on a device is sent piece by piece as it is copied to host",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.device_staging_bytes = static_cast<size_t>(
           read_number(name, value, 1, kNoLimit, "must be a positive number of bytes"));
     }},
    {"TASKGRID_GPU_AWARE_MPI", "auto",
     "send device data straight from device memory: auto (where MPI says it reads CUDA memory), "
     "yes or no",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.gpu_aware_mpi = read_choice<GpuAwareMpi>(
           name, value,
           {{"auto", GpuAwareMpi::automatic}, {"yes", GpuAwareMpi::yes}, {"no", GpuAwareMpi::no}},
           "a choice", "auto, yes or no");
     },
     nullptr, true},
    {"TASKGRID_CHUNK_BYTES", "1073741824",
     "testing: split transfers into messages of at most this many bytes",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.chunk_bytes = static_cast<size_t>(
           read_number(name, value, 1, kNoLimit, "must be a positive number of bytes"));
     }},
    {"TASKGRID_STATS", "0", "1: rank 0 prints per-rank engine counters at finish()",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.stats = read_switch(name, value);
     }},
    {"TASKGRID_TIMING", "0",
     "1: time every task (TASKGRID_STATS' task_ms) even where placement needs no durations "
     "(heft times them anyway); one clock read per task",
     [](RuntimeOptions& o, const char* name, const char* value) {
       o.timing = read_switch(name, value);
     },
     nullptr, true},
    {"TASKGRID_DISPLAY_ENV", "0", "1 (or verbose): rank 0 prints these settings at start-up",
     [](RuntimeOptions& o, const char* name, const char* value) {
       const std::string text = value;
       if (text == "0" || text == "false")
         o.display_env = 0;
       else if (text == "1" || text == "true")
         o.display_env = 1;
       else if (text == "verbose")
         o.display_env = 2;
       else
         throw Error(std::string("taskgrid: ") + name + "=\"" + value +
                     "\" is not a display choice; choose 0, 1 or verbose");
     },
     nullptr, true},
    {"TASKGRID_TRACE", "(none)", "path of a Chrome trace of the whole job", nullptr,
     "the trace writers"},
    {"TASKGRID_DOT", "(none)", "path of a DOT dump of the task graph", nullptr,
     "the trace writers"},
    {"TASKGRID_PGAS_SEGMENT", "64M", "pgas::init: global segment per rank (bytes, k/M/G)", nullptr,
     "pgas::init"},
    {"TASKGRID_PGAS_SHM", "1", "pgas::init: 1 direct load/store within a node, 0 MPI only", nullptr,
     "pgas::init"},
    {"TASKGRID_PGAS_TIMEOUT", "120", "pgas: seconds a collective call waits for every rank",
     nullptr, "pgas::init"},
    {"TASKGRID_NCCL", "auto",
     "pgas device collectives: auto (NCCL where the backend is cuda, libnccl loads and each rank "
     "has its own GPU), yes (NCCL or an error) or no (staged through host memory and MPI)",
     nullptr, "pgas::init"},
    {"TASKGRID_NCCL_LIBRARY", "libnccl.so.2", "the NCCL library loaded at run time (path or name)",
     nullptr, "the device layer (NCCL)", true},
    {"TASKGRID_OFFLOAD", "on", "OpenMP offload plugin: off shows no remote devices", nullptr,
     "the OpenMP offload plugin"},
    {"TASKGRID_OFFLOAD_MEMORY", "(the node's memory)",
     "OpenMP offload plugin: bytes of address space a device rank reserves for device memory",
     nullptr, "the OpenMP offload plugin", true},
    {"TASKGRID_OFFLOAD_STATS", "0",
     "OpenMP offload plugin: 1 prints its kernels and transfers when the program ends", nullptr,
     "the OpenMP offload plugin", true},
};

// Names the project's scripts, tools and builds use: known, so they never
// warn, but not read by the runtime.
const char* const kToolNames[] = {
    "TASKGRID_BUILD_DIR",
    "TASKGRID_CORES",
    "TASKGRID_SYSTEMS",
    "TASKGRID_PYTHON",
    "TASKGRID_NATIVE",
    "TASKGRID_BUILD_TESTS",
    "TASKGRID_WERROR",
    "TASKGRID_HAVE_BLAS",
    "TASKGRID_DIFFERENTIAL_GRAPHS",
    "TASKGRID_BROADCAST_ROUNDS",
    "TASKGRID_BUILD_BENCH",
    "TASKGRID_BUILD_APPS",
    "TASKGRID_INSTALL",
    "TASKGRID_BOOTSTRAP_PROGRESS_SECONDS",
    "TASKGRID_SOURCE_DIR",
};

bool is_known(const std::string& name) {
  for (const Setting& setting : kSettings)
    if (name == setting.name) return true;
  for (const char* tool : kToolNames)
    if (name == tool) return true;
  return false;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Appends `text`, then spaces up to `width` characters.
void append_padded(std::string& out, std::string_view text, size_t width) {
  out.append(text);
  if (text.size() < width) out.append(width - text.size(), ' ');
}

}  // namespace

RuntimeOptions read_options_from_environment() {
  RuntimeOptions options;
  for (const Setting& setting : kSettings)
    if (setting.parse)
      if (const char* value = variable(setting.name)) setting.parse(options, setting.name, value);
  if (options.checkpoint_dir.empty() && options.checkpoint_every > 0)
    throw Error(
        "taskgrid: TASKGRID_CHECKPOINT_EVERY is set but TASKGRID_CHECKPOINT (the folder) is not");
  if (!options.checkpoint_dir.empty() && options.checkpoint_every == 0)
    options.checkpoint_every = 1000;
  return options;
}

std::vector<std::pair<std::string, std::string>> displayed_defaults() {
  std::vector<std::pair<std::string, std::string>> defaults;
  for (const Setting& setting : kSettings)
    if (setting.parse) defaults.emplace_back(setting.name, setting.fallback);
  return defaults;
}

std::string job_wide_settings(const RuntimeOptions& options) {
  std::string out;
  for (const Setting& setting : kSettings) {
    if (setting.per_rank) continue;
    const char* set = variable(setting.name);
    const bool is_mode = std::strcmp(setting.name, "TASKGRID_MODE") == 0;
    out += std::string(setting.name) + "=" +
           (is_mode ? mode_name(options.mode) : std::string(set ? set : setting.fallback)) + "\n";
  }
  return out;
}

std::string settings_disagreement(const std::vector<std::string>& per_rank) {
  // Per rank, its lines; every rank lists the same names in the same order
  // (one table), so line i is the same setting everywhere.
  std::vector<std::vector<std::string>> lines(per_rank.size());
  for (size_t r = 0; r < per_rank.size(); ++r) {
    size_t at = 0;
    while (at < per_rank[r].size()) {
      const size_t end = per_rank[r].find('\n', at);
      lines[r].push_back(per_rank[r].substr(at, end - at));
      at = end == std::string::npos ? per_rank[r].size() : end + 1;
    }
  }
  std::string message;
  for (size_t i = 0; !lines.empty() && i < lines[0].size(); ++i) {
    // Values in order of first appearance, each with its ranks.
    std::vector<std::pair<std::string, std::vector<size_t>>> values;
    std::string name;
    for (size_t r = 0; r < lines.size(); ++r) {
      const std::string line = i < lines[r].size() ? lines[r][i] : "?=(missing)";
      const size_t equals = line.find('=');
      name = line.substr(0, equals);
      const std::string value = line.substr(equals + 1);
      auto found = std::find_if(values.begin(), values.end(),
                                [&](const auto& entry) { return entry.first == value; });
      if (found == values.end())
        values.push_back({value, {r}});
      else
        found->second.push_back(r);
    }
    if (values.size() < 2) continue;
    message += message.empty() ? "" : "; ";
    message += name + " differs between ranks:";
    for (size_t v = 0; v < values.size(); ++v) {
      message.append(v ? ", \"" : " \"").append(values[v].first).append("\" on rank");
      message.append(values[v].second.size() > 1 ? "s" : "");
      for (size_t k = 0; k < values[v].second.size(); ++k)
        message.append(" ").append(std::to_string(values[v].second[k]));
    }
  }
  if (!message.empty())
    message += " (every rank must be started with the same job-wide TASKGRID_* settings)";
  return message;
}

const char* mode_name(Mode mode) { return mode == Mode::spmd ? "spmd" : "cluster"; }

std::string resolve_mode(Mode program, RuntimeOptions& options) {
  const std::optional<Mode> variable_mode = options.mode_variable;
  if (program == Mode::from_environment) {
    options.mode = variable_mode.value_or(Mode::cluster);
    return variable_mode ? "environment" : "default";
  }
  const std::string wanted = mode_name(program);
  if (variable_mode && *variable_mode != program)
    throw Error("taskgrid: the program runs in " + wanted +
                " mode (taskgrid::start/run); TASKGRID_MODE=" + mode_name(*variable_mode) +
                " can only confirm it (unset TASKGRID_MODE, or set it to " + wanted + ")");
  options.mode = program;
  return variable_mode ? "program, confirmed by the environment" : "program";
}

std::vector<std::string> unknown_setting_warnings() {
  std::vector<std::string> warnings;
  constexpr char kPrefix[] = "TASKGRID_";
  for (char** entry = environ; entry && *entry; ++entry) {
    const char* text = *entry;
    if (std::strncmp(text, kPrefix, sizeof kPrefix - 1) != 0) continue;
    const char* equals = std::strchr(text, '=');
    const std::string name = equals ? std::string(text, equals) : std::string(text);
    if (is_known(name)) continue;
    // The nearest known name, when close enough to be a slip of the keyboard.
    const std::string suffix = name.substr(sizeof kPrefix - 1);
    std::string nearest;
    size_t best = std::max<size_t>(1, std::min<size_t>(3, suffix.size() / 3)) + 1;
    const auto consider = [&](const char* known) {
      const size_t distance = edit_distance(suffix, std::string(known).substr(sizeof kPrefix - 1));
      if (distance < best) {
        best = distance;
        nearest = known;
      }
    };
    for (const Setting& setting : kSettings) consider(setting.name);
    for (const char* tool : kToolNames) consider(tool);
    std::string warning = "warning: taskgrid: " + name + " is not a TaskGrid setting";
    warning += nearest.empty() ? " (TASKGRID_DISPLAY_ENV=1 lists the settings)"
                               : "; did you mean " + nearest + "?";
    warnings.push_back(warning);
  }
  return warnings;
}

std::string describe_settings(const RuntimeOptions& options, const DisplayFacts& facts) {
  std::string out = "TASKGRID DISPLAY ENVIRONMENT BEGIN\n";
  out += "  _TASKGRID = '" + std::string(TASKGRID_VERSION_STRING) + "'\n";
  out += "  ranks = " + std::to_string(facts.ranks) + "\n";
  for (const Setting& setting : kSettings) {
    std::string value, source;
    const char* set = variable(setting.name);
    if (std::strcmp(setting.name, "TASKGRID_MODE") == 0) {
      value = mode_name(options.mode);
      source = facts.mode_source;
    } else if (std::strcmp(setting.name, "TASKGRID_THREADS") == 0) {
      value = std::to_string(facts.threads);
      source = set ? "environment" : "computed: cores / ranks on node";
    } else {
      value = set ? set : setting.fallback;
      source = set ? "environment" : "default";
    }
    // Appended in place: building temporary strings here trips GCC 12's
    // -Wstringop-overflow (a false positive) once LTO inlines it.
    std::string line = "  ";
    append_padded(line, setting.name, 26);
    line += "= ";
    append_padded(line, value, 10);
    line += " (";
    line += source;
    line += ")";
    if (setting.read_by) line += std::string(" [read by ") + setting.read_by + "]";
    if (options.display_env >= 2) line += "\n      " + std::string(setting.meaning);
    out += line + "\n";
  }
  out += "TASKGRID DISPLAY ENVIRONMENT END\n";
  return out;
}

std::optional<LauncherJob> launcher_job() {
  // Each launcher's size variable, with its own rank variable. Slurm's
  // SLURM_NTASKS is also set inside a batch script, where a program started
  // without srun is one process: only a job step (srun sets SLURM_STEP_ID)
  // says how many processes were really started.
  struct Pair {
    const char* size;
    const char* rank;
    const char* only_with = nullptr;  // counted only when this one is set too
  };
  const Pair pairs[] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                        {"PMI_SIZE", "PMI_RANK"},
                        {"PMIX_SIZE", "PMIX_RANK"},
                        {"MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK"},
                        {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_STEP_ID"}};
  for (const Pair& pair : pairs) {
    if (pair.only_with && !variable(pair.only_with)) continue;
    const int size = core::launcher_number(pair.size);
    if (size > 1) return LauncherJob{pair.size, core::launcher_number(pair.rank), size};
  }
  return std::nullopt;
}

int thread_limit(int cores) {
  return static_cast<int>(std::clamp<long long>(8LL * cores, 64, kMaxThreads));
}

int default_threads(int ranks_sharing_cores) {
  // The affinity mask, not the node's core count: a rank bound to 2 of 16
  // cores that started 8 threads would share each core with 3 more.
  return std::max(1, usable_cores() / std::max(1, ranks_sharing_cores));
}

}  // namespace taskgrid::runtime
