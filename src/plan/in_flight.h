// InFlightTasks: the tasks this planner waits for (submitted to an engine it
// commands, not yet reported complete), by key, with what a completion
// needs: the rank (the placement policy's load), the function (the cost
// model), whether it is a channel task, the states of the handles it
// accesses (their counts of tasks in flight; stable while it is in flight,
// see graph::DependencyTracker) and the bytes it writes. Owns the counts of
// tasks and bytes in flight that the submission window and wait_all read.
//
// Keys are the planner's count of its own tasks (comm::wire::Task::completion_key),
// sequential in both modes, so records live in a sliding table by key
// (data/sliding_id_table.h); the handle states of a task with more than kInline
// accesses come from a node pool. Adding and completing a task allocate
// nothing in steady state.
#pragma once

#include <cstddef>
#include <cstdint>

#include "data/node_pool.h"
#include "data/sliding_id_table.h"
#include "graph/dependency_tracker.h"

namespace taskgrid::plan {

class InFlightTasks {
 public:
  struct Done {
    uint32_t function;
    int rank;
    bool communicates;
    bool on_device;  // it ran on a device (the cost model keeps those durations apart)
  };

  InFlightTasks() = default;
  ~InFlightTasks();
  InFlightTasks(const InFlightTasks&) = delete;
  InFlightTasks& operator=(const InFlightTasks&) = delete;

  void add(uint64_t key, uint32_t function, int rank, bool communicates,
           const graph::ResolvedAccess* accesses, size_t count, bool on_device = false);
  // Forgets a completed task: calls on_handle(graph::HandleState*) for each
  // of its accesses and returns true, or false for a key not in flight.
  template <typename OnHandle>
  bool complete(uint64_t key, Done& done, OnHandle&& on_handle) {
    Record* record = records_.find(key);
    if (!record) return false;
    done = Done{record->function, record->rank, record->communicates, record->on_device};
    graph::HandleState* const* handles = record->handles();
    for (uint32_t i = 0; i < record->count; ++i) on_handle(handles[i]);
    output_bytes_ -= record->output_bytes;
    release_spill(*record);
    records_.erase(key);
    completed_ += 1;
    if (done.communicates) communicating_ -= 1;
    return true;
  }

  // Tasks added and completed so far; channel tasks in flight.
  uint64_t submitted() const { return submitted_; }
  uint64_t completed() const { return completed_; }
  uint64_t in_flight() const { return submitted_ - completed_; }
  uint64_t communicating() const { return communicating_; }
  // Bytes the tasks in flight write (the new versions they create): what
  // the window's byte limit bounds.
  uint64_t output_bytes() const { return output_bytes_; }
  // For tests: the table's ring slots and entries moved out of it.
  size_t capacity() const { return records_.capacity(); }
  size_t long_lived() const { return records_.stragglers(); }

 private:
  static constexpr uint32_t kInline = 4;
  struct Record {
    uint32_t function = 0;
    int32_t rank = 0;
    uint32_t count = 0;
    bool communicates = false;
    bool on_device = false;
    uint64_t output_bytes = 0;
    graph::HandleState** spill = nullptr;  // count > kInline: every state, from pool_
    graph::HandleState* inline_handles[kInline] = {};
    graph::HandleState* const* handles() const { return spill ? spill : inline_handles; }
  };
  void release_spill(Record& record);

  data::NodePool pool_;
  data::SlidingIdTable<Record> records_{"task", 4096};
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  uint64_t communicating_ = 0;
  uint64_t output_bytes_ = 0;
};

}  // namespace taskgrid::plan
