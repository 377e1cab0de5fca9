// FutexLock: the mutex of the planner and of the engine's loop, taken once
// per submission or pass, and of the task workers. Uncontended, lock and
// unlock are one atomic instruction each, inline; std::mutex costs a call
// into glibc each way (about 55 instructions per pair, counted with
// callgrind). Contended, a thread spins briefly and then sleeps through the
// seam's Blocking (blocking.h; a futex on Linux), so a rank sharing its core
// never burns it waiting and a simulator backend can take the sleep over.
//
// The three states of the futex mutex in Drepper's "Futexes Are Tricky":
// 0 free, 1 locked, 2 locked and maybe waited for; unlock wakes a sleeper
// only in state 2 (a thread that took it after sleeping leaves it in state
// 2, so at worst one wake-up is spurious). Not recursive. With
// comm::Condition where a thread must sleep on a condition.
#pragma once

#include <atomic>
#include <cstdint>

#include "comm/blocking.h"

namespace taskgrid::comm {

class FutexLock {
 public:
  explicit FutexLock(Blocking& blocking = system_blocking()) : blocking_(&blocking) {}
  FutexLock(const FutexLock&) = delete;
  FutexLock& operator=(const FutexLock&) = delete;

  void lock() {
    uint32_t expected = 0;
    if (state_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                       std::memory_order_relaxed))
      return;
    lock_contended();
  }
  bool try_lock() {
    uint32_t expected = 0;
    return state_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  void unlock() {
    if (state_.exchange(0, std::memory_order_release) == 2) blocking_->wake_one(state_);
  }

 private:
  void lock_contended() {
    // Holders keep it for a submission's worth of work (about a
    // microsecond): a short spin usually outlasts them.
    for (int spin = 0; spin < kSpins; ++spin) {
      if (state_.load(std::memory_order_relaxed) == 0) {
        uint32_t expected = 0;
        if (state_.compare_exchange_weak(expected, 1, std::memory_order_acquire,
                                         std::memory_order_relaxed))
          return;
      }
      pause();
    }
    // Mark it waited for; whoever takes it from here keeps that mark, so
    // the unlock after it wakes the next sleeper.
    while (state_.exchange(2, std::memory_order_acquire) != 0) blocking_->wait(state_, 2);
  }
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  static constexpr int kSpins = 100;
  Blocking* blocking_;
  std::atomic<uint32_t> state_{0};
};

}  // namespace taskgrid::comm
