// Runtime settings from the environment (read identically on every rank, so
// a bad value fails everywhere before any rank starts waiting on another).
#pragma once

#include <cstdint>
#include <string>

#include "coll/broadcast.h"

namespace taskgrid::runtime {

struct RuntimeOptions {
  int threads = 0;                 // TASKGRID_THREADS (0: cores / ranks on this node)
  std::string scheduler = "heft";  // TASKGRID_SCHEDULER
  std::string mode = "cluster";    // TASKGRID_MODE
  std::string progress =
      "program";           // TASKGRID_PROGRESS: who drives the engine while the program waits
  bool stats = false;      // TASKGRID_STATS=1
  size_t chunk_bytes = 0;  // TASKGRID_CHUNK_BYTES (testing: force chunked transfers)
  uint64_t divergence_interval = 1024;  // TASKGRID_CHECK_INTERVAL (spmd; 0: off)
  int channels = 4;                     // TASKGRID_CHANNELS (task-aware communication)
  coll::Strategy broadcast = coll::Strategy::automatic;  // TASKGRID_BCAST
  size_t broadcast_min_bytes = 64 << 10;  // TASKGRID_BCAST_MIN_BYTES: smaller ones go on demand
  size_t broadcast_chunk = 0;
  int finalize_timeout_seconds = 30;  // TASKGRID_FINALIZE_TIMEOUT (0: no limit)             //
                                      // TASKGRID_BCAST_CHUNK (0: from the cost model)
  uint64_t window =
      4096;  // TASKGRID_WINDOW: tasks in flight per rank before submit waits (0: no limit)
};

// Throws taskgrid::Error naming the variable and the accepted values.
RuntimeOptions read_options_from_environment();

// Cores of this node shared by the `ranks_on_node` ranks on it (at least 1).
int default_threads(int ranks_on_node);

}  // namespace taskgrid::runtime
