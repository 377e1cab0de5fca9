// comm::Blocking, the seam's thread primitive, and what is built on it:
// Condition, Wakeup and FutexLock's sleeping path. Each wake-up test first
// waits until the counting Blocking has seen the other thread go to sleep,
// so the path under test is the one that wakes a sleeper (not a check that
// finds the state already changed).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/blocking.h"
#include "comm/futex_lock.h"
#include "comm/idle_backoff.h"
#include "tests/support/counting_blocking.h"

namespace taskgrid::comm {
namespace {

using namespace std::chrono_literals;

// Yields until `blocking` has seen `n` waits begin.
void until_waits(const CountingBlocking& blocking, uint64_t n) {
  while (blocking.waits() < n) std::this_thread::yield();
}

TEST(SystemBlocking, WaitsOnlyWhileTheWordHoldsTheExpectedValue) {
  std::atomic<uint32_t> word{1};
  // Would sleep for ever (or a minute) if they ignored the value.
  system_blocking().wait(word, 0);
  system_blocking().wait_for(word, 0, 60'000'000'000);
  // The value expected: a timed wait returns by itself.
  system_blocking().wait_for(word, 1, 1'000'000);
  EXPECT_EQ(word.load(), 1u);
}

// A flag that threads wait for, as the planner's waits do: set under the
// lock, the condition notified after.
struct Flag {
  CountingBlocking blocking;
  FutexLock lock{blocking};
  Condition condition{blocking};
  bool ready = false;

  // Spinning `spin_ns` before each sleep (Condition::wait).
  void wait(uint64_t spin_ns = 0) {
    std::unique_lock guard(lock);
    condition.wait(
        guard, [&] { return ready; }, spin_ns);
  }
  void set() {
    std::lock_guard guard(lock);
    ready = true;
  }
};

// Without a spin, and with one that runs out first.
class SleepingWaiter : public ::testing::TestWithParam<uint64_t> {};

TEST_P(SleepingWaiter, IsWokenByANotify) {
  Flag flag;
  std::thread waiter([&] { flag.wait(GetParam()); });
  until_waits(flag.blocking, 1);
  EXPECT_EQ(flag.blocking.spins() > 0, GetParam() > 0);
  flag.set();
  flag.condition.notify_one();
  waiter.join();
  EXPECT_GE(flag.blocking.wakes(), 1u);
  // The waiter came back because the condition's word moved, not by timing.
  EXPECT_GE(flag.blocking.signalled_waits(), 1u);
}
INSTANTIATE_TEST_SUITE_P(Condition, SleepingWaiter, ::testing::Values(0, 1'000'000));

// A notify while the waiter spins ends the spin: no sleep, no wake call.
TEST(Condition, ASpinningWaiterTakesANotifyWithoutSleepingOrAWakeCall) {
  Flag flag;
  std::thread waiter([&] { flag.wait(60'000'000'000); });
  while (flag.blocking.spins() < 1 && flag.blocking.waits() < 1) std::this_thread::yield();
  flag.set();
  flag.condition.notify_one();
  waiter.join();
  EXPECT_EQ(flag.blocking.waits(), 0u);
  EXPECT_EQ(flag.blocking.wakes(), 0u);
}

TEST(Condition, NotifyAllWakesEveryWaiter) {
  Flag flag;
  std::atomic<int> woken{0};
  constexpr int kWaiters = 4;
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i)
    waiters.emplace_back([&] {
      flag.wait();
      woken += 1;
    });
  until_waits(flag.blocking, kWaiters);
  flag.set();
  flag.condition.notify_all();
  for (std::thread& waiter : waiters) waiter.join();
  EXPECT_EQ(woken.load(), kWaiters);
}

TEST(Condition, NotifyWithNobodyWaitingCallsNothing) {
  CountingBlocking blocking;
  Condition condition(blocking);
  condition.notify_one();
  condition.notify_all();
  EXPECT_EQ(blocking.wakes(), 0u);
}

TEST(FutexLock, AContendedLockSleepsAndWakesThroughItsBlocking) {
  CountingBlocking blocking;
  FutexLock lock(blocking);
  lock.lock();
  std::atomic<bool> acquired{false};
  std::thread other([&] {
    lock.lock();
    acquired = true;
    lock.unlock();
  });
  until_waits(blocking, 1);
  EXPECT_FALSE(acquired.load());
  lock.unlock();
  other.join();
  EXPECT_TRUE(acquired.load());
  EXPECT_GE(blocking.wakes(), 1u);
}

TEST(FutexLock, AnUncontendedLockCallsNothing) {
  CountingBlocking blocking;
  FutexLock lock(blocking);
  for (int i = 0; i < 1000; ++i) {
    std::lock_guard guard(lock);
  }
  EXPECT_EQ(blocking.waits(), 0u);
  EXPECT_EQ(blocking.wakes(), 0u);
}

TEST(Wakeup, ANotifyBeforeTheWaitIsKeptForIt) {
  CountingBlocking blocking;
  Wakeup wakeup(blocking);
  wakeup.notify();
  wakeup.wait_for(60s);  // returns without sleeping: it was signalled
  EXPECT_EQ(blocking.waits(), 0u);
  // Used up: the next wait sleeps (and times out).
  wakeup.wait_for(1ms);
  EXPECT_EQ(blocking.waits(), 1u);
}

TEST(Wakeup, NotifyWakesASleeper) {
  CountingBlocking blocking;
  Wakeup wakeup(blocking);
  const auto start = std::chrono::steady_clock::now();
  std::thread sleeper([&] { wakeup.wait_for(60s); });
  until_waits(blocking, 1);
  wakeup.notify();
  sleeper.join();
  EXPECT_GE(blocking.wakes(), 1u);
  // Woken, not timed out (the margin is a minute against microseconds).
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
}

TEST(Wakeup, DoesNotSleepWhenSomethingArrivedAfterItRegistered) {
  WakeupWords words;
  Wakeup wakeup(system_blocking(), &words);
  uint32_t sleepers_when_asked = 0;
  const auto start = std::chrono::steady_clock::now();
  wakeup.wait_for(60s, [&] {
    sleepers_when_asked = words.sleep.sleepers.load();
    return true;
  });
  // Asked once registered (a ring from now on would wake it), and no sleep.
  EXPECT_EQ(sleepers_when_asked, 1u);
  EXPECT_EQ(words.sleep.sleepers.load(), 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
}

TEST(Wakeup, ARingWhileNobodySleepsChangesNothing) {
  WakeupWords words;
  Wakeup::ring(words);
  EXPECT_EQ(words.signalled.load(), 0u);
  EXPECT_EQ(words.sleep.sequence.load(), 0u);
}

TEST(Wakeup, ARingWakesASleeperInAnotherProcess) {
  // The doorbells' case: the words in memory two processes share. A private
  // futex would not reach the child: it would sleep its minute and fail.
  void* shared =
      mmap(nullptr, sizeof(WakeupWords), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* words = new (shared) WakeupWords;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Wakeup wakeup(system_blocking(), words);
    const auto start = std::chrono::steady_clock::now();
    wakeup.wait_for(60s);
    _exit(std::chrono::steady_clock::now() - start < 30s ? 0 : 1);
  }
  while (words->sleep.sleepers.load() == 0) std::this_thread::yield();
  Wakeup::ring(*words);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child was not woken";
  EXPECT_GE(words->sleep.sequence.load(), 1u);
  munmap(shared, sizeof(WakeupWords));
}

TEST(IdleBackoff, SpinsThenYieldsThenSleepsAsItsPhasesSay) {
  CountingBlocking blocking;
  Wakeup wakeup(blocking);
  IdleBackoff backoff;
  const auto never = [] { return false; };
  // Within the spin and yield phases: no sleep. (Each phase change starts
  // over: a spinning backoff looks at the clock only every few calls.)
  backoff.idle(wakeup, false, IdlePhases{60s, 0s}, never);
  backoff.reset();
  backoff.idle(wakeup, false, IdlePhases{0s, 60s}, never);
  EXPECT_EQ(blocking.waits(), 0u);
  // Streaming data never sleeps, past its phases or not.
  backoff.idle(wakeup, true, IdlePhases{0s, 0s}, never);
  EXPECT_EQ(blocking.waits(), 0u);
  backoff.idle(wakeup, false, IdlePhases{0s, 0s}, never);
  EXPECT_EQ(blocking.waits(), 1u);
  // Something arrived: registered, not asleep.
  backoff.idle(wakeup, false, IdlePhases{0s, 0s}, [] { return true; });
  EXPECT_EQ(blocking.waits(), 1u);
}

TEST(IdleBackoff, OnASharedNodeRanksPollAsAloneWhileTheAwakeOnesFitTheCores) {
  const IdlePhases alone{20us, 2000us};
  const IdlePhases sharing{5us, 20us};
  // 3 ranks on 2 cores: one asleep leaves a core to each of the others.
  EXPECT_EQ(&phases_on_shared_node(2, 2, alone, sharing), &alone);
  EXPECT_EQ(&phases_on_shared_node(1, 2, alone, sharing), &alone);
  // All three awake: they sleep early so that the one with work gets a core.
  EXPECT_EQ(&phases_on_shared_node(3, 2, alone, sharing), &sharing);
  EXPECT_EQ(&phases_on_shared_node(4, 2, alone, sharing), &sharing);
}

TEST(IdleBackoff, ASpinningLoopReadsTheClockEveryEighthCallAndStopsSpinningThen) {
  CountingBlocking blocking;
  Wakeup wakeup(blocking);
  IdleBackoff backoff;
  const auto never = [] { return false; };
  backoff.idle(wakeup, false, IdlePhases{60s, 0s}, never);  // spinning: clock read
  // The phases say "sleep now", but the next seven calls do not look.
  for (int call = 0; call < 7; ++call) backoff.idle(wakeup, false, IdlePhases{0s, 0s}, never);
  EXPECT_EQ(blocking.waits(), 0u);
  backoff.idle(wakeup, false, IdlePhases{0s, 0s}, never);
  EXPECT_EQ(blocking.waits(), 1u);
  // Past the spin, every call looks: no more spins counted down.
  backoff.idle(wakeup, false, IdlePhases{0s, 0s}, never);
  EXPECT_EQ(blocking.waits(), 2u);
  // Work found: the next idle call reads the clock at once.
  backoff.reset();
  backoff.idle(wakeup, false, IdlePhases{0s, 0s}, never);
  EXPECT_EQ(blocking.waits(), 3u);
}

}  // namespace
}  // namespace taskgrid::comm
