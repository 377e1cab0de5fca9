// How a polling loop waits when it has nothing to do. Ranks share cores on
// small machines (4 ranks on 2 cores), so an idle loop must give the core
// away: spin briefly (lowest latency), then yield, then sleep on a condition
// that producers can signal, with a bounded timeout so MPI is still polled.
// While MPI is moving a large message, though, it moves only as fast as the
// process polls: then the loop yields and never sleeps (`streaming`).
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "comm/blocking.h"

namespace taskgrid::comm {

// A signal that a sleeping loop has something to look at: a notify while
// nobody sleeps is kept for the next wait; one while a thread sleeps wakes it
// (one of them if several do) through the seam's Blocking (a SleepWord).
class Wakeup {
 public:
  explicit Wakeup(Blocking& blocking = system_blocking()) : word_(blocking) {}
  void notify() {
    signalled_.store(1);
    word_.notify_one();
  }
  void wait_for(std::chrono::microseconds timeout) {
    const uint32_t seen = word_.begin_wait();
    if (signalled_.load() == 0)
      word_.sleep_for(seen,
                      static_cast<uint64_t>(
                          std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count()));
    else
      word_.cancel();
    // Signalled or not, the caller looks for work now.
    signalled_.store(0);
  }

 private:
  std::atomic<uint32_t> signalled_{0};
  SleepWord word_;
};

class IdleBackoff {
 public:
  using clock = std::chrono::steady_clock;
  void reset() { idle_since_ = {}; }
  void idle(Wakeup& wakeup, bool streaming = false) {
    const auto now = clock::now();
    if (idle_since_ == clock::time_point{}) idle_since_ = now;
    const auto idle_for = now - idle_since_;
    if (idle_for < kSpin) return;
    if (idle_for < kYield || streaming) {
      sched_yield();
      return;
    }
    const auto sleep_for = std::min<std::chrono::microseconds>(
        kMaxSleep, std::chrono::duration_cast<std::chrono::microseconds>(idle_for) / 8);
    wakeup.wait_for(sleep_for);
  }

 private:
  static constexpr std::chrono::microseconds kSpin{20};
  static constexpr std::chrono::microseconds kYield{2000};
  static constexpr std::chrono::microseconds kMaxSleep{500};
  clock::time_point idle_since_{};
};

}  // namespace taskgrid::comm
