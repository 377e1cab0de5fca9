// plan::Analysis: handles and versions, the directory entries a submission
// reads, placement in both modes, and the outputs it records.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "plan/analysis.h"

namespace taskgrid::plan {
namespace {

AnalysisConfig spmd_config(int rank, int ranks) {
  AnalysisConfig config;
  config.spmd = true;
  config.rank = rank;
  config.ranks = ranks;
  return config;
}

AnalysisConfig cluster_config(int ranks, const char* scheduler) {
  AnalysisConfig config;
  config.ranks = ranks;
  config.scheduler = *taskgrid::sched::parse_scheduler(scheduler);
  return config;
}

TEST(Analysis, SpmdDataStartsOnItsOwner) {
  Analysis analysis(spmd_config(1, 4));
  char buffer[16] = {};
  for (int i = 0; i < 6; ++i) {
    const Analysis::Entered e = analysis.enter(buffer, sizeof buffer, -1);
    EXPECT_EQ(e.handle.id, static_cast<uint64_t>(i + 1));
    EXPECT_EQ(e.owner, i % 4);  // handle id - 1 modulo ranks
    EXPECT_EQ(e.home, e.owner);
    const graph::HandleState& state = analysis.tracker().state(e.handle);
    EXPECT_EQ(state.published, e.version);
    EXPECT_EQ(state.where.holders.front(), e.owner);
    EXPECT_EQ(analysis.tracker().state(e.handle).owner, e.owner);
  }
  const Analysis::Entered chosen = analysis.enter(buffer, 8, 3);
  EXPECT_EQ(chosen.owner, 3);
  EXPECT_EQ(chosen.home, 3);
  EXPECT_EQ(analysis.scheduler_name(), std::string("owner"));
}

TEST(Analysis, ClusterDataStartsOnTheHead) {
  Analysis analysis(cluster_config(4, "round_robin"));
  char buffer[8] = {};
  const Analysis::Entered e = analysis.enter(buffer, 8, -1);
  EXPECT_EQ(e.owner, 0);
  EXPECT_EQ(e.home, 0);
  const Analysis::Entered f = analysis.enter(buffer, 8, 2);
  EXPECT_EQ(f.owner, 2);
  EXPECT_EQ(f.home, 0);  // only the head has the program's memory
  EXPECT_EQ(analysis.scheduler_name(), std::string("round_robin"));
}

TEST(Analysis, ResolvedInputsPointAtTheirEntries) {
  Analysis analysis(spmd_config(0, 2));
  char buffer[8] = {};
  const auto a = analysis.enter(buffer, 8, 0);
  const auto b = analysis.enter(buffer, 8, 1);
  const DataAccess accesses[] = {in(a.handle), out(b.handle)};
  const auto& resolved = analysis.resolve(accesses, 2);
  ASSERT_EQ(resolved.size(), 2u);
  EXPECT_EQ(analysis.input(0), &analysis.tracker().state(a.handle).where);
  EXPECT_EQ(analysis.input(1), nullptr);
}

TEST(Analysis, AnEntryIsFoundOnlyForTheVersionItDescribes) {
  Analysis analysis(spmd_config(0, 2));
  char buffer[8] = {};
  const auto a = analysis.enter(buffer, 8, 0);
  graph::HandleState& state = analysis.tracker().state(a.handle);
  EXPECT_EQ(&Analysis::entry_of(a.version, state), &state.where);
  EXPECT_THROW(Analysis::entry_of(a.version + 1, state), std::logic_error);
}

// Resolves and places one task, then records its outputs (retiring what
// they supersede), as the planner does.
int plan_task(Analysis& analysis, const std::vector<DataAccess>& accesses,
              const TaskOptions& options, uint64_t task_id) {
  analysis.resolve(accesses.data(), accesses.size());
  const int rank = analysis.place(1, options, task_id);
  analysis.add_outputs(rank, [](const graph::ResolvedAccess&, const data::VersionInfo&) {});
  return rank;
}

TEST(Analysis, SpmdPlacesOnTheOwnerOfTheFirstWrittenElseReadHandle) {
  Analysis analysis(spmd_config(0, 4));
  char buffer[8] = {};
  const auto a = analysis.enter(buffer, 8, 1);
  const auto b = analysis.enter(buffer, 8, 2);
  const auto c = analysis.enter(buffer, 8, 3);
  const TaskOptions none;
  EXPECT_EQ(plan_task(analysis, {in(a.handle), out(b.handle), inout(c.handle)}, none, 10), 2);
  EXPECT_EQ(plan_task(analysis, {in(c.handle), in(a.handle)}, none, 10), 3);
  EXPECT_EQ(plan_task(analysis, {}, none, 10), 2);  // no data: task id modulo ranks
  EXPECT_EQ(plan_task(analysis, {}, none, 11), 3);
  TaskOptions hinted;
  hinted.rank = 0;
  EXPECT_EQ(plan_task(analysis, {in(a.handle), out(b.handle)}, hinted, 12), 0);
  // Owners are the handles' whatever rank produced their current version.
  EXPECT_EQ(plan_task(analysis, {inout(b.handle)}, none, 13), 2);
}

TEST(Analysis, ClusterPlacesWithThePolicyUnlessHinted) {
  Analysis analysis(cluster_config(3, "round_robin"));
  char buffer[8] = {};
  const auto a = analysis.enter(buffer, 8, -1);
  const DataAccess access = inout(a.handle);
  std::vector<int> ranks;
  for (int i = 0; i < 6; ++i) {
    analysis.resolve(&access, 1);
    ranks.push_back(analysis.place(1, TaskOptions{}, static_cast<uint64_t>(i + 1)));
    analysis.add_outputs(ranks.back(),
                         [](const graph::ResolvedAccess&, const data::VersionInfo&) {});
  }
  EXPECT_EQ(ranks, (std::vector<int>{0, 1, 2, 0, 1, 2}));
  TaskOptions hinted;
  hinted.rank = 2;
  analysis.resolve(&access, 1);
  EXPECT_EQ(analysis.place(1, hinted, 7), 2);
}

TEST(Analysis, OutputsAreRecordedOnTheirRankAndRetireTheirPredecessors) {
  Analysis analysis(spmd_config(0, 4));
  char buffer[8] = {};
  const auto a = analysis.enter(buffer, 8, 0);
  const auto b = analysis.enter(buffer, 8, 1);
  const DataAccess accesses[] = {inout(a.handle), in(b.handle), out(b.handle)};
  const auto& resolved = analysis.resolve(accesses, 3);
  const uint64_t new_a = resolved[0].out_version;
  const uint64_t new_b = resolved[2].out_version;
  // Until the outputs are published, the inputs' entries describe the
  // versions the task reads (b's too, although the task also writes b).
  ASSERT_NE(analysis.input(1), nullptr);
  EXPECT_EQ(analysis.input(1)->producer, 1);
  analysis.input(1)->holders.push_back(3);  // routed to the task's rank
  std::vector<uint64_t> retired;
  std::vector<std::vector<int>> retired_holders;
  analysis.add_outputs(3, [&](const graph::ResolvedAccess& r, const data::VersionInfo& where) {
    retired.push_back(r.superseded);
    retired_holders.emplace_back(where.holders.begin(), where.holders.end());
  });
  EXPECT_EQ(retired, (std::vector<uint64_t>{a.version, b.version}));
  EXPECT_EQ(retired_holders, (std::vector<std::vector<int>>{{0}, {1, 3}}));
  const graph::HandleState& state_a = analysis.tracker().state(a.handle);
  const graph::HandleState& state_b = analysis.tracker().state(b.handle);
  EXPECT_EQ(state_a.published, new_a);
  EXPECT_EQ(state_b.published, new_b);
  EXPECT_EQ(state_a.where.producer, 3);
  EXPECT_EQ(state_b.where.producer, 3);
  EXPECT_EQ(std::vector<int>(state_b.where.holders.begin(), state_b.where.holders.end()),
            std::vector<int>{3});
  EXPECT_EQ(analysis.next_version(), new_b + 1);
}

TEST(Analysis, InFlightCountsFollowTheLastTask) {
  Analysis analysis(spmd_config(0, 1));
  char buffer[8] = {};
  const auto a = analysis.enter(buffer, 8, 0);
  const DataAccess accesses[] = {in(a.handle), in(a.handle)};
  analysis.resolve(accesses, 2);
  analysis.count_in_flight();
  EXPECT_EQ(analysis.tracker().state(a.handle).tasks_in_flight, 2u);
  analysis.task_completed(1, 1e-6, 0);  // spmd: no policy to tell
  EXPECT_FALSE(analysis.tracker().task_done(&analysis.tracker().state(a.handle)));
  EXPECT_TRUE(analysis.tracker().task_done(&analysis.tracker().state(a.handle)));
}

}  // namespace
}  // namespace taskgrid::plan
