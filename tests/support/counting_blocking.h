// A comm::Blocking for tests: forwards to the system's and counts the calls,
// so a test can see that a lock, a condition or a whole engine sleeps and
// wakes through the seam (transport.h) and not behind its back.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "comm/blocking.h"

namespace taskgrid::comm {

class CountingBlocking final : public Blocking {
 public:
  void wait(std::atomic<uint32_t>& word, uint32_t expected) override {
    count_wait();
    system_blocking().wait(word, expected);
    if (word.load() != expected) changed_.fetch_add(1);
  }
  void wait_for(std::atomic<uint32_t>& word, uint32_t expected, uint64_t timeout_ns) override {
    count_wait();
    system_blocking().wait_for(word, expected, timeout_ns);
    if (word.load() != expected) changed_.fetch_add(1);
  }
  void wake_one(std::atomic<uint32_t>& word) override {
    wakes_.fetch_add(1);
    system_blocking().wake_one(word);
  }
  void wake_all(std::atomic<uint32_t>& word) override {
    wakes_.fetch_add(1);
    system_blocking().wake_all(word);
  }
  bool spin_until_changed(const std::atomic<uint32_t>& word, uint32_t seen, uint64_t ns) override {
    spins_.fetch_add(1);
    return system_blocking().spin_until_changed(word, seen, ns);
  }

  // Calls of wait() and wait_for(), and of wake_one() and wake_all().
  uint64_t waits() const { return waits_.load(); }
  uint64_t wakes() const { return wakes_.load(); }
  // Calls of spin_until_changed().
  uint64_t spins() const { return spins_.load(); }
  // Waits that returned with the word changed: something signalled.
  uint64_t signalled_waits() const { return changed_.load(); }
  // Waits by one thread in particular (set before it may wait).
  void watch(std::thread::id thread) { watched_.store(thread); }
  uint64_t watched_waits() const { return watched_waits_.load(); }

 private:
  void count_wait() {
    waits_.fetch_add(1);
    if (std::this_thread::get_id() == watched_.load()) watched_waits_.fetch_add(1);
  }
  std::atomic<std::thread::id> watched_{};
  std::atomic<uint64_t> watched_waits_{0};
  std::atomic<uint64_t> waits_{0};
  std::atomic<uint64_t> wakes_{0};
  std::atomic<uint64_t> spins_{0};
  std::atomic<uint64_t> changed_{0};
};

}  // namespace taskgrid::comm
