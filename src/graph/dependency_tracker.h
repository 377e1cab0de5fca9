// Dependency analysis at submission, per handle and version. Every write
// creates a new version (renaming), so:
//  - read-after-write: a reader names the version its last writer creates;
//  - write-after-read: a writer creates a new version, so readers of the old
//    one keep their data and may still run;
//  - write-after-write: successive writers create successive versions.
// The engine turns "needs version v" into waiting for v; nothing else orders
// tasks. The tracker is planner state, used by one thread at a time.
//
// Handles are numbered 1, 2, ... and found through a sliding table by id
// (data/sliding_id_table.h). Their states stay where they are from
// add_handle until they are forgotten, so a task in flight keeps pointers to
// them and its completion needs no lookup. A released handle is forgotten
// once no task in flight uses it (its state is recycled), so a program that
// keeps entering and releasing handles runs in bounded memory.
#pragma once

#include <cstdint>
#include <vector>

#include "data/directory.h"
#include "data/record_pool.h"
#include "data/sliding_id_table.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::graph {

struct HandleState {
  uint64_t id = 0;
  void* host = nullptr;
  size_t bytes = 0;
  uint64_t current_version = 0;
  uint64_t tasks_in_flight = 0;  // submitted tasks accessing it, not completed
  bool released = false;
  int owner = 0;  // the rank its first version starts on (planner's choice)
  // Set by resolve() when the task it resolves writes the handle: later
  // accesses of that task read the version before it and may not write again.
  uint64_t written_by = 0;  // resolve() call number
  uint64_t before_task = 0;
  // The directory entry (where it lives) of the handle's last published
  // version: entered, or produced by a task already planned. While a task
  // that writes the handle is being planned, `current_version` is already
  // the new version and these still describe the one before it; the
  // planner's Analysis publishes the new one (plan/analysis.h).
  uint64_t published = 0;
  data::VersionInfo where;
};

// What one access of a task resolves to.
struct ResolvedAccess {
  uint64_t handle = 0;
  AccessMode mode = AccessMode::in;
  size_t bytes = 0;
  uint64_t in_version = 0;   // read: the current version before the task
  uint64_t out_version = 0;  // write: the version the task creates
  uint64_t superseded = 0;   // write: the version this one replaces
  int owner = 0;             // the handle's owner (HandleState::owner)
  // The handle's state; valid until the handle is forgotten (released with
  // no task in flight on it).
  HandleState* state = nullptr;
};

class DependencyTracker {
 public:
  // Registers a buffer whose first version is `initial_version`.
  DataHandle add_handle(void* host, size_t bytes, uint64_t initial_version, int owner = 0);
  // Throws Error for an unknown or released handle.
  HandleState& state(DataHandle handle);
  const HandleState& state(DataHandle handle) const;

  // Resolves a task's accesses in order. Reads see the versions current
  // before the task (also when the same handle is written by the task);
  // a handle may be written by at most one access of a task. New version
  // ids come from `next_version`. Throws Error on misuse (and then changes
  // nothing).
  void resolve(const DataAccess* accesses, size_t count, uint64_t& next_version,
               std::vector<ResolvedAccess>& out);
  // A task resolved just now (no other change to the tracker since) is in
  // flight: counts it on the handle of each of its accesses.
  static void count_in_flight(const std::vector<ResolvedAccess>& resolved) {
    for (const ResolvedAccess& r : resolved) r.state->tasks_in_flight += 1;
  }
  // A task in flight on the handle of `state` (ResolvedAccess::state)
  // finished, once per access counted. True when the handle has no task in
  // flight left; a released handle is then forgotten and `state` recycled.
  bool task_done(HandleState* state) {
    if (--state->tasks_in_flight != 0) return false;
    if (state->released) forget(state);
    return true;
  }

  // State by id, released or not; nullptr once a released handle is forgotten.
  HandleState* any_state(uint64_t handle_id) { return find(handle_id); }

  // Marks a handle released; its current version is returned for retirement.
  uint64_t release(DataHandle handle);
  // Handles entered so far (released ones included).
  size_t size() const { return next_id_ - 1; }
  uint64_t next_handle_id() const { return next_id_; }
  // Handles still tracked (not released, or released with tasks in flight),
  // and the slots of the table that holds them (for tests).
  size_t tracked() const { return handles_.size(); }
  size_t table_capacity() const { return handles_.capacity(); }

 private:
  [[noreturn]] void throw_bad_handle(uint64_t id) const;
  // Undoes the first `done` accesses of a rejected task, then throws for
  // access `done`.
  [[noreturn]] void reject(const DataAccess* accesses, size_t done,
                           const std::vector<ResolvedAccess>& resolved, uint64_t first_version,
                           uint64_t& next_version) const;
  HandleState& checked(uint64_t id) {
    HandleState* s = find(id);
    if (!s || s->released) throw_bad_handle(id);
    return *s;
  }
  HandleState* find(uint64_t id) const {
    HandleState* const* s = handles_.find(id);
    return s ? *s : nullptr;
  }
  void forget(HandleState* state);

  data::SlidingIdTable<HandleState*> handles_{"data handle", 1024};
  data::RecordPool<HandleState> states_;  // forgotten states are reused
  uint64_t next_id_ = 1;
  uint64_t resolves_ = 0;  // resolve() calls so far
};

}  // namespace taskgrid::graph
