// The failure detector (runtime/watchdog.h) stepped by hand over an
// in-process link: no threads, no clock, so detection is checked exactly.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "exec/running_task.h"
#include "runtime/watchdog.h"

namespace taskgrid::runtime {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

// Mailboxes of N ranks in one process.
struct Hub {
  explicit Hub(int ranks) : inbox(static_cast<size_t>(ranks)) {}
  std::vector<std::deque<std::pair<int, comm::HeartbeatMessage>>> inbox;
};

class HubLink final : public comm::HeartbeatLink {
 public:
  HubLink(Hub& hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(hub_.inbox.size()); }
  void send(int dest, const comm::HeartbeatMessage& message) override {
    hub_.inbox[static_cast<size_t>(dest)].push_back({rank_, message});
  }
  bool receive(int& source, comm::HeartbeatMessage& message) override {
    auto& mine = hub_.inbox[static_cast<size_t>(rank_)];
    if (mine.empty()) return false;
    source = mine.front().first;
    message = mine.front().second;
    mine.pop_front();
    return true;
  }

 private:
  Hub& hub_;
  int rank_;
};

struct Ring {
  Ring(int ranks, double timeout_seconds)
      : hub(ranks), arriving(static_cast<size_t>(ranks), std::vector<uint64_t>(ranks, 0)) {
    for (int r = 0; r < ranks; ++r)
      dogs.push_back(std::make_unique<Watchdog>(
          std::make_unique<HubLink>(hub, r),
          WatchdogConfig{.timeout_seconds = timeout_seconds,
                         .bytes_arriving_from =
                             [this, r](int peer) {
                               return arriving[static_cast<size_t>(r)][static_cast<size_t>(peer)];
                             }},
          [](const std::string&) { FAIL() << "the thread is not started in these tests"; }));
  }
  // Steps every rank but `skip` at `now`; returns rank -> failure message.
  std::vector<std::string> step(uint64_t now, int skip = -1) {
    std::vector<std::string> failures(dogs.size());
    for (size_t r = 0; r < dogs.size(); ++r)
      if (static_cast<int>(r) != skip) failures[r] = dogs[r]->step(now);
    return failures;
  }
  Hub hub;
  // [rank][peer]: bytes `rank` waits to receive from `peer`.
  std::vector<std::vector<uint64_t>> arriving;
  std::vector<std::unique_ptr<Watchdog>> dogs;
};

TEST(Watchdog, LiveRanksAreNeverReported) {
  Ring ring(4, 1.0);
  for (uint64_t now = 0; now < 30 * kSecond; now += kSecond / 20)
    for (const std::string& failure : ring.step(now)) ASSERT_EQ(failure, "") << "at " << now;
}

TEST(Watchdog, AStoppedRankIsReportedByItsSuccessorThenByEveryone) {
  Ring ring(4, 1.0);
  uint64_t now = 0;
  for (; now < 2 * kSecond; now += kSecond / 20) ring.step(now);
  const uint64_t stopped_at = now;
  std::vector<std::string> failures;
  // Rank 2 stops: nobody may report it within the timeout.
  for (; now <= stopped_at + kSecond - kSecond / 5; now += kSecond / 20) {
    failures = ring.step(now, 2);
    for (const std::string& failure : failures) ASSERT_EQ(failure, "") << "at " << now;
  }
  for (; now < stopped_at + 3 * kSecond; now += kSecond / 20) {
    failures = ring.step(now, 2);
    if (!failures[3].empty()) break;
  }
  EXPECT_NE(failures[3].find("rank 2 stopped responding (last heard 1."), std::string::npos)
      << failures[3];
  // The others learn it from rank 3 at their next step, with the same words.
  failures = ring.step(now + kSecond / 20, 2);
  for (int r : {0, 1}) {
    EXPECT_NE(failures[static_cast<size_t>(r)].find("rank 2 stopped responding"), std::string::npos)
        << "rank " << r << ": " << failures[static_cast<size_t>(r)];
    EXPECT_NE(failures[static_cast<size_t>(r)].find("detected by rank 3"), std::string::npos);
  }
}

// Its beats may wait behind the data it sends here: the time that data
// takes at kSlowestLinkBytesPerSecond is allowed on top of the timeout.
TEST(Watchdog, ARankSendingDataHereHasTimeForItsDataOnTopOfTheTimeout) {
  Ring ring(3, 1.0);
  uint64_t now = 0;
  for (; now < 2 * kSecond; now += kSecond / 20) ring.step(now);
  const uint64_t silent_from = now;
  ring.arriving[2][1] = 2 * kSlowestLinkBytesPerSecond;    // two seconds' worth, from rank 1
  ring.arriving[0][1] = 100 * kSlowestLinkBytesPerSecond;  // rank 0 watches rank 2, not 1
  std::vector<std::string> failures;
  for (; now <= silent_from + 3 * kSecond - kSecond / 5; now += kSecond / 20) {
    failures = ring.step(now, 1);
    for (const std::string& failure : failures) ASSERT_EQ(failure, "") << "at " << now;
  }
  for (; now < silent_from + 4 * kSecond && failures[2].empty(); now += kSecond / 20)
    failures = ring.step(now, 1);
  EXPECT_NE(failures[2].find("rank 1 stopped responding (last heard 3."), std::string::npos)
      << failures[2];
  EXPECT_NE(failures[2].find("TASKGRID_FAILURE_TIMEOUT=1.0 + 2.0 s for the 4000000 bytes it was "
                             "sending here"),
            std::string::npos)
      << failures[2];
}

TEST(Watchdog, OnceItsDataIsHereASilentRankIsReportedAfterTheTimeout) {
  Ring ring(3, 1.0);
  uint64_t now = 0;
  for (; now < 2 * kSecond; now += kSecond / 20) ring.step(now);
  const uint64_t silent_from = now;
  ring.arriving[2][1] = 10 * kSlowestLinkBytesPerSecond;
  std::vector<std::string> failures;
  for (; now < silent_from + 2 * kSecond; now += kSecond / 20) {
    failures = ring.step(now, 1);
    ASSERT_EQ(failures[2], "") << "at " << now;
  }
  ring.arriving[2][1] = 0;  // arrived: the silence is past the timeout already
  failures = ring.step(now, 1);
  EXPECT_NE(failures[2].find("rank 1 stopped responding (last heard 2."), std::string::npos)
      << failures[2];
  EXPECT_EQ(failures[2].find("bytes it was sending"), std::string::npos) << failures[2];
}

TEST(Watchdog, ALeavingRankIsNotAStoppedOne) {
  Ring ring(3, 1.0);
  uint64_t now = 0;
  for (; now < kSecond; now += kSecond / 20) ring.step(now);
  ring.dogs[1]->say_leaving();
  for (; now < 10 * kSecond; now += kSecond / 20)
    for (const std::string& failure : ring.step(now, 1)) ASSERT_EQ(failure, "") << "at " << now;
}

TEST(Watchdog, TwoRanksWatchEachOther) {
  Ring ring(2, 0.5);
  uint64_t now = 0;
  for (; now < kSecond; now += kSecond / 20) ring.step(now);
  std::vector<std::string> failures(2);
  for (; now < 3 * kSecond && failures[0].empty(); now += kSecond / 20)
    failures = ring.step(now, 1);
  EXPECT_NE(failures[0].find("rank 1 stopped responding"), std::string::npos) << failures[0];
}

TEST(Watchdog, ATaskPastItsDeadlineIsNamed) {
  Watchdog dog(
      nullptr,
      WatchdogConfig{.timeout_seconds = 0, .task_deadline_seconds = 2, .bytes_arriving_from = {}},
      [](const std::string&) {});
  const uint64_t started = 100 * kSecond;
  const exec::RunningTaskMark running(77, "slow_task", started);
  EXPECT_EQ(dog.step(started + kSecond), "");
  EXPECT_EQ(dog.step(started + 2 * kSecond), "");
  const std::string failure = dog.step(started + 2 * kSecond + kSecond / 10);
  EXPECT_NE(failure.find("task 'slow_task' (id 77) has run for 2.1 s"), std::string::npos)
      << failure;
  EXPECT_NE(failure.find("TASKGRID_TASK_DEADLINE=2.0"), std::string::npos) << failure;
}

TEST(Watchdog, AFinishedTaskHasNoDeadline) {
  Watchdog dog(
      nullptr,
      WatchdogConfig{.timeout_seconds = 0, .task_deadline_seconds = 1, .bytes_arriving_from = {}},
      [](const std::string&) {});
  { const exec::RunningTaskMark running(5, "quick", kSecond); }
  EXPECT_EQ(dog.step(100 * kSecond), "");
  EXPECT_EQ(exec::task_running_on_this_thread(), 0u);
}

}  // namespace
}  // namespace taskgrid::runtime
