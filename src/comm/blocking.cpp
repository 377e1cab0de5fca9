#include "comm/blocking.h"

#include <chrono>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#else
#include <thread>
#endif

namespace taskgrid::comm {
namespace {

// A pause per look; the clock every 64 looks (a few hundred nanoseconds).
bool spin_on(const std::atomic<uint32_t>& word, uint32_t seen, uint64_t ns) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  for (uint32_t looks = 1;; ++looks) {
    if (word.load(std::memory_order_acquire) != seen) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (looks % 64 == 0 && std::chrono::steady_clock::now() >= until) return false;
  }
}

#if defined(__linux__)

// Private futexes where the words live in this process, shared ones where
// other processes map them too. Errors (EAGAIN: the word changed; EINTR;
// ETIMEDOUT) are all "return and let the caller re-check".
long futex(std::atomic<uint32_t>& word, int op, uint32_t value, const timespec* timeout) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), op, value, timeout, nullptr, 0);
}

template <int kPrivate>
class FutexBlocking final : public Blocking {
 public:
  void wait(std::atomic<uint32_t>& word, uint32_t expected) override {
    futex(word, FUTEX_WAIT | kPrivate, expected, nullptr);
  }
  void wait_for(std::atomic<uint32_t>& word, uint32_t expected, uint64_t timeout_ns) override {
    const timespec timeout{static_cast<time_t>(timeout_ns / 1'000'000'000),
                           static_cast<long>(timeout_ns % 1'000'000'000)};
    futex(word, FUTEX_WAIT | kPrivate, expected, &timeout);
  }
  void wake_one(std::atomic<uint32_t>& word) override {
    futex(word, FUTEX_WAKE | kPrivate, 1, nullptr);
  }
  void wake_all(std::atomic<uint32_t>& word) override {
    futex(word, FUTEX_WAKE | kPrivate, INT_MAX, nullptr);
  }
  bool spin_until_changed(const std::atomic<uint32_t>& word, uint32_t seen, uint64_t ns) override {
    return spin_on(word, seen, ns);
  }
};
using SystemBlocking = FutexBlocking<FUTEX_PRIVATE_FLAG>;
using SharedBlocking = FutexBlocking<0>;

#else

class SystemBlocking final : public Blocking {
 public:
  void wait(std::atomic<uint32_t>& word, uint32_t expected) override { word.wait(expected); }
  void wait_for(std::atomic<uint32_t>& word, uint32_t expected, uint64_t timeout_ns) override {
    // std::atomic has no timed wait: look every 50 microseconds.
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
    while (word.load() == expected && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  void wake_one(std::atomic<uint32_t>& word) override { word.notify_one(); }
  void wake_all(std::atomic<uint32_t>& word) override { word.notify_all(); }
  bool spin_until_changed(const std::atomic<uint32_t>& word, uint32_t seen, uint64_t ns) override {
    return spin_on(word, seen, ns);
  }
};
// Without futexes a timed wait in another process still polls its word
// (above); an untimed one is not woken from another process.
using SharedBlocking = SystemBlocking;

#endif

}  // namespace

Blocking& system_blocking() {
  static SystemBlocking blocking;
  return blocking;
}

Blocking& shared_blocking() {
  static SharedBlocking blocking;
  return blocking;
}

}  // namespace taskgrid::comm
