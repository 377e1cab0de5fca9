#include "exec/running_task.h"

#include <signal.h>

#include <memory>

namespace taskgrid::exec {
namespace {

RunningTask table[kMaxRunningTasks];

// Large enough for the crash handler's formatting (it uses no heap).
constexpr size_t kSignalStackBytes = 64 << 10;

// Owns the thread's claim: releases the slot and the signal stack when the
// thread exits.
struct ThreadSlot {
  RunningTask* slot = nullptr;
  bool tried = false;
  std::unique_ptr<char[]> signal_stack;

  ~ThreadSlot() {
    if (signal_stack) {
      stack_t none{};
      none.ss_flags = SS_DISABLE;
      sigaltstack(&none, nullptr);
    }
    if (slot) {
      detail::slot_here = nullptr;
      slot->task_id.store(0, std::memory_order_relaxed);
      slot->last_task_id.store(0, std::memory_order_relaxed);
      slot->claimed.store(false, std::memory_order_release);
    }
  }

  void claim() {
    tried = true;
    for (RunningTask& candidate : table) {
      bool expected = false;
      if (!candidate.claimed.load(std::memory_order_relaxed) &&
          candidate.claimed.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
        slot = &candidate;
        break;
      }
    }
    // A thread that has no alternate signal stack gets one: a stack overflow
    // leaves no room on the thread's own stack to run the crash handler.
    stack_t current{};
    if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
      signal_stack = std::make_unique<char[]>(kSignalStackBytes);
      stack_t mine{};
      mine.ss_sp = signal_stack.get();
      mine.ss_size = kSignalStackBytes;
      if (sigaltstack(&mine, nullptr) != 0) signal_stack.reset();
    }
  }
};

thread_local ThreadSlot this_thread;

}  // namespace

RunningTask* running_task_table() { return table; }

RunningTask* detail::claim_slot() {
  // Tried once per thread: a full table is not scanned again per task.
  if (!this_thread.tried) this_thread.claim();
  slot_here = this_thread.slot;
  return slot_here;
}

}  // namespace taskgrid::exec
