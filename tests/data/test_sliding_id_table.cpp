// data::SlidingIdTable: a ring by id for increasing ids, with a side map for
// entries that outlive many newer ones. Checked against std::map on random
// workloads, and for bounded memory when old ids stay alive.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/sliding_id_table.h"

namespace {

using taskgrid::data::SlidingIdTable;

TEST(SlidingIdTable, InsertFindErase) {
  SlidingIdTable<int> table;
  EXPECT_TRUE(table.empty());
  table.insert(1, 10);
  table.insert(2, 20);
  table.insert(5, 50);
  EXPECT_EQ(table.size(), 3u);
  ASSERT_NE(table.find(2), nullptr);
  EXPECT_EQ(*table.find(2), 20);
  EXPECT_EQ(table.find(3), nullptr);
  EXPECT_TRUE(table.erase(2));
  EXPECT_FALSE(table.erase(2));
  EXPECT_EQ(table.find(2), nullptr);
  EXPECT_EQ(*table.find(1), 10);
  EXPECT_EQ(*table.find(5), 50);
  EXPECT_EQ(table.size(), 2u);
}

TEST(SlidingIdTable, AbsentIdsAreNotFound) {
  SlidingIdTable<int> table;
  // Empty slots must never pass for entries, whatever the id.
  for (uint64_t id : {uint64_t{0}, uint64_t{1}, uint64_t{64}, SlidingIdTable<int>::kEmpty})
    EXPECT_EQ(table.find(id), nullptr) << id;
  EXPECT_FALSE(table.erase(SlidingIdTable<int>::kEmpty));
  table.insert(64, 1);
  EXPECT_EQ(table.find(0), nullptr);
  EXPECT_EQ(table.find(128), nullptr);  // same slot, another id
  EXPECT_EQ(table.size(), 1u);
}

TEST(SlidingIdTable, DuplicatesThrowNamingTheId) {
  SlidingIdTable<int> table("version");
  table.insert(7, 1);
  try {
    table.insert(7, 2);
    FAIL() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("version 7"), std::string::npos) << e.what();
  }
  EXPECT_EQ(*table.find(7), 1);
  EXPECT_THROW(table.insert(SlidingIdTable<int>::kEmpty, 0), std::logic_error);
}

TEST(SlidingIdTable, DenseLiveIdsStayInTheRing) {
  SlidingIdTable<uint64_t> table("id", 256);
  for (uint64_t id = 1; id <= 100000; ++id) table.insert(id, id * 3);
  EXPECT_EQ(table.stragglers(), 0u);
  EXPECT_GE(table.capacity(), 100000u);
  for (uint64_t id = 1; id <= 100000; ++id) ASSERT_EQ(*table.find(id), id * 3);
}

