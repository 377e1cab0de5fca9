// data::Directory: the planner's record of live versions and their holders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/directory.h"

namespace {

using taskgrid::data::Directory;
using taskgrid::data::VersionInfo;

template <typename Vector>
std::vector<int> sorted(const Vector& holders) {
  std::vector<int> v(holders.begin(), holders.end());
  std::sort(v.begin(), v.end());
  return v;
}

// The holders Directory::remove hands back, sorted.
std::vector<int> removed_holders(Directory& d, uint64_t version) {
  std::vector<int> holders = {-7};  // stale content must not survive
  d.remove(version, holders);
  return sorted(holders);
}

TEST(Directory, AddRecordsTheVersionWithItsProducerAsHolder) {
  Directory d;
  EXPECT_EQ(d.size(), 0u);
  VersionInfo& info = d.add(10, 64, 2, 1.5);
  EXPECT_EQ(info.bytes, 64u);
  EXPECT_EQ(info.producer, 2);
  EXPECT_EQ(sorted(info.holders), std::vector<int>{2});
  EXPECT_DOUBLE_EQ(info.ready_at, 1.5);
  EXPECT_TRUE(info.holds(2));
  EXPECT_FALSE(info.holds(0));
  EXPECT_EQ(d.size(), 1u);
}

TEST(Directory, FindReturnsTheLiveEntryOrNull) {
  Directory d;
  VersionInfo& info = d.add(10, 64, 0, 0);
  EXPECT_EQ(d.find(10), &info);
  EXPECT_EQ(&d.at(10), &info);
  EXPECT_EQ(d.find(11), nullptr);
  EXPECT_EQ(d.find(0), nullptr);
  const Directory& cd = d;
  EXPECT_EQ(cd.find(10), &info);
  EXPECT_EQ(cd.find(11), nullptr);
}

TEST(Directory, EntriesSurviveTheTableGrowing) {
  // Placement reads inputs' entries before any output is added; what must
  // hold is that an entry's content survives the table moving it.
  Directory d;
  d.add(1, 8, 3, 0.5);
  d.add_holder(1, 7);
  for (uint64_t v = 2; v < 20000; ++v) d.add(v, 8, 0, 0);
  ASSERT_NE(d.find(1), nullptr);
  EXPECT_EQ(d.at(1).producer, 3);
  EXPECT_EQ(sorted(d.at(1).holders), (std::vector<int>{3, 7}));
  EXPECT_DOUBLE_EQ(d.at(1).ready_at, 0.5);
  EXPECT_EQ(d.size(), 19999u);
}

TEST(Directory, AddHolderIsIdempotent) {
  Directory d;
  d.add(5, 8, 1, 0);
  d.add_holder(5, 3);
  d.add_holder(5, 3);
  d.add_holder(5, 1);  // the producer already holds it
  d.add_holder(5, 0);
  const VersionInfo& info = d.at(5);
  EXPECT_EQ(sorted(info.holders), (std::vector<int>{0, 1, 3}));
  EXPECT_TRUE(info.holds(0));
  EXPECT_TRUE(info.holds(1));
  EXPECT_FALSE(info.holds(2));
  EXPECT_TRUE(info.holds(3));
}

TEST(Directory, HoldersAreKeptPerVersion) {
  Directory d;
  d.add(5, 8, 1, 0);
  d.add(6, 8, 2, 0);
  d.add_holder(5, 3);
  EXPECT_EQ(sorted(d.at(5).holders), (std::vector<int>{1, 3}));
  EXPECT_EQ(sorted(d.at(6).holders), std::vector<int>{2});
}

TEST(Directory, RemoveReturnsTheHoldersAndForgets) {
  Directory d;
  d.add(5, 8, 1, 0);
  d.add(6, 8, 2, 0);
  d.add_holder(5, 0);
  d.add_holder(5, 3);
  EXPECT_EQ(removed_holders(d, 5), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(d.find(5), nullptr);
  EXPECT_EQ(d.size(), 1u);
  EXPECT_NE(d.find(6), nullptr);  // the other version stays
  EXPECT_TRUE(removed_holders(d, 5).empty());
  EXPECT_TRUE(removed_holders(d, 99).empty());
  EXPECT_EQ(d.size(), 1u);
}

TEST(Directory, AddingTwiceThrowsAndKeepsTheEntry) {
  Directory d;
  d.add(7, 8, 1, 2.0);
  d.add_holder(7, 4);
  try {
    d.add(7, 16, 2, 3.0);
    FAIL() << "adding version 7 twice did not throw";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find('7'), std::string::npos) << e.what();
  }
  const VersionInfo& info = d.at(7);
  EXPECT_EQ(info.bytes, 8u);
  EXPECT_EQ(info.producer, 1);
  EXPECT_EQ(sorted(info.holders), (std::vector<int>{1, 4}));
  EXPECT_DOUBLE_EQ(info.ready_at, 2.0);
  EXPECT_EQ(d.size(), 1u);
}

TEST(Directory, AddAfterRemoveStartsAfresh) {
  Directory d;
  d.add(7, 8, 1, 0);
  d.add_holder(7, 2);
  removed_holders(d, 7);
  VersionInfo& again = d.add(7, 32, 3, 1.0);
  EXPECT_EQ(sorted(again.holders), std::vector<int>{3});
  EXPECT_EQ(again.bytes, 32u);
}

TEST(Directory, AtOnADeadVersionThrows) {
  Directory d;
  EXPECT_THROW(d.at(1), std::exception);
  d.add(1, 8, 0, 0);
  EXPECT_NO_THROW(d.at(1));
  removed_holders(d, 1);
  EXPECT_THROW(d.at(1), std::exception);
  EXPECT_THROW(d.add_holder(1, 0), std::exception);
  EXPECT_EQ(d.size(), 0u);
}

TEST(Directory, RemoveReusesTheCallersVector) {
  Directory d;
  d.add(1, 8, 2, 0);
  std::vector<int> holders;
  holders.reserve(16);
  const int* storage = holders.data();
  d.remove(1, holders);
  EXPECT_EQ(holders, std::vector<int>{2});
  EXPECT_EQ(holders.data(), storage);
}

TEST(Directory, ManyHoldersSpillAndCopy) {
  // Holder lists keep a few ranks inline; a version read on many ranks
  // spills to the heap, and copies and moves keep every rank.
  Directory d;
  d.add(3, 8, 0, 0);
  for (int rank = 1; rank < 40; ++rank) d.add_holder(3, rank);
  EXPECT_EQ(d.at(3).holders.size(), 40u);
  const VersionInfo copy = d.at(3);
  VersionInfo moved = std::move(d.at(3));
  for (int rank = 0; rank < 40; ++rank) {
    EXPECT_TRUE(copy.holds(rank)) << rank;
    EXPECT_TRUE(moved.holds(rank)) << rank;
  }
  moved.holders = {5};
  EXPECT_EQ(sorted(moved.holders), std::vector<int>{5});
  std::vector<int> holders;
  d.remove(3, holders);
  EXPECT_EQ(d.size(), 0u);
}

TEST(Directory, AVersionNeverSupersededKeepsMemoryBounded) {
  // Version 1 stays live (read-only data) while millions of later versions
  // come and go: the table must not grow to span them all.
  Directory d;
  d.add(1, 8, 2, 0);
  std::vector<int> holders;
  holders.reserve(8);
  constexpr uint64_t kLive = 100;  // versions alive at a time besides version 1
  for (uint64_t v = 2; v < 1'000'000; ++v) {
    d.add(v, 8, static_cast<int>(v % 4), 0);
    if (v >= 2 + kLive) d.remove(v - kLive, holders);
  }
  EXPECT_EQ(d.size(), kLive + 1);
  EXPECT_LE(d.capacity(), 4096u);
  EXPECT_EQ(d.long_lived(), 1u);  // version 1, out of the ring
  ASSERT_NE(d.find(1), nullptr);
  EXPECT_EQ(d.at(1).producer, 2);
  d.add_holder(1, 3);
  EXPECT_EQ(removed_holders(d, 1), (std::vector<int>{2, 3}));
  EXPECT_EQ(d.long_lived(), 0u);
}

TEST(Directory, ManyLiveVersionsGrowTheTable) {
  // Dense live ids are what the ring is for: they stay in it.
  Directory d;
  for (uint64_t v = 1; v <= 50000; ++v) d.add(v, 8, 0, 0);
  EXPECT_EQ(d.long_lived(), 0u);
  EXPECT_GE(d.capacity(), 50000u);
  for (uint64_t v = 1; v <= 50000; ++v) ASSERT_NE(d.find(v), nullptr) << v;
}

}  // namespace
