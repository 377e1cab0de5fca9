// What each task-running thread is running right now: a slot per thread in
// a fixed process-wide table. Three readers need it:
//   - the crash handlers (runtime/crash_handlers.cpp) name the task that was
//     running on the faulting thread;
//   - the watchdog (runtime/watchdog.cpp) checks the optional per-task
//     deadline from its own thread;
//   - the API refuses calls that deadlock inside a task (wait_all, submit).
// A slot is claimed on a thread's first task and kept for the thread's life
// (released when it exits). Per task: a thread-local load and a few relaxed
// stores, no lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace taskgrid::exec {

struct RunningTask {
  std::atomic<uint64_t> task_id{0};  // 0: no task running on this thread
  // The task that runs or ran last on this thread (0: none yet); `name` is
  // its name. A task that wrote outside its buffers may crash the runtime
  // only later, outside any task: the crash message then names this one.
  std::atomic<uint64_t> last_task_id{0};
  std::atomic<const char*> name{nullptr};
  std::atomic<uint64_t> started_ns{0};  // 0 when not timed (no deadline set)
  std::atomic<bool> claimed{false};
};

// Threads that can be running a task at once in a process (engine, program,
// workers: TASKGRID_THREADS is at most 4096). Threads beyond it are not
// tracked: their tasks run, unnamed by crash messages and deadlines.
constexpr size_t kMaxRunningTasks = 4160;

// The table (the watchdog scans it).
RunningTask* running_task_table();

namespace detail {
// This thread's slot once claimed (a trivial thread-local: one load).
inline thread_local RunningTask* slot_here = nullptr;
RunningTask* claim_slot();
}  // namespace detail

// This thread's slot, claimed on first use (nullptr when the table is full).
// Claiming also gives the thread an alternate signal stack, so that a task
// that overflows its stack can still be named.
inline RunningTask* this_thread_running_task() {
  RunningTask* slot = detail::slot_here;
  return slot ? slot : detail::claim_slot();
}
// The task running on this thread (0: none).
inline uint64_t task_running_on_this_thread() {
  const RunningTask* slot = detail::slot_here;
  return slot ? slot->task_id.load(std::memory_order_relaxed) : 0;
}

// Marks a task as running on this thread for the guard's lifetime.
class RunningTaskMark {
 public:
  RunningTaskMark(uint64_t task_id, const char* name, uint64_t started_ns)
      : slot_(this_thread_running_task()) {
    if (!slot_) return;
    slot_->name.store(name, std::memory_order_relaxed);
    slot_->started_ns.store(started_ns, std::memory_order_relaxed);
    slot_->last_task_id.store(task_id, std::memory_order_relaxed);
    slot_->task_id.store(task_id, std::memory_order_release);
  }
  ~RunningTaskMark() {
    if (slot_) slot_->task_id.store(0, std::memory_order_release);
  }
  RunningTaskMark(const RunningTaskMark&) = delete;
  RunningTaskMark& operator=(const RunningTaskMark&) = delete;

 private:
  RunningTask* slot_;
};

}  // namespace taskgrid::exec