TEST(SlidingIdTable, ASlidingWindowOfIdsNeedsARingOfItsSize) {
  // Tasks in flight: ids from 1 (or from anywhere) in order, the oldest
  // leaving first, a few thousand live. The ring follows the oldest live id,
  // so it stays at the window's size and nothing moves to the stragglers.
  for (const uint64_t first : {uint64_t{1}, uint64_t{70'000}}) {
    SlidingIdTable<uint64_t> table("id", 4096);
    constexpr uint64_t kWindow = 3000;
    for (uint64_t id = first; id < first + 200'000; ++id) {
      table.insert(id, id);
      if (id >= first + kWindow) {
        ASSERT_TRUE(table.erase(id - kWindow));
      }
    }
    EXPECT_EQ(table.size(), kWindow);
    EXPECT_EQ(table.stragglers(), 0u) << "first id " << first;
    EXPECT_EQ(table.capacity(), 4096u) << "first id " << first;
  }
}

TEST(SlidingIdTable, ALongLivedIdDoesNotGrowTheRing) {
  SlidingIdTable<uint64_t> table("id", 1024);
  table.insert(1, 111);
  for (uint64_t id = 2; id < 2'000'000; ++id) {
    table.insert(id, id);
    if (id >= 12) {
      ASSERT_TRUE(table.erase(id - 10));
    }
  }
  EXPECT_EQ(table.size(), 11u);
  EXPECT_LE(table.capacity(), 1024u);
  EXPECT_EQ(table.stragglers(), 1u);
  ASSERT_NE(table.find(1), nullptr);
  EXPECT_EQ(*table.find(1), 111u);
  EXPECT_TRUE(table.erase(1));
  EXPECT_EQ(table.stragglers(), 0u);
  EXPECT_EQ(table.find(1), nullptr);
}

TEST(SlidingIdTable, SparseIdsStayBounded) {
  // spmd: this rank's tasks are one id in a thousand.
  SlidingIdTable<uint64_t> table("id", 4096);
  std::vector<uint64_t> live;
  for (uint64_t id = 1000; id < 20'000'000; id += 1000) {
    table.insert(id, id);
    live.push_back(id);
    if (live.size() > 20) {
      ASSERT_TRUE(table.erase(live.front()));
      live.erase(live.begin());
    }
  }
  EXPECT_EQ(table.size(), 20u);
  EXPECT_LE(table.capacity(), 4096u);
  for (uint64_t id : live) ASSERT_NE(table.find(id), nullptr) << id;
}

TEST(SlidingIdTable, IdsBelowTheBaseAreStillAccepted) {
  SlidingIdTable<int> table;
  table.insert(10, 1);
  ASSERT_TRUE(table.erase(10));  // the ring moves past 10
  table.insert(10, 2);           // again, now below the ring
  table.insert(3, 3);
  EXPECT_EQ(*table.find(10), 2);
  EXPECT_EQ(*table.find(3), 3);
  EXPECT_THROW(table.insert(3, 4), std::logic_error);
  EXPECT_TRUE(table.erase(3));
  EXPECT_EQ(table.size(), 1u);
}

TEST(SlidingIdTable, ForEachVisitsEveryEntry) {
  SlidingIdTable<uint64_t> table("id", 64);
  table.insert(1, 1);
  for (uint64_t id = 2; id < 5000; ++id) {
    table.insert(id, id);
    if (id > 5) table.erase(id - 3);
  }
  std::vector<uint64_t> seen;
  table.for_each([&](uint64_t id, uint64_t& value) {
    EXPECT_EQ(id, value);
    seen.push_back(id);
  });
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<uint64_t>{1, 2, 4997, 4998, 4999}));
}

// Random increasing ids with gaps, erased in random order, some kept for
// very long: every lookup agrees with std::map, and the ring stays within
// max(free capacity, 8 x the most entries ever live).
TEST(SlidingIdTable, RandomWorkloadsAgreeWithAMap) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 random(seed);
    const size_t free_capacity = size_t{64} << (seed % 5);
    SlidingIdTable<uint64_t> table("id", free_capacity);
    std::map<uint64_t, uint64_t> reference;
    uint64_t next = 1 + random() % 100;
    size_t most_live = 0;
    for (int step = 0; step < 20000; ++step) {
      const uint64_t action = random() % 100;
      if (action < 45) {
        const uint64_t gap = random() % 8 == 0 ? random() % 5000 : random() % 3;
        next += 1 + gap;
        table.insert(next, next ^ seed);
        reference[next] = next ^ seed;
      } else if (action < 85 && !reference.empty()) {
        // Mostly old entries, as tasks and versions retire, but not only.
        auto it = reference.begin();
        std::advance(it, static_cast<long>(random() % std::min<size_t>(reference.size(), 8)));
        if (it->second % 97 != 3 || random() % 50 == 0) {  // a few live long
          ASSERT_TRUE(table.erase(it->first));
          reference.erase(it);
        }
      } else {
        const uint64_t probe = random() % (next + 10);
        const auto it = reference.find(probe);
        const uint64_t* found = table.find(probe);
        if (it == reference.end())
          ASSERT_EQ(found, nullptr) << probe;
        else
          ASSERT_TRUE(found && *found == it->second) << probe;
      }
      most_live = std::max(most_live, reference.size());
      ASSERT_EQ(table.size(), reference.size());
    }
    for (const auto& [id, value] : reference) ASSERT_EQ(*table.find(id), value) << id;
    EXPECT_LE(table.capacity(), std::max(free_capacity, 8 * most_live)) << "seed " << seed;
  }
}

}  // namespace
