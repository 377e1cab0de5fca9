// InPlaceTasks: the engine's LocalTaskBuilder. The planner in this process
// builds the tasks of its own rank straight in Task records from here (under
// its lock) and hands their addresses over in comm::wire::LocalTask commands,
// instead of encoding task commands the engine would decode into its own
// records: that is the whole of spmd mode's tasks, and the head's own in
// cluster mode.
//
// Two threads use it: the planner's (open) and the engine's driving thread
// (give_back, hand_over). Finished records go back in bulk: the driving
// thread collects them and hands them over at its next drain of posted
// batches, and open() takes them all at once when it runs out, so each side
// takes the lock once per many tasks, never per task.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/blocking.h"
#include "comm/futex_lock.h"
#include "core/command_sink.h"
#include "data/record_pool.h"
#include "engine/task_table.h"

namespace taskgrid::engine {

class InPlaceTasks final : public core::LocalTaskBuilder {
 public:
  explicit InPlaceTasks(comm::Blocking& blocking) : lock_(blocking) {}

  // LocalTaskBuilder (the planner's thread). Throws std::logic_error for a
  // function not registered in this process (the planner checks first).
  Slot open(const comm::wire::Task& task, const void* args, const char* name) override;

  // The driving thread: a finished task's record, to be built again.
  void give_back(Task* task) { returned_.push_back(task); }
  // The driving thread: makes the records given back available to open().
  void hand_over();

  // For tests: records made so far.
  size_t made() const { return made_; }

 private:
  // open()'s side.
  data::RecordPool<Task> records_;
  FunctionCache functions_;
  TaskNames names_;
  size_t made_ = 0;
  // Between the two.
  comm::FutexLock lock_;
  std::vector<Task*> handed_over_;  // guarded by lock_
  // The driving thread's side.
  std::vector<Task*> returned_;
};

}  // namespace taskgrid::engine
