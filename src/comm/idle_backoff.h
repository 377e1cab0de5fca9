// How a polling loop waits when it has nothing to do. Ranks share cores on
// small machines (4 ranks on 2 cores), so an idle loop must give the core
// away: spin briefly (lowest latency), then yield, then sleep on a condition
// that producers can signal, with a bounded timeout so MPI is still polled.
// While MPI is moving a large message, though, it moves only as fast as the
// process polls: then the loop yields and never sleeps (`streaming`).
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "comm/blocking.h"

namespace taskgrid::comm {

// Where a Wakeup keeps its state when another process must be able to ring
// it (the MPI transport's doorbells, in memory the ranks of a node share).
struct WakeupWords {
  std::atomic<uint32_t> signalled{0};
  SleepWords sleep;
};

// A signal that a sleeping loop has something to look at: a notify while
// nobody sleeps is kept for the next wait; one while a thread sleeps wakes it
// (one of them if several do) through the seam's Blocking (a SleepWord).
class Wakeup {
 public:
  explicit Wakeup(Blocking& blocking = system_blocking())
      : words_(&own_), word_(blocking, own_.sleep) {}
  // On `shared` words where there are (others ring them with ring(); waits
  // through shared_blocking()), else as above.
  Wakeup(Blocking& blocking, WakeupWords* shared)
      : words_(shared ? shared : &own_),
        word_(shared ? shared_blocking() : blocking, words_->sleep) {}
  void notify() {
    words_->signalled.store(1);
    word_.notify_one();
  }
  // notify() from another process that maps `words`, after it sent their
  // owner a message: a call only while the owner sleeps or is about to (it
  // then looks for messages after registering, so one of the two sees the other).
  static void ring(WakeupWords& words) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (words.sleep.sleepers.load() == 0) return;
    words.signalled.store(1);
    SleepWord::notify_one(shared_blocking(), words.sleep);
  }
  void wait_for(std::chrono::microseconds timeout) {
    wait_for(timeout, [] { return false; });
  }
  // As wait_for(timeout), but does not sleep when `arrived()`, asked once
  // registered as a sleeper, says that something came in meanwhile.
  template <typename Arrived>
  void wait_for(std::chrono::microseconds timeout, Arrived&& arrived) {
    const uint32_t seen = word_.begin_wait();
    if (words_->signalled.load() == 0 && !arrived())
      word_.sleep_for(seen,
                      static_cast<uint64_t>(
                          std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count()));
    else
      word_.cancel();
    // Signalled or not, the caller looks for work now.
    words_->signalled.store(0);
  }

 private:
  WakeupWords own_;
  WakeupWords* words_;
  SleepWord word_;
};

// How long an idle loop spins, then yields, before it sleeps.
struct IdlePhases {
  std::chrono::microseconds spin;
  std::chrono::microseconds yield;
};

// The phases of an idle rank on a node whose ranks outnumber its cores:
// while no more of them are awake (not asleep on their doorbells, this one
// included) than it has cores, each awake one has a core of its own and
// polls as if the node were not shared (`alone`); otherwise it sleeps early
// (`sharing`) so that a rank with work gets the core. At 3 ranks on 2 cores
// with one rank asleep, sleeping early left cores idle while the other two
// waited for each other's messages to wake them.
inline const IdlePhases& phases_on_shared_node(int awake_ranks, int cores, const IdlePhases& alone,
                                               const IdlePhases& sharing) {
  return awake_ranks <= cores ? alone : sharing;
}

class IdleBackoff {
 public:
  using clock = std::chrono::steady_clock;
  // Where a message's sender cannot wake a sleeper (another node, no
  // doorbell), the loop sleeps only after 2 ms without work.
  static constexpr IdlePhases kPolling{std::chrono::microseconds{20},
                                       std::chrono::microseconds{2000}};
  void reset() {
    idle_since_ = {};
    unclocked_spins_ = 0;
  }
  void idle(Wakeup& wakeup, bool streaming = false) {
    idle(wakeup, streaming, kPolling, [] { return false; });
  }
  // `arrived`: see Wakeup::wait_for.
  template <typename Arrived>
  void idle(Wakeup& wakeup, bool streaming, const IdlePhases& phases, Arrived&& arrived) {
    if (unclocked_spins_ > 0) {
      --unclocked_spins_;
      return;
    }
    const auto now = clock::now();
    if (idle_since_ == clock::time_point{}) idle_since_ = now;
    const auto idle_for = now - idle_since_;
    if (idle_for < phases.spin) {
      unclocked_spins_ = kSpinsPerClockRead - 1;
      return;
    }
    if (idle_for < phases.spin + phases.yield || streaming) {
      sched_yield();
      return;
    }
    const auto sleep_for = std::clamp<std::chrono::microseconds>(
        std::chrono::duration_cast<std::chrono::microseconds>(idle_for) / 8, kMinSleep, kMaxSleep);
    wakeup.wait_for(sleep_for, arrived);
  }

 private:
  // While spinning, the clock is read on every eighth call: a read (~30 ns
  // here) is a large share of an idle pass, and eight passes are a small
  // part of the shortest spin phase (5 µs).
  static constexpr int kSpinsPerClockRead = 8;
  static constexpr std::chrono::microseconds kMinSleep{20};
  static constexpr std::chrono::microseconds kMaxSleep{500};
  clock::time_point idle_since_{};
  int unclocked_spins_ = 0;  // calls left before the clock is read again
};

}  // namespace taskgrid::comm
