// FlatIdMap against std::unordered_map under random inserts, lookups and
// erases (erase's backward shift is where open addressing goes wrong).
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

#include "data/flat_id_map.h"

namespace taskgrid::data {
namespace {

TEST(FlatIdMap, AgreesWithUnorderedMapUnderRandomOperations) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::mt19937_64 random(seed);
    FlatIdMap<int> map(16);
    std::unordered_map<uint64_t, int*> reference;
    std::vector<int> values(512);
    // Small id ranges make clusters and wrap-around common.
    const uint64_t ids = seed % 2 ? 64 : 5000;
    for (int step = 0; step < 20000; ++step) {
      const uint64_t id = 1 + random() % ids;
      int* value = &values[random() % values.size()];
      switch (random() % 3) {
        case 0:
          ASSERT_EQ(map.insert(id, value), reference.emplace(id, value).second) << id;
          break;
        case 1:
          ASSERT_EQ(map.erase(id), reference.erase(id) == 1) << id;
          break;
        default: {
          auto it = reference.find(id);
          ASSERT_EQ(map.find(id), it == reference.end() ? nullptr : it->second) << id;
        }
      }
      ASSERT_EQ(map.size(), reference.size());
    }
    for (const auto& [id, value] : reference) ASSERT_EQ(map.find(id), value);
    size_t visited = 0;
    map.for_each([&](uint64_t id, int* value) {
      ++visited;
      EXPECT_EQ(reference.at(id), value);
    });
    EXPECT_EQ(visited, reference.size());
  }
}

TEST(FlatIdMap, SequentialIdsAtSteadySizeStayCorrect) {
  // The engine's pattern: versions numbered in order, each erased a while
  // after it was inserted. Lookups must stay correct over many laps.
  FlatIdMap<int> map(16);
  int value = 0;
  for (uint64_t id = 1; id <= 1'000'000; ++id) {
    ASSERT_TRUE(map.insert(id, &value));
    if (id > 100) {
      ASSERT_TRUE(map.erase(id - 100));
    }
  }
  EXPECT_EQ(map.size(), 100u);
  EXPECT_EQ(map.find(1'000'000 - 100), nullptr);
  EXPECT_EQ(map.find(1'000'000 - 99), &value);
}

}  // namespace
}  // namespace taskgrid::data
