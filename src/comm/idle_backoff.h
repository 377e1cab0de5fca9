// How a polling loop waits when it has nothing to do. Ranks share cores on
// small machines (4 ranks on 2 cores), so an idle loop must give the core
// away: spin briefly (lowest latency), then yield, then sleep on a condition
// that producers can signal, with a bounded timeout so MPI is still polled.
// While MPI is moving a large message, though, it moves only as fast as the
// process polls: then the loop yields and never sleeps (`streaming`).
#pragma once

#include <sched.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace taskgrid::comm {

class Wakeup {
 public:
  void notify() {
    {
      std::lock_guard lock(mutex_);
      signalled_ = true;
    }
    condition_.notify_one();
  }
  void wait_for(std::chrono::microseconds timeout) {
    std::unique_lock lock(mutex_);
    condition_.wait_for(lock, timeout, [this] { return signalled_; });
    signalled_ = false;
  }

 private:
  std::mutex mutex_;
  std::condition_variable condition_;
  bool signalled_ = false;
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
