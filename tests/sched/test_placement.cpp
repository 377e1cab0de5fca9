// sched::make_policy and the three placement policies. The engine calls
// place() for an unhinted task, then placed() with the rank it went to
// (hinted tasks get only placed()), and completed() when a task finishes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "data/directory.h"
#include "sched/cost_model.h"
#include "sched/placement.h"
#include "taskgrid/taskgrid.hpp"

namespace {

using taskgrid::TaskOptions;
using taskgrid::data::VersionInfo;
using taskgrid::sched::CostModel;
using taskgrid::sched::DeviceSlots;
using taskgrid::sched::Executor;
using taskgrid::sched::parse_scheduler;
using taskgrid::sched::PlacedInput;
using taskgrid::sched::PlacementPolicy;
using taskgrid::sched::PlacementRequest;

// The policy a TASKGRID_SCHEDULER name selects.
std::unique_ptr<PlacementPolicy> make_policy(const char* name, int ranks, int threads,
                                             const CostModel& costs,
                                             const DeviceSlots& devices = {}) {
  return taskgrid::sched::make_policy(*parse_scheduler(name), ranks, threads, costs, devices);
}

VersionInfo version(size_t bytes, std::vector<int> holders, double ready_at = 0) {
  VersionInfo v;
  v.bytes = bytes;
  v.producer = holders.empty() ? 0 : holders.front();
  v.holders.assign(holders.begin(), holders.end());
  v.ready_at = ready_at;
  return v;
}

// A request over `versions` (kept alive by the caller).
struct Request {
  std::vector<PlacedInput> inputs;
  PlacementRequest request;
  explicit Request(const std::vector<const VersionInfo*>& versions = {}, double cost_hint = 0,
                   double now = 0, uint32_t function = 1) {
    for (const VersionInfo* v : versions) inputs.push_back(PlacedInput{v});
    request.function = function;
    request.cost_hint = cost_hint;
    request.inputs = inputs.empty() ? nullptr : inputs.data();
    request.num_inputs = inputs.size();
    request.now = now;
  }
};

// place() then placed(), as the engine does for an unhinted task.
int schedule(PlacementPolicy& policy, const PlacementRequest& request) {
  const int rank = policy.place(request);
  policy.placed(request, rank);
  return rank;
}

// ------------------------------------------------------------ make_policy --

TEST(Placement, MakePolicyByName) {
  const CostModel costs(1e-6, 1e9);
  for (const char* name : {"round_robin", "locality", "heft"}) {
    auto policy = make_policy(name, 4, 2, costs);
    ASSERT_NE(policy, nullptr) << name;
    EXPECT_EQ(std::string(policy->name()), name);
    EXPECT_EQ(std::string(taskgrid::sched::scheduler_name(*parse_scheduler(name))), name);
  }
}

// A bad TASKGRID_SCHEDULER is refused when the settings are read (its
// message, naming the choices, is the error_cases test bad_scheduler).
TEST(Placement, BadNameIsNoScheduler) {
  for (const char* bad : {"fifo", "", "HEFT", "round-robin"})
    EXPECT_FALSE(parse_scheduler(bad).has_value()) << "\"" << bad << "\"";
}

// ------------------------------------------------------------ round_robin --

TEST(Placement, RoundRobinCycles) {
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("round_robin", 3, 1, costs);
  const VersionInfo held = version(1 << 20, {2});
  const Request with_input({&held});
  const Request without;
  std::vector<int> got;
  for (int i = 0; i < 7; ++i)
    got.push_back(schedule(*policy, (i % 2 ? with_input : without).request));
  EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(Placement, RoundRobinOneRank) {
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("round_robin", 1, 4, costs);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(schedule(*policy, Request().request), 0);
}

// --------------------------------------------------------------- locality --

TEST(Placement, LocalityPicksTheRankHoldingMostInputBytes) {
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("locality", 4, 1, costs);
  const VersionInfo a = version(100, {2});
  const VersionInfo b = version(50, {1});
  EXPECT_EQ(policy->place(Request({&a, &b}).request), 2);

  // Bytes add up over inputs: 60 + 60 on rank 3 beat 100 on rank 1.
  const VersionInfo c = version(100, {1});
  const VersionInfo d = version(60, {3});
  const VersionInfo e = version(60, {3});
  EXPECT_EQ(policy->place(Request({&c, &d, &e}).request), 3);

  // A version held by several ranks counts for each of them: rank 3 holds
  // 100 + 10, rank 1 holds 10 + 95, rank 0 holds 100.
  const VersionInfo f = version(100, {0, 3});
  const VersionInfo g = version(10, {3, 1});
  const VersionInfo k = version(95, {1});
  EXPECT_EQ(policy->place(Request({&f, &g, &k}).request), 3);
  // ...and rank 1 wins once its own input outweighs the shared ones.
  const VersionInfo m = version(120, {1});
  EXPECT_EQ(policy->place(Request({&f, &g, &m}).request), 1);
}

TEST(Placement, LocalityIgnoresInFlightWhenBytesDiffer) {
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("locality", 3, 1, costs);
  const VersionInfo a = version(1000, {1});
  const Request request({&a});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(schedule(*policy, request.request), 1);
}

TEST(Placement, LocalityBreaksTiesByFewestTasksInFlight) {
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("locality", 4, 1, costs);
  const VersionInfo shared = version(100, {1, 2});
  const Request request({&shared});
  const Request elsewhere;

  // Rank 1 gets two tasks in flight, rank 2 one: rank 2 wins the tie.
  policy->placed(elsewhere.request, 1);
  policy->placed(elsewhere.request, 1);
  policy->placed(elsewhere.request, 2);
  EXPECT_EQ(policy->place(request.request), 2);

  // Rank 1's tasks complete: now rank 1 has fewer.
  policy->completed(1);
  policy->completed(1);
  EXPECT_EQ(policy->place(request.request), 1);

  // Equal again: either holder is acceptable, never a non-holder.
  policy->placed(elsewhere.request, 1);
  const int rank = policy->place(request.request);
  EXPECT_TRUE(rank == 1 || rank == 2) << rank;
}

TEST(Placement, LocalitySpreadsTasksWithoutInputs) {
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("locality", 4, 1, costs);
  std::vector<int> count(4, 0);
  for (int i = 0; i < 8; ++i) ++count[static_cast<size_t>(schedule(*policy, Request().request))];
  EXPECT_EQ(count, (std::vector<int>{2, 2, 2, 2}));

  // After completions on rank 3, the next input-less task goes there.
  policy->completed(3);
  EXPECT_EQ(policy->place(Request().request), 3);
}

// ------------------------------------------------------------------- heft --

TEST(Placement, HeftSlowNetworkStaysWithTheData) {
  const CostModel costs(1.0, 1e9);  // 1 s latency
  auto policy = make_policy("heft", 4, 1, costs);
  const VersionInfo a = version(1000, {2});
  EXPECT_EQ(policy->place(Request({&a}).request), 2);
  const VersionInfo b = version(8, {3}, 0.5);
  EXPECT_EQ(policy->place(Request({&b}, 0.25).request), 3);
}

TEST(Placement, HeftFastNetworkAvoidsABusyHolder) {
  const CostModel costs(1e-9, 1e12);
  auto policy = make_policy("heft", 4, 1, costs);
  const VersionInfo a = version(1000, {0});
  const Request request({&a}, 1.0);
  // Book rank 0 for ten seconds (hinted tasks: placed() only).
  for (int i = 0; i < 10; ++i) policy->placed(Request({}, 1.0).request, 0);
  const int rank = policy->place(request.request);
  EXPECT_NE(rank, 0);
  EXPECT_GE(rank, 0);
  EXPECT_LT(rank, 4);
  EXPECT_NEAR(policy->estimated_finish(), 1.0, 1e-3);  // starts at once elsewhere
}

TEST(Placement, HeftIdleHolderKeepsTheData) {
  // Even a fast network is slower than none: an idle holder wins.
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("heft", 4, 1, costs);
  const VersionInfo a = version(1 << 20, {3});
  EXPECT_EQ(policy->place(Request({&a}, 1.0).request), 3);
}

TEST(Placement, HeftSpreadsIndependentTasksOverRanksAndThreads) {
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("heft", 2, 2, costs);
  std::vector<int> count(2, 0);
  for (int i = 0; i < 4; ++i) {
    const Request request({}, 1.0);
    ++count[static_cast<size_t>(schedule(*policy, request.request))];
    // Four workers: all four run at once.
    EXPECT_NEAR(policy->estimated_finish(), 1.0, 1e-9) << "task " << i;
  }
  EXPECT_EQ(count, (std::vector<int>{2, 2}));
  // A fifth waits for a worker.
  schedule(*policy, Request({}, 1.0).request);
  EXPECT_NEAR(policy->estimated_finish(), 2.0, 1e-9);
}

TEST(Placement, HeftSpreadsOverManyRanks) {
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("heft", 4, 1, costs);
  std::vector<int> count(4, 0);
  for (int i = 0; i < 12; ++i)
    ++count[static_cast<size_t>(schedule(*policy, Request({}, 1.0).request))];
  EXPECT_EQ(count, (std::vector<int>{3, 3, 3, 3}));
}

TEST(Placement, HeftRespectsCostHints) {
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("heft", 2, 1, costs);
  // A long task on one rank; short ones then keep to the other rank until it
  // is as loaded as the first.
  const int long_rank = schedule(*policy, Request({}, 10.0).request);
  EXPECT_NEAR(policy->estimated_finish(), 10.0, 1e-9);
  for (int i = 0; i < 9; ++i) {
    EXPECT_NE(schedule(*policy, Request({}, 1.0).request), long_rank) << "short task " << i;
    EXPECT_NEAR(policy->estimated_finish(), i + 1.0, 1e-9);
  }
  // The hint overrides a measured duration of the same function.
  CostModel measured(1e-6, 1e9);
  measured.record_duration(5, 100.0);
  auto heft = make_policy("heft", 1, 1, measured);
  schedule(*heft, Request({}, 2.0, 0, 5).request);
  EXPECT_NEAR(heft->estimated_finish(), 2.0, 1e-9);
}

TEST(Placement, HeftUsesMeasuredDurationsWithoutAHint) {
  CostModel costs(1e-6, 1e9);
  auto policy = make_policy("heft", 1, 1, costs);
  schedule(*policy, Request({}, 0, 0, 77).request);
  EXPECT_NEAR(policy->estimated_finish(), CostModel::kUnknownTaskSeconds, 1e-12);
  costs.record_duration(77, 3.0);  // the policy sees the model's updates
  schedule(*policy, Request({}, 0, 0, 77).request);
  EXPECT_NEAR(policy->estimated_finish(), CostModel::kUnknownTaskSeconds + 3.0, 1e-9);
}

TEST(Placement, HeftEstimatedFinishGrowsAsTasksAreBooked) {
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("heft", 2, 1, costs);
  double previous = 0;
  for (int i = 0; i < 10; ++i) {
    schedule(*policy, Request({}, 0.5).request);
    const double finish = policy->estimated_finish();
    EXPECT_GE(finish, previous) << "task " << i;
    previous = finish;
  }
  EXPECT_NEAR(previous, 2.5, 1e-9);  // ten half-second tasks on two ranks

  // One worker: every booked task ends strictly later than the one before.
  auto single = make_policy("heft", 1, 1, costs);
  previous = single->estimated_finish();
  for (int i = 0; i < 5; ++i) {
    single->placed(Request({}, 0.5).request, 0);
    EXPECT_GT(single->estimated_finish(), previous) << "task " << i;
    previous = single->estimated_finish();
  }
  EXPECT_NEAR(previous, 2.5, 1e-9);
}

TEST(Placement, HeftStartsNoEarlierThanNowAndTheData) {
  const CostModel costs(1e-6, 1e9);
  auto policy = make_policy("heft", 2, 1, costs);
  schedule(*policy, Request({}, 1.0, 5.0).request);
  EXPECT_NEAR(policy->estimated_finish(), 6.0, 1e-9);
  const VersionInfo late = version(8, {1}, 20.0);  // produced at t = 20
  EXPECT_EQ(schedule(*policy, Request({&late}, 1.0, 5.0).request), 1);
  EXPECT_NEAR(policy->estimated_finish(), 21.0, 1e-9);
}

// ------------------------------------------------------ heft, uncalibrated --

constexpr size_t kTileBytes = 128 * 128 * sizeof(double);  // a 128 KiB tile

// The tasks of a tiled right-looking Cholesky of nt x nt tiles, as the
// planner hands them to the policy: each task's accessed tiles (in order;
// the last is the one it writes) and its function (1 potrf, 2 trsm, 3 syrk,
// 4 gemm). nt = 4: 20 tasks.
struct TileTask {
  uint32_t function;
  std::vector<size_t> tiles;  // indices into a row-major nt x nt grid
};
std::vector<TileTask> cholesky_tasks(int nt) {
  std::vector<TileTask> tasks;
  const auto at = [nt](int i, int j) { return static_cast<size_t>(i * nt + j); };
  for (int k = 0; k < nt; ++k) {
    tasks.push_back({1, {at(k, k)}});
    for (int i = k + 1; i < nt; ++i) tasks.push_back({2, {at(k, k), at(i, k)}});
    for (int i = k + 1; i < nt; ++i) {
      tasks.push_back({3, {at(i, k), at(i, i)}});
      for (int j = k + 1; j < i; ++j) tasks.push_back({4, {at(i, k), at(j, k), at(i, j)}});
    }
  }
  return tasks;
}

// Places every task as the planner does, with all the data first on rank 0
// (cluster mode: the head entered it) and no task completing meanwhile (all
// are submitted within microseconds): the tiles it reads gain a replica on
// the task's rank, the tile it writes becomes a new version there, ready
// when heft estimates the task finishes. Returns the tasks per rank.
std::vector<int> place_cholesky(PlacementPolicy& policy, int ranks, int nt) {
  std::vector<VersionInfo> tiles(static_cast<size_t>(nt * nt), version(kTileBytes, {0}));
  std::vector<int> count(static_cast<size_t>(ranks), 0);
  for (const TileTask& task : cholesky_tasks(nt)) {
    std::vector<const VersionInfo*> inputs;
    for (size_t t : task.tiles) inputs.push_back(&tiles[t]);
    const Request request(inputs, 0, 0, task.function);
    const int rank = policy.place_and_book(request.request);
    ++count[static_cast<size_t>(rank)];
    for (size_t t : task.tiles)
      if (!tiles[t].holds(rank)) tiles[t].holders.push_back(rank);
    tiles[task.tiles.back()].reset(kTileBytes, rank, policy.estimated_finish());
  }
  return count;
}

TEST(Placement, CholeskyShapeHasTwentyTasks) {
  EXPECT_EQ(cholesky_tasks(4).size(), 20u);  // the user's n = 512, tile 128
}

// The user's case: nothing measured yet, so every duration is an estimate.
// A fixed small default made a 128 KiB transfer outweigh any task, and the
// whole graph stayed on the head whatever the ranks (20/0/0/0 on a 2 GB/s
// link). Sized by their input bytes, the tasks spread where the network
// carries bytes faster than the tasks are assumed to use them.
TEST(Placement, HeftSpreadsAnUncalibratedCholesky) {
  for (double bandwidth : {2e9, 5e9, 2e10}) {
    const CostModel costs(5e-6, bandwidth);
    for (int ranks : {2, 4}) {
      auto policy = make_policy("heft", ranks, 1, costs);
      const std::vector<int> count = place_cholesky(*policy, ranks, 4);
      for (int r = 0; r < ranks; ++r)
        EXPECT_GE(count[static_cast<size_t>(r)], 20 / ranks / 2)
            << "rank " << r << " of " << ranks << ", bandwidth " << bandwidth;
    }
  }
}

// On a slow link (an oversubscribed node measures one at start-up) moving
// costs more than the tasks are assumed to take: they stay with the data.
TEST(Placement, HeftKeepsAnUncalibratedCholeskyOnASlowLink) {
  const CostModel costs(5e-6, 5e7);
  for (int ranks : {2, 4}) {
    auto policy = make_policy("heft", ranks, 1, costs);
    std::vector<int> all_on_the_head(static_cast<size_t>(ranks), 0);
    all_on_the_head[0] = 20;
    EXPECT_EQ(place_cholesky(*policy, ranks, 4), all_on_the_head) << ranks << " ranks";
  }
}

// Calibrated, heft weighs the measured durations as before: tasks far
// shorter than a tile's transfer stay with the data; long ones spread.
TEST(Placement, HeftWeighsACalibratedCholeskyByItsMeasuredDurations) {
  for (double seconds : {1e-6, 1e-3}) {
    CostModel costs(5e-6, 1e9);
    for (uint32_t function = 1; function <= 4; ++function) costs.record_duration(function, seconds);
    auto policy = make_policy("heft", 4, 1, costs);
    const std::vector<int> count = place_cholesky(*policy, 4, 4);
    if (seconds < 1e-5) {
      EXPECT_EQ(count, (std::vector<int>{20, 0, 0, 0}));
    } else {
      for (int r = 0; r < 4; ++r) EXPECT_GE(count[static_cast<size_t>(r)], 1) << "rank " << r;
    }
  }
}

// The estimate is no round robin: an uncalibrated chain of tasks on one
// handle stays where the handle is (its rank is never busier than a move).
TEST(Placement, HeftKeepsAnUncalibratedChainWithItsData) {
  const CostModel costs(5e-6, 1e9);
  auto policy = make_policy("heft", 4, 1, costs);
  VersionInfo tile = version(kTileBytes, {2});
  for (int i = 0; i < 10; ++i) {
    const Request request({&tile}, 0, 0, 7);
    EXPECT_EQ(policy->place_and_book(request.request), 2) << "task " << i;
    tile.reset(kTileBytes, 2, policy->estimated_finish());
  }
}

// What heft assumes of a function never measured: its input bytes at
// CostModel::kUnknownTaskBytesPerSecond (at least kUnknownTaskSeconds); a
// cost hint or a measured duration replaces the assumption.
TEST(Placement, HeftEstimatesAnUncalibratedTaskFromItsInputBytes) {
  CostModel costs(1e-6, 1e9);
  const VersionInfo big = version(1'000'000, {0});
  const VersionInfo small = version(8, {0});
  const Request two({&big, &big}, 0, 0, 3);
  EXPECT_NEAR(taskgrid::sched::estimated_task_seconds(costs, two.request),
              2e6 / CostModel::kUnknownTaskBytesPerSecond, 1e-12);
  const Request tiny({&small}, 0, 0, 3);
  EXPECT_EQ(taskgrid::sched::estimated_task_seconds(costs, tiny.request),
            CostModel::kUnknownTaskSeconds);
  const Request hinted({&big}, 0.5, 0, 3);
  EXPECT_EQ(taskgrid::sched::estimated_task_seconds(costs, hinted.request), 0.5);
  costs.record_duration(3, 2e-6);
  EXPECT_NEAR(taskgrid::sched::estimated_task_seconds(costs, two.request), 2e-6, 1e-15);
  // heft books the same estimate.
  CostModel fresh(1e-6, 1e9);
  auto policy = make_policy("heft", 1, 1, fresh);
  const Request one({&big}, 0, 0, 3);
  policy->place_and_book(one.request);
  EXPECT_NEAR(policy->estimated_finish(), 1e6 / CostModel::kUnknownTaskBytesPerSecond, 1e-12);
}

// -------------------------------------------------------------- property --

// Seeded draws for the property tests.
struct Draws {
  explicit Draws(uint64_t seed) : rng(seed) {}
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
  std::mt19937_64 rng;
};

// The planner books an unhinted task with place_and_book(): heft's single
// pass must choose and book exactly what place() then placed() would.
TEST(Placement, HeftPlaceAndBookMatchesPlaceThenPlaced) {
  Draws draws(20261125);
  for (int trial = 0; trial < 40; ++trial) {
    const int ranks = draws.uniform(1, 9);
    const int threads = draws.uniform(1, 4);
    CostModel costs(draws.real(0, 1e-3), draws.real(1e6, 1e11));
    costs.record_duration(1, draws.real(1e-6, 1e-3));
    auto two_steps = make_policy("heft", ranks, threads, costs);
    auto one_step = make_policy("heft", ranks, threads, costs);
    double now = 0;
    for (int task = 0; task < 200; ++task) {
      now += draws.real(0, 1e-4);
      std::vector<VersionInfo> versions(static_cast<size_t>(draws.uniform(0, 4)));
      for (VersionInfo& v : versions) {
        v = version(static_cast<size_t>(draws.uniform(0, 1 << 22)), {draws.uniform(0, ranks - 1)},
                    now + draws.real(-1e-3, 1e-3));
        if (draws.uniform(0, 1)) v.holders.push_back((v.producer + 1) % ranks);
      }
      std::vector<const VersionInfo*> pointers;
      for (const VersionInfo& v : versions) pointers.push_back(&v);
      const Request request(pointers, draws.uniform(0, 3) == 0 ? draws.real(1e-6, 1e-3) : 0.0, now,
                            static_cast<uint32_t>(draws.uniform(1, 2)));
      if (draws.uniform(0, 4) == 0) {  // a hinted task: placed() only, on both
        const int hint = draws.uniform(0, ranks - 1);
        two_steps->placed(request.request, hint);
        one_step->placed(request.request, hint);
      } else {
        ASSERT_EQ(one_step->place_and_book(request.request), schedule(*two_steps, request.request))
            << "trial " << trial << ", task " << task;
      }
      ASSERT_EQ(one_step->estimated_finish(), two_steps->estimated_finish())
          << "trial " << trial << ", task " << task;
    }
  }
}

// Heft without devices, the way it was first written: every rank's CPUs
// estimated in turn, the earliest finish taken, the lowest rank on ties.
class ScanningHeft {
 public:
  ScanningHeft(int ranks, int threads, const CostModel& costs)
      : slots_(static_cast<size_t>(ranks), std::vector<double>(static_cast<size_t>(threads), 0)),
        costs_(costs) {}
  // The rank chosen and its finish, booked (hint >= 0: on that rank).
  std::pair<int, double> book(const PlacementRequest& request, int hint = -1) {
    const double duration = taskgrid::sched::estimated_task_seconds(costs_, request);
    int best = -1;
    double best_finish = 0;
    for (int r = hint < 0 ? 0 : hint; r < (hint < 0 ? static_cast<int>(slots_.size()) : hint + 1);
         ++r) {
      double ready = request.now;
      for (size_t i = 0; i < request.num_inputs; ++i) {
        const VersionInfo& v = *request.inputs[i].version;
        double arrival = v.ready_at;
        if (!v.holds(r)) arrival += costs_.transfer_seconds(v.bytes);
        ready = std::max(ready, arrival);
      }
      std::vector<double>& cpus = slots_[static_cast<size_t>(r)];
      const double finish =
          std::max({ready, *std::min_element(cpus.begin(), cpus.end()), request.now}) + duration;
      if (best < 0 || finish < best_finish) {
        best = r;
        best_finish = finish;
      }
    }
    std::vector<double>& cpus = slots_[static_cast<size_t>(best)];
    *std::min_element(cpus.begin(), cpus.end()) = best_finish;
    return {best, best_finish};
  }

 private:
  std::vector<std::vector<double>> slots_;
  const CostModel& costs_;
};

// Heft looks only at the ranks holding an input and at the ranks whose CPUs
// are free first (O(log ranks) per task, not O(ranks)): it must still choose
// exactly the rank, and book exactly the finish, that a scan of every rank
// would, ties included (few distinct times, so that ties are frequent).
TEST(Placement, HeftChoosesAsAScanOfEveryRank) {
  Draws draws(20261130);
  for (int trial = 0; trial < 60; ++trial) {
    // Up to 8 ranks heft scans them all; from 9 it searches.
    const int ranks = trial < 15   ? draws.uniform(1, 8)
                      : trial < 45 ? draws.uniform(9, 40)
                                   : draws.uniform(60, 300);
    const int threads = draws.uniform(1, 3);
    CostModel costs(1e-6 * draws.uniform(0, 2), 1e9);
    if (draws.uniform(0, 1)) costs.record_duration(1, 4e-6);
    auto heft = make_policy("heft", ranks, threads, costs);
    ScanningHeft scan(ranks, threads, costs);
    double now = 0;
    for (int task = 0; task < 300; ++task) {
      if (draws.uniform(0, 3) == 0) now += 1e-6;
      std::vector<VersionInfo> versions(static_cast<size_t>(draws.uniform(0, 3)));
      for (VersionInfo& v : versions) {
        v = version(static_cast<size_t>(1000 * draws.uniform(0, 3)), {draws.uniform(0, ranks - 1)},
                    now + 1e-6 * draws.uniform(-1, 2));
        for (int more = draws.uniform(0, 2); more > 0; --more)
          v.holders.push_back(draws.uniform(0, ranks - 1));
      }
      std::vector<const VersionInfo*> pointers;
      for (const VersionInfo& v : versions) pointers.push_back(&v);
      const Request request(pointers, draws.uniform(0, 2) == 0 ? 2e-6 * draws.uniform(1, 3) : 0.0,
                            now, 1);
      if (draws.uniform(0, 5) == 0) {  // a hinted task
        const int hint = draws.uniform(0, ranks - 1);
        heft->placed(request.request, hint);
        ASSERT_EQ(heft->estimated_finish(), scan.book(request.request, hint).second);
        continue;
      }
      const auto [rank, finish] = scan.book(request.request);
      ASSERT_EQ(heft->place_and_book(request.request), rank)
          << "trial " << trial << " (" << ranks << " ranks), task " << task;
      ASSERT_EQ(heft->estimated_finish(), finish) << "trial " << trial << ", task " << task;
    }
  }
}

// Locality looks only at the ranks holding an input, and finds the least
// loaded rank through a tree: it must choose what a scan of every rank
// (most input bytes, then fewest tasks in flight, then the lowest rank) would.
TEST(Placement, LocalityChoosesAsAScanOfEveryRank) {
  Draws draws(20261201);
  for (int trial = 0; trial < 40; ++trial) {
    const int ranks = trial < 20 ? draws.uniform(1, 8) : draws.uniform(9, 200);
    CostModel costs(1e-6, 1e9);
    auto locality = make_policy("locality", ranks, 1, costs);
    std::vector<int64_t> in_flight(static_cast<size_t>(ranks), 0);
    std::deque<int> running;
    for (int task = 0; task < 300; ++task) {
      std::vector<VersionInfo> versions(static_cast<size_t>(draws.uniform(0, 3)));
      for (VersionInfo& v : versions) {
        v = version(static_cast<size_t>(draws.uniform(0, 2)), {draws.uniform(0, ranks - 1)});
        if (draws.uniform(0, 1)) v.holders.push_back(draws.uniform(0, ranks - 1));
      }
      std::vector<const VersionInfo*> pointers;
      for (const VersionInfo& v : versions) pointers.push_back(&v);
      const Request request(pointers);
      std::vector<size_t> bytes(static_cast<size_t>(ranks), 0);
      for (const VersionInfo& v : versions)
        for (int holder : v.holders) bytes[static_cast<size_t>(holder)] += v.bytes + 1;
      size_t best = 0;
      for (size_t r = 1; r < bytes.size(); ++r)
        if (bytes[r] > bytes[best] || (bytes[r] == bytes[best] && in_flight[r] < in_flight[best]))
          best = r;
      const int rank = schedule(*locality, request.request);
      ASSERT_EQ(rank, static_cast<int>(best))
          << "trial " << trial << " (" << ranks << " ranks), task " << task;
      in_flight[best] += 1;
      running.push_back(rank);
      while (!running.empty() && draws.uniform(0, 2) == 0) {  // some finish, oldest first
        locality->completed(running.front());
        in_flight[static_cast<size_t>(running.front())] -= 1;
        running.pop_front();
      }
    }
  }
}

TEST(Placement, EveryPolicyPlacesWithinTheRanks) {
  Draws draws(20240611);
  for (int trial = 0; trial < 60; ++trial) {
    const int ranks = draws.uniform(1, 9);
    const int threads = draws.uniform(0, 4);  // 0: the policy must still cope
    const CostModel costs(draws.real(0, 1e-3), draws.real(1e6, 1e11));
    for (const char* name : {"round_robin", "locality", "heft"}) {
      auto policy = make_policy(name, ranks, threads, costs);
      std::deque<int> running;
      double now = 0;
      for (int task = 0; task < 200; ++task) {
        now += draws.real(0, 1e-3);
        std::vector<VersionInfo> versions(static_cast<size_t>(draws.uniform(0, 4)));
        for (VersionInfo& v : versions) {
          v.bytes = static_cast<size_t>(draws.uniform(0, 1 << 22));
          v.producer = draws.uniform(0, ranks - 1);
          v.holders = {v.producer};
          for (int extra = draws.uniform(0, 2); extra > 0; --extra) {
            const int holder = draws.uniform(0, ranks - 1);
            if (!v.holds(holder)) v.holders.push_back(holder);
          }
          v.ready_at = now + draws.real(-1e-3, 1e-2);
        }
        std::vector<const VersionInfo*> pointers;
        for (const VersionInfo& v : versions) pointers.push_back(&v);
        const double hint = draws.uniform(0, 1) ? draws.real(1e-6, 1e-2) : 0.0;
        const Request request(pointers, hint, now, static_cast<uint32_t>(draws.uniform(1, 3)));
        int rank;
        if (draws.uniform(0, 9) == 0) {
          rank = draws.uniform(0, ranks - 1);  // a hinted task
        } else {
          rank = policy->place(request.request);
          ASSERT_GE(rank, 0) << name << " ranks " << ranks << " task " << task;
          ASSERT_LT(rank, ranks) << name << " ranks " << ranks << " task " << task;
        }
        policy->placed(request.request, rank);
        running.push_back(rank);
        while (!running.empty() && draws.uniform(0, 2) == 0) {
          policy->completed(running.front());
          running.pop_front();
        }
      }
    }
  }
}

}  // namespace

// ---------------------------------------------------------- heft, devices --

// A request for a function with the given implementations and device hint.
Request device_request(const std::vector<const VersionInfo*>& versions, bool has_cpu,
                       bool has_device, int hint = TaskOptions::any_device, uint32_t function = 9) {
  Request r(versions, 0, 0, function);
  r.request.has_cpu = has_cpu;
  r.request.has_device = has_device;
  r.request.device_hint = hint;
  return r;
}

TEST(Placement, HeftPutsDeviceOnlyTasksOnTheRanksWithDevices) {
  CostModel costs(1e-6, 1e9);
  costs.record_duration(9, 1.0, Executor::device);
  auto policy = make_policy("heft", 3, 1, costs, DeviceSlots{{0, 2, 0}, 1});
  std::vector<int> per_device(2, 0);
  for (int i = 0; i < 6; ++i) {
    const Request r = device_request({}, false, true);
    EXPECT_EQ(policy->place_and_book(r.request), 1) << "task " << i;
    const int device = policy->chosen_device(r.request.device_hint);
    ASSERT_GE(device, 0);
    ASSERT_LT(device, 2);
    ++per_device[static_cast<size_t>(device)];
  }
  EXPECT_EQ(per_device, (std::vector<int>{3, 3}));
  EXPECT_NEAR(policy->estimated_finish(), 3.0, 1e-9);
}

TEST(Placement, HeftWeighsMeasuredCpuAndDeviceDurations) {
  CostModel costs(1e-6, 1e9);
  costs.record_duration(9, 1.0, Executor::cpu);
  costs.record_duration(9, 0.25, Executor::device);
  auto policy = make_policy("heft", 1, 1, costs, DeviceSlots{{1}, 1});
  // The device until its queue ends later than the CPU would (ties: the device).
  for (int i = 0; i < 4; ++i) {
    const Request r = device_request({}, true, true);
    EXPECT_EQ(policy->place_and_book(r.request), 0);
    EXPECT_EQ(policy->chosen_device(r.request.device_hint), 0) << "task " << i;
    EXPECT_NEAR(policy->estimated_finish(), 0.25 * (i + 1), 1e-9);
  }
  const Request fifth = device_request({}, true, true);
  policy->place_and_book(fifth.request);
  EXPECT_EQ(policy->chosen_device(fifth.request.device_hint), TaskOptions::on_cpu);
  EXPECT_NEAR(policy->estimated_finish(), 1.0, 1e-9);
}

TEST(Placement, HeftPrefersTheDeviceThatHoldsTheInput) {
  CostModel costs(1e-6, 1e9);
  costs.record_duration(9, 0.001, Executor::device);
  costs.record_duration(9, 1.0, Executor::cpu);
  auto policy = make_policy("heft", 1, 1, costs, DeviceSlots{{3}, 1});
  VersionInfo on_device_2 = version(size_t{1} << 30, {0});
  on_device_2.device = 2;  // a copy to another device would take ~67 ms
  const Request r = device_request({&on_device_2}, true, true);
  policy->place_and_book(r.request);
  EXPECT_EQ(policy->chosen_device(r.request.device_hint), 2);
  EXPECT_NEAR(policy->estimated_finish(), 0.001, 1e-9);
}

TEST(Placement, HeftWeighsTheMeasuredDeviceLink) {
  // 20 ms on the device, 100 ms on a CPU, a 16 MiB input in host memory:
  // over the assumed 16 GB/s link (1 ms) the device wins; over a measured
  // 100 MB/s one (168 ms) the CPU does.
  const VersionInfo on_host = version(size_t{16} << 20, {0});
  for (const double bandwidth : {0.0, 100e6}) {
    CostModel costs(1e-6, 1e9);
    costs.set_device_link(1e-5, bandwidth);
    costs.record_duration(9, 0.02, Executor::device);
    costs.record_duration(9, 0.1, Executor::cpu);
    auto policy = make_policy("heft", 1, 1, costs, DeviceSlots{{1}, 1});
    const Request r = device_request({&on_host}, true, true);
    policy->place_and_book(r.request);
    EXPECT_EQ(policy->chosen_device(r.request.device_hint),
              bandwidth == 0 ? 0 : TaskOptions::on_cpu)
        << "link bandwidth " << bandwidth;
  }
}

TEST(Placement, HeftCountsTheCopyOffTheDeviceForCpuReaders) {
  // The input was made on device 0 and stays there: a CPU reader waits for
  // its copy to host (168 ms at 100 MB/s), so the device runs the task.
  CostModel costs(1e-6, 1e9);
  costs.set_device_link(1e-5, 100e6);
  costs.record_duration(9, 0.15, Executor::device);
  costs.record_duration(9, 0.1, Executor::cpu);
  auto policy = make_policy("heft", 1, 1, costs, DeviceSlots{{1}, 1});
  VersionInfo on_device = version(size_t{16} << 20, {0});
  on_device.device = 0;
  const Request r = device_request({&on_device}, true, true);
  policy->place_and_book(r.request);
  EXPECT_EQ(policy->chosen_device(r.request.device_hint), 0);
}

TEST(Placement, HeftCalibratesDevicesBeforeCopiesCountAgainstThem) {
  // Unknown durations are equal, so a host input's copy would make the CPU
  // win: a function's first tasks go to a device all the same.
  CostModel costs(1e-6, 1e9);
  auto policy = make_policy("heft", 1, 4, costs, DeviceSlots{{1}, 4});
  const VersionInfo on_host = version(1 << 20, {0});
  for (int i = 0; i < 4; ++i) {
    const Request r = device_request({&on_host}, true, true);
    policy->place_and_book(r.request);
    EXPECT_EQ(policy->chosen_device(r.request.device_hint), 0) << "task " << i;
  }
  // Calibrated (four tasks placed there): estimates decide, and the copy
  // makes the idle CPU the earlier finish.
  const Request fifth = device_request({&on_host}, true, true);
  policy->place_and_book(fifth.request);
  EXPECT_EQ(policy->chosen_device(fifth.request.device_hint), TaskOptions::on_cpu);
  // A measured device duration ends calibration at once for another function.
  costs.record_duration(10, 1.0, Executor::device);
  costs.record_duration(10, 1e-6, Executor::cpu);
  const Request measured = device_request({&on_host}, true, true, TaskOptions::any_device, 10);
  policy->place_and_book(measured.request);
  EXPECT_EQ(policy->chosen_device(measured.request.device_hint), TaskOptions::on_cpu);
}

TEST(Placement, HeftFollowsDeviceAndRankHints) {
  CostModel costs(1e-6, 1e9);
  costs.record_duration(9, 1.0, Executor::device);
  costs.record_duration(9, 1.0, Executor::cpu);
  auto policy = make_policy("heft", 2, 1, costs, DeviceSlots{{2, 2}, 1});
  // Device 1 however busy it gets.
  for (int i = 0; i < 3; ++i) {
    const Request r = device_request({}, true, true, 1);
    policy->place_and_book(r.request);
    EXPECT_EQ(policy->chosen_device(r.request.device_hint), 1);
  }
  // The CPU, with devices idle.
  const Request cpu = device_request({}, true, true, TaskOptions::on_cpu);
  policy->place_and_book(cpu.request);
  EXPECT_EQ(policy->chosen_device(cpu.request.device_hint), TaskOptions::on_cpu);
  // A rank hint: that rank's best executor is booked.
  const Request hinted = device_request({}, true, true);
  policy->placed(hinted.request, 1);
  const int device = policy->chosen_device(hinted.request.device_hint);
  EXPECT_TRUE(device == 0 || device == 1 || device == TaskOptions::on_cpu) << device;
  // A device no rank has: the hint stays, for the rank's engine to refuse.
  const Request missing = device_request({}, true, true, 5);
  policy->place_and_book(missing.request);
  EXPECT_EQ(policy->chosen_device(missing.request.device_hint), 5);
}

TEST(Placement, WithoutDevicesTheHintStays) {
  CostModel costs(1e-6, 1e9);
  for (const char* name : {"heft", "locality", "round_robin"}) {
    auto policy = make_policy(name, 2, 1, costs);
    for (int hint : {TaskOptions::any_device, TaskOptions::on_cpu, 0}) {
      const Request r = device_request({}, true, true, hint);
      const int rank = policy->place_and_book(r.request);
      EXPECT_GE(rank, 0) << name;
      EXPECT_LT(rank, 2) << name;
      EXPECT_EQ(policy->chosen_device(hint), hint) << name;
    }
    // A device-only function still gets a rank (whose engine reports it).
    const Request only = device_request({}, false, true);
    EXPECT_GE(policy->place_and_book(only.request), 0) << name;
    EXPECT_EQ(policy->chosen_device(TaskOptions::any_device), TaskOptions::any_device) << name;
  }
}
