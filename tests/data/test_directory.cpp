// data::VersionInfo and data::RankList: a directory entry (a version's
// size, producer and holders), as each handle keeps it for its current
// version (graph::HandleState::where). How entries follow the versions of a
// submission is tested with plan::Analysis (test_plan_analysis.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "data/directory.h"

namespace {

using taskgrid::data::RankList;
using taskgrid::data::VersionInfo;

std::vector<int> sorted(const RankList& holders) {
  std::vector<int> v(holders.begin(), holders.end());
  std::sort(v.begin(), v.end());
  return v;
}

TEST(VersionInfo, ResetMakesTheProducerTheOnlyHolder) {
  VersionInfo info;
  info.reset(64, 2, 1.5);
  EXPECT_EQ(info.bytes, 64u);
  EXPECT_EQ(info.producer, 2);
  EXPECT_EQ(info.ready_at, 1.5);
  EXPECT_EQ(sorted(info.holders), std::vector<int>{2});
  info.holders.push_back(0);
  info.holders.push_back(3);
  // The next version of the handle starts afresh: no holder of the last one.
  info.reset(32, 1, 0.0);
  EXPECT_EQ(info.bytes, 32u);
  EXPECT_EQ(sorted(info.holders), std::vector<int>{1});
  EXPECT_FALSE(info.holds(0));
  EXPECT_FALSE(info.holds(3));
}

TEST(VersionInfo, SourceIsTheProducerWhileItHoldsTheVersion) {
  VersionInfo info;
  info.reset(8, 2, 0.0);
  info.holders.push_back(5);
  EXPECT_EQ(info.source(), 2);
  // A producer that no longer holds it (a cluster head that sent its only
  // copy away): the first other holder.
  info.holders = {5, 6};
  EXPECT_EQ(info.source(), 5);
}

TEST(RankList, ManyRanksSpillAndCopy) {
  // Holder lists keep a few ranks inline; a version read on many ranks
  // spills to the heap, and copies and moves keep every rank.
  VersionInfo info;
  info.reset(8, 0, 0.0);
  for (int rank = 1; rank < 40; ++rank) info.holders.push_back(rank);
  EXPECT_EQ(info.holders.size(), 40u);
  const VersionInfo copy = info;
  VersionInfo moved = std::move(info);
  for (int rank = 0; rank < 40; ++rank) {
    EXPECT_TRUE(copy.holds(rank)) << rank;
    EXPECT_TRUE(moved.holds(rank)) << rank;
  }
  moved.holders = {5};
  EXPECT_EQ(sorted(moved.holders), std::vector<int>{5});
  // A spilled list reset to one rank is still right (and reuses its room).
  VersionInfo spilled = copy;
  spilled.reset(8, 7, 0.0);
  EXPECT_EQ(sorted(spilled.holders), std::vector<int>{7});
}

TEST(RankList, AssignmentReplacesTheRanks) {
  RankList list{1, 2, 3, 4, 5, 6};
  RankList other{9};
  list = other;
  EXPECT_EQ(sorted(list), std::vector<int>{9});
  list = {4, 2};
  EXPECT_EQ(sorted(list), (std::vector<int>{2, 4}));
  list.clear();
  EXPECT_TRUE(list.empty());
}

}  // namespace
