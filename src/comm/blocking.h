// Blocking: how a thread of the engine, of its workers or of the planner
// sleeps until another thread changes something. It is the seam's thread
// primitive beside start_thread(), sleep_ns(), idle() and the clock
// (transport.h): every lock and condition those threads wait on is built on
// it (FutexLock's contended path, Condition, Wakeup), so a simulator backend
// (SimGrid S4U, whose actors must never sleep in the kernel) replaces the
// sleeping and waking, and only those. The uncontended paths stay plain
// inline atomics: nothing on the hot path is a call through the seam.
//
// Futex semantics on a 32-bit word: wait() goes to sleep only if the word
// still holds `expected` (checked atomically with going to sleep), and
// returns after a wake, a timeout, or spuriously. Callers re-check.
#pragma once

#include <atomic>
#include <cstdint>

namespace taskgrid::comm {

class Blocking {
 public:
  virtual ~Blocking() = default;
  virtual void wait(std::atomic<uint32_t>& word, uint32_t expected) = 0;
  // As wait(), for at most `timeout_ns`.
  virtual void wait_for(std::atomic<uint32_t>& word, uint32_t expected, uint64_t timeout_ns) = 0;
  virtual void wake_one(std::atomic<uint32_t>& word) = 0;
  virtual void wake_all(std::atomic<uint32_t>& word) = 0;
};

// The operating system's: a futex on Linux; elsewhere std::atomic's wait and
// notify, with a timed wait that polls.
Blocking& system_blocking();

// A condition variable on Blocking, for a lock with lock() and unlock()
// (FutexLock). The state a waiter waits for must change under that lock;
// notify may come after the notifier unlocked. A sequence number bumped by
// every notify makes a wake-up between the waiter's check and its sleep
// impossible to miss; notify makes a call only while somebody waits.
class Condition {
 public:
  explicit Condition(Blocking& blocking = system_blocking()) : blocking_(&blocking) {}
  Condition(const Condition&) = delete;
  Condition& operator=(const Condition&) = delete;

  // `lock` is held on entry and on return; returns once done() holds.
  template <typename Lock, typename Done>
  void wait(Lock& lock, Done&& done) {
    while (!done()) {
      // Registered before the sequence is read: a notify that bumps it after
      // this read sees the waiter (both are sequentially consistent).
      waiters_.fetch_add(1);
      const uint32_t seen = sequence_.load();
      lock.unlock();
      blocking_->wait(sequence_, seen);
      waiters_.fetch_sub(1);
      lock.lock();
    }
  }
  void notify_one() {
    sequence_.fetch_add(1);
    if (waiters_.load() > 0) blocking_->wake_one(sequence_);
  }
  void notify_all() {
    sequence_.fetch_add(1);
    if (waiters_.load() > 0) blocking_->wake_all(sequence_);
  }

 private:
  Blocking* blocking_;
  std::atomic<uint32_t> sequence_{0};
  std::atomic<uint32_t> waiters_{0};
};

}  // namespace taskgrid::comm
