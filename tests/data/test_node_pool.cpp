// The runtime's node pool: O(1) reuse per size class, large blocks passed
// through, and standard pmr containers on top of it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory_resource>
#include <random>
#include <set>
#include <unordered_map>

#include "data/node_pool.h"

namespace taskgrid::data {
namespace {

TEST(NodePool, ReusesAFreedNodeOfTheSameClass) {
  NodePool pool;
  void* a = pool.allocate(24, 8);
  void* b = pool.allocate(24, 8);
  EXPECT_NE(a, b);
  pool.deallocate(a, 24, 8);
  EXPECT_EQ(pool.allocate(30, 8), a);  // 24 and 30 bytes share the 32-byte class
  void* other_class = pool.allocate(40, 8);
  EXPECT_NE(other_class, b);
  pool.deallocate(b, 24, 8);
  pool.deallocate(other_class, 40, 8);
}

TEST(NodePool, AlignsAndPassesLargeBlocksThrough) {
  NodePool pool;
  for (size_t bytes : {1, 15, 16, 17, 511, 512}) {
    void* p = pool.allocate(bytes, alignof(std::max_align_t));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << bytes;
    std::memset(p, 0xAB, bytes);
    pool.deallocate(p, bytes, alignof(std::max_align_t));
  }
  void* large = pool.allocate(4096, 64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % 64, 0u);
  std::memset(large, 0, 4096);
  pool.deallocate(large, 4096, 64);
}

// Live blocks never overlap, across classes and refills, under random churn.
TEST(NodePool, LiveBlocksNeverOverlap) {
  NodePool pool;
  std::mt19937_64 random(7);
  std::map<uintptr_t, size_t> live;  // address -> bytes
  for (int step = 0; step < 200000; ++step) {
    if (live.empty() || random() % 3 != 0) {
      const size_t bytes = 1 + random() % 600;
      auto address = reinterpret_cast<uintptr_t>(pool.allocate(bytes, 8));
      auto next = live.lower_bound(address);
      if (next != live.end()) {
        ASSERT_LE(address + bytes, next->first);
      }
      if (next != live.begin()) {
        ASSERT_LE(std::prev(next)->first + std::prev(next)->second, address);
      }
      live.emplace(address, bytes);
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(random() % std::min<size_t>(live.size(), 64)));
      pool.deallocate(reinterpret_cast<void*>(it->first), it->second, 8);
      live.erase(it);
    }
  }
  for (const auto& [address, bytes] : live)
    pool.deallocate(reinterpret_cast<void*>(address), bytes, 8);
}

TEST(NodePool, BacksStandardContainers) {
  NodePool pool;
  std::pmr::unordered_map<uint64_t, std::pmr::vector<int>> map(&pool);
  for (uint64_t i = 0; i < 10000; ++i)
    map[i].assign(static_cast<size_t>(i % 7), static_cast<int>(i));
  for (uint64_t i = 0; i < 10000; i += 2) map.erase(i);
  for (uint64_t i = 1; i < 10000; i += 2) {
    ASSERT_EQ(map.at(i).size(), i % 7);
    for (int value : map.at(i)) ASSERT_EQ(value, static_cast<int>(i));
  }
}

}  // namespace
}  // namespace taskgrid::data
