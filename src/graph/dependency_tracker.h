// Dependency analysis at submission, per handle and version. Every write
// creates a new version (renaming), so:
//  - read-after-write: a reader names the version its last writer creates;
//  - write-after-read: a writer creates a new version, so readers of the old
//    one keep their data and may still run;
//  - write-after-write: successive writers create successive versions.
// The engine turns "needs version v" into waiting for v; nothing else orders
// tasks. The tracker is planner state, used by one thread at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::graph {

struct HandleState {
  void* host = nullptr;
  size_t bytes = 0;
  uint64_t current_version = 0;
  uint64_t tasks_in_flight = 0;  // submitted tasks accessing it, not completed
  bool released = false;
};

// What one access of a task resolves to.
struct ResolvedAccess {
  uint64_t handle = 0;
  AccessMode mode = AccessMode::in;
  size_t bytes = 0;
  uint64_t in_version = 0;   // read: the current version before the task
  uint64_t out_version = 0;  // write: the version the task creates
  uint64_t superseded = 0;   // write: the version this one replaces
};

class DependencyTracker {
 public:
  // Registers a buffer whose first version is `initial_version`.
  DataHandle add_handle(void* host, size_t bytes, uint64_t initial_version);
  // Throws Error for an unknown or released handle.
  HandleState& state(DataHandle handle);
  const HandleState& state(DataHandle handle) const;

  // Resolves a task's accesses in order. Reads see the versions current
  // before the task (also when the same handle is written by the task);
  // a handle may be written by at most one access of a task. New version
  // ids come from `next_version`. Throws Error on misuse.
  void resolve(const DataAccess* accesses, size_t count, uint64_t& next_version,
               std::vector<ResolvedAccess>& out);

  // State by id, released or not (completions of tasks on released handles).
  HandleState& any_state(uint64_t handle_id) { return handles_.at(handle_id - 1); }

  // Marks a handle released; its current version is returned for retirement.
  uint64_t release(DataHandle handle);
  size_t size() const { return handles_.size(); }

 private:
  std::vector<HandleState> handles_;  // handle id - 1
};

}  // namespace taskgrid::graph
