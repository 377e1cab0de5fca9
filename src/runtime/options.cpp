#include "runtime/options.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "taskgrid/taskgrid.hpp"

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

// One of `choices` (space separated in the message).
std::string read_choice(const char* name, const char* value,
                        std::initializer_list<const char*> choices, const char* what,
                        const char* listed) {
  for (const char* choice : choices)
    if (std::string(value) == choice) return value;
  throw Error(std::string("taskgrid: ") + name + "=\"" + value + "\" is not " + what + "; choose " +
              listed);
}

constexpr long long kNoLimit = 1LL << 62;

}  // namespace

RuntimeOptions read_options_from_environment() {
  RuntimeOptions options;
  if (const char* value = variable("TASKGRID_THREADS"))
    options.threads = static_cast<int>(
        read_number("TASKGRID_THREADS", value, 1, 4096, "must be a whole number from 1 to 4096"));
  if (const char* value = variable("TASKGRID_SCHEDULER"))
    options.scheduler =
        read_choice("TASKGRID_SCHEDULER", value, {"round_robin", "locality", "heft"}, "a scheduler",
                    "round_robin, locality or heft");
  if (const char* value = variable("TASKGRID_MODE"))
    options.mode =
        read_choice("TASKGRID_MODE", value, {"cluster", "spmd"}, "a mode", "cluster or spmd");
  if (const char* value = variable("TASKGRID_PROGRESS"))
    options.progress = read_choice("TASKGRID_PROGRESS", value, {"program", "engine"},
                                   "a progress model", "program or engine");
  if (const char* value = variable("TASKGRID_CHUNK_BYTES"))
    options.chunk_bytes = static_cast<size_t>(read_number(
        "TASKGRID_CHUNK_BYTES", value, 1, kNoLimit, "must be a positive number of bytes"));
  if (const char* value = variable("TASKGRID_CHECK_INTERVAL"))
    options.divergence_interval = static_cast<uint64_t>(
        read_number("TASKGRID_CHECK_INTERVAL", value, 0, 8192,
                    "must be a number of submissions from 0 (the check off) to 8192"));
  if (const char* value = variable("TASKGRID_CHANNELS"))
    options.channels = static_cast<int>(
        read_number("TASKGRID_CHANNELS", value, 0, 256, "must be a whole number from 0 to 256"));
  if (const char* value = variable("TASKGRID_BCAST"))
    options.broadcast = *coll::parse_strategy(
        read_choice("TASKGRID_BCAST", value, {"none", "p2p", "mpi", "tree", "pipeline", "auto"},
                    "a broadcast strategy", "none, p2p, mpi, tree, pipeline or auto"));
  if (const char* value = variable("TASKGRID_BCAST_MIN_BYTES"))
    options.broadcast_min_bytes = static_cast<size_t>(
        read_number("TASKGRID_BCAST_MIN_BYTES", value, 0, kNoLimit,
                    "must be a number of bytes (0: broadcast versions of any size)"));
  if (const char* value = variable("TASKGRID_BCAST_CHUNK"))
    options.broadcast_chunk = static_cast<size_t>(
        read_number("TASKGRID_BCAST_CHUNK", value, 0, kNoLimit,
                    "must be a number of bytes (0: chosen from measured latency and bandwidth)"));
  if (const char* value = variable("TASKGRID_FINALIZE_TIMEOUT"))
    options.finalize_timeout_seconds =
        static_cast<int>(read_number("TASKGRID_FINALIZE_TIMEOUT", value, 0, 86400,
                                     "must be a number of seconds from 0 (no limit) to 86400"));
  if (const char* value = variable("TASKGRID_WINDOW"))
    options.window = read_number("TASKGRID_WINDOW", value, 0, kNoLimit,
                                 "must be a whole number of tasks (0: no limit)");
  if (const char* value = variable("TASKGRID_STATS")) options.stats = std::string(value) != "0";
  return options;
}

int default_threads(int ranks_on_node) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / std::max(1, ranks_on_node));
}

}  // namespace taskgrid::runtime
