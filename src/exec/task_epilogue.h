// A hook run on the task's thread right after a task function returns and
// before its outputs are released. The PGAS layer sets it to complete the
// task's outstanding one-sided operations (a fence), so a task that depends
// on a task's outputs also sees that task's puts. One load and a branch per
// task when unset.
#pragma once

#include <atomic>

namespace taskgrid::exec {

using TaskEpilogue = void (*)();

inline std::atomic<TaskEpilogue> task_epilogue_hook{nullptr};

inline void set_task_epilogue(TaskEpilogue epilogue) {
  task_epilogue_hook.store(epilogue, std::memory_order_release);
}

inline void run_task_epilogue() {
  if (TaskEpilogue epilogue = task_epilogue_hook.load(std::memory_order_acquire)) epilogue();
}

}  // namespace taskgrid::exec
