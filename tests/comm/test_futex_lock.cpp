// comm::FutexLock: mutual exclusion under contention (more threads than
// cores, so holders are preempted and waiters reach the sleeping path), and
// try_lock.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/futex_lock.h"

namespace taskgrid::comm {
namespace {

TEST(FutexLock, CountsEveryIncrementOfEightContendingThreads) {
  FutexLock lock;
  // A plain counter and a flag that detects two holders at once.
  uint64_t counter = 0;
  std::atomic<int> holders{0};
  std::atomic<bool> overlapped{false};
  constexpr int kThreads = 8;
  constexpr int kIncrements = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        std::lock_guard guard(lock);
        if (holders.fetch_add(1) != 0) overlapped = true;
        counter += 1;
        // Now and then hold it long enough for waiters to go to sleep.
        if (i % 4096 == 0) std::this_thread::yield();
        holders.fetch_sub(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(overlapped.load());
  EXPECT_EQ(counter, uint64_t{kThreads} * kIncrements);
}

TEST(FutexLock, TryLockFailsWhileHeldAndSucceedsAfter) {
  FutexLock lock;
  ASSERT_TRUE(lock.try_lock());
  bool other_got_it = true;
  std::thread other([&] { other_got_it = lock.try_lock(); });
  other.join();
  EXPECT_FALSE(other_got_it);
  lock.unlock();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

// A thread that sleeps in lock() (the holder keeps it until the waiter is
// known to have started) is woken by unlock().
TEST(FutexLock, UnlockWakesASleepingWaiter) {
  FutexLock lock;
  lock.lock();
  std::atomic<bool> started{false}, acquired{false};
  std::thread waiter([&] {
    started = true;
    lock.lock();
    acquired = true;
    lock.unlock();
  });
  while (!started.load()) std::this_thread::yield();
  // Give the waiter every chance to pass its spin and sleep; correctness
  // does not depend on whether it did.
  for (int i = 0; i < 1000; ++i) std::this_thread::yield();
  EXPECT_FALSE(acquired.load());
  lock.unlock();
  waiter.join();
  EXPECT_TRUE(acquired.load());
}

}  // namespace
}  // namespace taskgrid::comm
