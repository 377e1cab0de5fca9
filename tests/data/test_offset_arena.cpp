// The segment arena: first fit, merging of free neighbours, the high-water
// mark, ceilings; checked against a reference model on random sequences.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "data/offset_arena.h"

namespace taskgrid::data {
namespace {

TEST(OffsetArena, RoundsToCacheLinesAndGrows) {
  OffsetArena arena;
  EXPECT_EQ(arena.allocate(1, 1 << 20), 0u);
  EXPECT_EQ(arena.allocate(0, 1 << 20), 64u);  // zero bytes still get a distinct block
  EXPECT_EQ(arena.allocate(65, 1 << 20), 128u);
  EXPECT_EQ(arena.high_water(), 256u);
  EXPECT_EQ(arena.block_size(128), 128u);
  EXPECT_EQ(arena.bytes_in_use(), 256u);
}

TEST(OffsetArena, RespectsTheCeiling) {
  OffsetArena arena;
  EXPECT_EQ(arena.allocate(640, 640), 0u);
  EXPECT_FALSE(arena.allocate(1, 640));
  EXPECT_FALSE(OffsetArena().allocate(SIZE_MAX, SIZE_MAX));
  EXPECT_FALSE(OffsetArena().allocate(128, 127));
}

TEST(OffsetArena, ReusesHolesFirstFitAndMergesNeighbours) {
  OffsetArena arena;
  const size_t a = *arena.allocate(64, 1 << 20);
  const size_t b = *arena.allocate(64, 1 << 20);
  const size_t c = *arena.allocate(64, 1 << 20);
  const size_t d = *arena.allocate(64, 1 << 20);
  ASSERT_TRUE(arena.release(b));
  ASSERT_TRUE(arena.release(c));  // b and c merge into one 128-byte hole
  EXPECT_EQ(arena.allocate(128, 1 << 20), b);
  EXPECT_EQ(arena.high_water(), d + 64);
  EXPECT_FALSE(arena.release(b + 1));  // not a block
  ASSERT_TRUE(arena.release(a));
  EXPECT_EQ(arena.allocate(64, 1 << 20), a);
}

TEST(OffsetArena, FreeingTheTopLowersTheHighWaterMark) {
  OffsetArena arena;
  const size_t a = *arena.allocate(64, 1 << 20);
  const size_t b = *arena.allocate(64, 1 << 20);
  const size_t c = *arena.allocate(64, 1 << 20);
  ASSERT_TRUE(arena.release(b));
  ASSERT_TRUE(arena.release(c));  // c merges with b's hole, and both leave the top
  EXPECT_EQ(arena.high_water(), a + 64);
  // Growing again starts in place, under a ceiling that would not fit it higher.
  EXPECT_EQ(arena.allocate(128, 192), 64u);
  ASSERT_TRUE(arena.release(a));
  ASSERT_TRUE(arena.release(64));
  EXPECT_EQ(arena.high_water(), 0u);
  EXPECT_EQ(arena.blocks_in_use(), 0u);
}

TEST(OffsetArena, GrowingStartsInAFreeBlockTouchingTheTop) {
  OffsetArena arena;
  const size_t a = *arena.allocate(64, 1 << 20);
  const size_t b = *arena.allocate(128, 1 << 20);
  (void)a;
  const size_t c = *arena.allocate(64, 1 << 20);
  ASSERT_TRUE(arena.release(b));
  ASSERT_TRUE(arena.release(c));  // the top block leaves with its free neighbour
  EXPECT_EQ(arena.high_water(), 64u);
  EXPECT_EQ(arena.allocate(256, 1 << 20), 64u);
}

// Random allocate/release sequences: blocks never overlap, stay under the
// ceiling, and the accounting matches a model.
TEST(OffsetArena, RandomSequencesKeepBlocksDisjoint) {
  std::mt19937_64 random(12345);
  for (int trial = 0; trial < 50; ++trial) {
    OffsetArena arena;
    std::map<size_t, size_t> live;  // offset -> rounded size
    const size_t ceiling = 64 * 1024;
    for (int step = 0; step < 2000; ++step) {
      if (live.empty() || random() % 3 != 0) {
        const size_t bytes = random() % 3000;
        const auto offset = arena.allocate(bytes, ceiling);
        if (!offset) continue;
        const size_t size = OffsetArena::rounded(bytes);
        ASSERT_EQ(*offset % OffsetArena::kAlignment, 0u);
        ASSERT_LE(*offset + size, ceiling);
        auto next = live.lower_bound(*offset);
        if (next != live.end()) {
          ASSERT_LE(*offset + size, next->first);
        }
        if (next != live.begin()) {
          auto previous = std::prev(next);
          ASSERT_LE(previous->first + previous->second, *offset);
        }
        live.emplace(*offset, size);
      } else {
        auto it = live.begin();
        std::advance(it, static_cast<long>(random() % live.size()));
        ASSERT_TRUE(arena.release(it->first));
        live.erase(it);
      }
      size_t in_use = 0, top = 0;
      for (const auto& [offset, size] : live) in_use += size, top = std::max(top, offset + size);
      ASSERT_EQ(arena.bytes_in_use(), in_use);
      ASSERT_EQ(arena.high_water(), top);
      // Every offset finds the block it falls in, or none between blocks.
      const size_t probe = static_cast<size_t>(random() % (top + 128));
      const auto found = arena.block_containing(probe);
      auto holder = live.upper_bound(probe);
      if (holder != live.begin() && probe < std::prev(holder)->first + std::prev(holder)->second) {
        --holder;
        ASSERT_TRUE(found.has_value()) << probe;
        ASSERT_EQ(found->offset, holder->first);
        ASSERT_EQ(found->bytes, holder->second);
      } else {
        ASSERT_FALSE(found.has_value()) << probe;
      }
    }
  }
}

}  // namespace
}  // namespace taskgrid::data
