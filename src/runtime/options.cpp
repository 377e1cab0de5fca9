#include "runtime/options.h"

#include <cstdlib>
#include <thread>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::runtime {

RuntimeOptions read_options_from_environment() {
  RuntimeOptions options;
  if (const char* threads = std::getenv("TASKGRID_THREADS"); threads && *threads) {
    char* end = nullptr;
    const long value = std::strtol(threads, &end, 10);
    if (*end != '\0' || value < 1 || value > 4096)
      throw Error(std::string("taskgrid: TASKGRID_THREADS=\"") + threads +
                  "\" must be a whole number from 1 to 4096");
    options.threads = static_cast<int>(value);
  }
  if (const char* scheduler = std::getenv("TASKGRID_SCHEDULER"); scheduler && *scheduler) {
    const std::string name = scheduler;
    if (name != "round_robin" && name != "locality" && name != "heft")
      throw Error("taskgrid: TASKGRID_SCHEDULER=\"" + name +
                  "\" is not a scheduler; choose round_robin, locality or heft");
    options.scheduler = name;
  }
  if (const char* mode = std::getenv("TASKGRID_MODE"); mode && *mode) {
    const std::string name = mode;
    if (name != "cluster" && name != "spmd")
      throw Error("taskgrid: TASKGRID_MODE=\"" + name + "\" is not a mode; choose cluster or spmd");
    options.mode = name;
  }
  if (const char* chunk = std::getenv("TASKGRID_CHUNK_BYTES"); chunk && *chunk) {
    char* end = nullptr;
    const long long value = std::strtoll(chunk, &end, 10);
    if (*end != '\0' || value < 1)
      throw Error(std::string("taskgrid: TASKGRID_CHUNK_BYTES=\"") + chunk +
                  "\" must be a positive number of bytes");
    options.chunk_bytes = static_cast<size_t>(value);
  }
  if (const char* interval = std::getenv("TASKGRID_CHECK_INTERVAL"); interval && *interval) {
    char* end = nullptr;
    const long long value = std::strtoll(interval, &end, 10);
    if (*end != '\0' || value < 0)
      throw Error(std::string("taskgrid: TASKGRID_CHECK_INTERVAL=\"") + interval +
                  "\" must be a number of submissions (0 turns the check off)");
    options.divergence_interval = static_cast<uint64_t>(value);
  }
  if (const char* channels = std::getenv("TASKGRID_CHANNELS"); channels && *channels) {
    char* end = nullptr;
    const long value = std::strtol(channels, &end, 10);
    if (*end != '\0' || value < 0 || value > 256)
      throw Error(std::string("taskgrid: TASKGRID_CHANNELS=\"") + channels +
                  "\" must be a whole number from 0 to 256");
    options.channels = static_cast<int>(value);
  }
  if (const char* stats = std::getenv("TASKGRID_STATS"); stats && *stats)
    options.stats = std::string(stats) != "0";
  return options;
}

int default_threads(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local_ranks = 1;
  MPI_Comm_size(node, &local_ranks);
  MPI_Comm_free(&node);
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / std::max(1, local_ranks));
}

}  // namespace taskgrid::runtime
