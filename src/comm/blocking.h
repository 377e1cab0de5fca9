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
  // Watches `word` for up to `ns` without sleeping; true once it no longer
  // holds `seen`. A wait that spins first is woken by a store alone, with no
  // call on either side, where a thread sleeping in the kernel takes
  // microseconds to be scheduled again. The default does not spin (a
  // simulator's actors must not: a busy loop stops simulated time).
  virtual bool spin_until_changed(const std::atomic<uint32_t>& word, uint32_t seen, uint64_t ns) {
    (void)ns;
    return word.load() != seen;
  }
};

// The operating system's: a futex on Linux; elsewhere std::atomic's wait and
// notify, with a timed wait that polls.
Blocking& system_blocking();
// The same for words in memory that other processes map too (the MPI
// transport's doorbells): futexes without the private flag.
Blocking& shared_blocking();

// The words of a SleepWord, where they are kept outside it (in memory shared
// between the ranks of a node, so that another process can wake its sleeper).
struct SleepWords {
  std::atomic<uint32_t> sequence{0};
  std::atomic<uint32_t> sleepers{0};
};

// What Condition and Wakeup share: a sequence word bumped by every notify,
// which sleepers sleep on, and a count of them, so that a notify makes a call
// only while somebody sleeps. A sleeper registers (begin_wait(), which returns
// the sequence it saw) before it checks what it waits for: a notify that
// bumps the sequence after that read then either sees the sleeper (all four
// operations are sequentially consistent) or makes its wait return at once.
// Every begin_wait() ends in exactly one sleep(), sleep_for() or cancel().
class SleepWord {
 public:
  explicit SleepWord(Blocking& blocking) : blocking_(&blocking), words_(&own_) {}
  // On words kept elsewhere (`blocking` must reach them: shared_blocking()
  // for memory shared between processes).
  SleepWord(Blocking& blocking, SleepWords& words) : blocking_(&blocking), words_(&words) {}
  SleepWord(const SleepWord&) = delete;
  SleepWord& operator=(const SleepWord&) = delete;
  uint32_t begin_wait() {
    words_->sleepers.fetch_add(1);
    return words_->sequence.load();
  }
  void sleep(uint32_t seen) {
    blocking_->wait(words_->sequence, seen);
    words_->sleepers.fetch_sub(1);
  }
  void sleep_for(uint32_t seen, uint64_t timeout_ns) {
    blocking_->wait_for(words_->sequence, seen, timeout_ns);
    words_->sleepers.fetch_sub(1);
  }
  void cancel() { words_->sleepers.fetch_sub(1); }
  // For a wait that spins before it registers: the sequence now, and a spin
  // until it moves (true) or `ns` have passed.
  uint32_t sequence() const { return words_->sequence.load(); }
  bool spin(uint32_t seen, uint64_t ns) {
    return blocking_->spin_until_changed(words_->sequence, seen, ns);
  }
  // A wait on `seen`, the sequence read before the caller's last look at
  // what it waits for: spins up to `spin_ns` unregistered (0: not at all),
  // then sleeps unless the sequence moved meanwhile. Returns once it moved,
  // or spuriously; the caller looks again.
  void wait_from(uint32_t seen, uint64_t spin_ns) {
    if (spin_ns > 0 && spin(seen, spin_ns)) return;
    if (begin_wait() == seen) {
      sleep(seen);
    } else {
      cancel();
    }
  }
  void notify_one() { notify_one(*blocking_, *words_); }
  void notify_all() {
    words_->sequence.fetch_add(1);
    if (words_->sleepers.load() > 0) blocking_->wake_all(words_->sequence);
  }
  // As notify_one() on a SleepWord over `words`, from anywhere that maps them.
  static void notify_one(Blocking& blocking, SleepWords& words) {
    words.sequence.fetch_add(1);
    if (words.sleepers.load() > 0) blocking.wake_one(words.sequence);
  }

 private:
  Blocking* blocking_;
  SleepWords own_;
  SleepWords* words_;
};

// A condition variable on Blocking, for a lock with lock() and unlock()
// (FutexLock). The state a waiter waits for must change under that lock;
// notify may come after the notifier unlocked: the waiter registers while it
// holds the lock, so a change made after its check bumps the word it sleeps on.
class Condition {
 public:
  explicit Condition(Blocking& blocking = system_blocking()) : word_(blocking) {}
  Condition(const Condition&) = delete;
  Condition& operator=(const Condition&) = delete;

  // `lock` is held on entry and on return; returns once done() holds. With
  // `spin_ns`, each round first spins that long unregistered (a notify then
  // only bumps the word, no call), and registers to sleep only after: the
  // sequence is read under the lock, so a change after the check moves it,
  // and a move between the spin and the registration cancels the sleep.
  template <typename Lock, typename Done>
  void wait(Lock& lock, Done&& done, uint64_t spin_ns = 0) {
    while (!done()) {
      if (spin_ns > 0) {
        const uint32_t seen = word_.sequence();
        lock.unlock();
        word_.wait_from(seen, spin_ns);
        lock.lock();
        continue;
      }
      const uint32_t seen = word_.begin_wait();
      lock.unlock();
      word_.sleep(seen);
      lock.lock();
    }
  }
  void notify_one() { word_.notify_one(); }
  void notify_all() { word_.notify_all(); }

 private:
  SleepWord word_;
};

}  // namespace taskgrid::comm
