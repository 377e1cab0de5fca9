// The head's table of one OpenMP device's memory (src/offload/device_memory.*):
// ranges handed out and reused, lookups, the pointers found in submitted
// bytes and what a kernel reaching an allocation therefore accesses.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "offload/device_memory.h"

namespace taskgrid::offload {
namespace {

constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kBytes = 1 << 20;

DataHandle handle(uint64_t id) { return DataHandle{id}; }

TEST(DeviceMemory, HandsOutAlignedDisjointRangesUntilFull) {
  DeviceMemory memory;
  memory.set_range(kBase, 4096);
  const auto a = memory.take(1);
  const auto b = memory.take(100);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a % DeviceMemory::kAlignment, 0u);
  EXPECT_EQ(*b, *a + DeviceMemory::kAlignment);  // 1 byte takes one aligned slot
  EXPECT_FALSE(memory.take(4096));               // more than is left
}

TEST(DeviceMemory, FindsTheAllocationContainingAnAddress) {
  DeviceMemory memory;
  memory.set_range(kBase, kBytes);
  const uint64_t a = *memory.take(1000);
  memory.add(a, 1000, handle(7));
  ASSERT_NE(memory.find(a), nullptr);
  EXPECT_EQ(memory.find(a + 999)->handle, handle(7));
  EXPECT_EQ(memory.find(a + 1000), nullptr);
  EXPECT_EQ(memory.find(a - 1), nullptr);
}

TEST(DeviceMemory, AFreedRangeIsReusedOnlyAfterItsQuarantine) {
  DeviceMemory memory;
  memory.set_range(kBase, 256);
  const uint64_t a = *memory.take(256);
  memory.add(a, 256, handle(1));
  EXPECT_FALSE(memory.take(64));
  const auto removed = memory.remove(a);
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->handle, handle(1));
  EXPECT_FALSE(memory.take(64));  // still in quarantine
  ASSERT_TRUE(memory.has_freed());
  for (const DeviceMemory::Freed& freed : memory.take_freed())
    memory.reuse(freed.begin, freed.bytes);
  EXPECT_EQ(memory.take(256), a);  // coalesced back whole
}

TEST(DeviceMemory, RandomAllocationsNeverOverlapAndAllMemoryComesBack) {
  DeviceMemory memory;
  memory.set_range(kBase, kBytes);
  std::mt19937_64 random(42);
  struct Live {
    uint64_t begin, bytes;
  };
  std::vector<Live> live;
  for (int step = 0; step < 5000; ++step) {
    if (live.empty() || random() % 3 != 0) {
      const uint64_t bytes = 1 + random() % 5000;
      const auto begin = memory.take(bytes);
      if (!begin) continue;
      for (const Live& other : live)
        ASSERT_TRUE(*begin + bytes <= other.begin || other.begin + other.bytes <= *begin)
            << "overlap at step " << step;
      memory.add(*begin, bytes, handle(static_cast<uint64_t>(step) + 1));
      live.push_back({*begin, bytes});
    } else {
      const size_t index = random() % live.size();
      ASSERT_TRUE(memory.remove(live[index].begin));
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(index));
      if (random() % 2)
        for (const DeviceMemory::Freed& freed : memory.take_freed())
          memory.reuse(freed.begin, freed.bytes);
    }
  }
  for (const Live& allocation : live) ASSERT_TRUE(memory.remove(allocation.begin));
  for (const DeviceMemory::Freed& freed : memory.take_freed())
    memory.reuse(freed.begin, freed.bytes);
  EXPECT_EQ(memory.take(kBytes), kBase);  // everything coalesced back into one range
}

TEST(DeviceMemory, AKernelReachesWhatPointersStoredInAnAllocationPointTo) {
  DeviceMemory memory;
  memory.set_range(kBase, kBytes);
  const uint64_t table = *memory.take(64), row = *memory.take(64), other = *memory.take(64);
  memory.add(table, 64, handle(1));
  memory.add(row, 64, handle(2));
  memory.add(other, 64, handle(3));
  // A table of two words: data, then the row's address (an omp_get_mapped_ptr result).
  const uint64_t words[2] = {12345, row + 8};
  memory.note_pointers(table, words, sizeof words);
  std::vector<DataHandle> reached;
  EXPECT_TRUE(memory.reachable(table + 4, reached));
  EXPECT_EQ(reached, (std::vector<DataHandle>{handle(1), handle(2)}));
  // Transitively: the row points to `other`.
  const uint64_t pointer = other;
  memory.note_pointers(row, &pointer, sizeof pointer);
  reached.clear();
  memory.reachable(table, reached);
  EXPECT_EQ(reached.size(), 3u);
  // Not the other way round.
  reached.clear();
  memory.reachable(other, reached);
  EXPECT_EQ(reached, (std::vector<DataHandle>{handle(3)}));
  // An address in no allocation reaches nothing.
  reached.clear();
  EXPECT_FALSE(memory.reachable(kBase + kBytes - 1, reached));
  EXPECT_TRUE(reached.empty());
}

TEST(DeviceMemory, GlobalsAreFoundAndNotHandedOut) {
  DeviceMemory memory;
  memory.set_range(kBase, kBytes);
  const uint64_t global = 0x500000;  // in the image, outside the reserved range
  memory.add(global, 8, handle(9));
  const uint64_t a = *memory.take(64);
  memory.add(a, 64, handle(1));
  memory.note_pointers(a, &global, sizeof global);
  std::vector<DataHandle> reached;
  memory.reachable(a, reached);
  EXPECT_EQ(reached, (std::vector<DataHandle>{handle(1), handle(9)}));
  EXPECT_TRUE(memory.remove(global));
  EXPECT_FALSE(memory.has_freed());  // a global's range is never reused
}

TEST(DeviceMemory, NearTellsAddressesAroundTheRangeFromData) {
  DeviceMemory memory;
  EXPECT_FALSE(memory.near(kBase));  // no range yet
  memory.set_range(kBase, kBytes);
  EXPECT_TRUE(memory.near(kBase - 1024));
  EXPECT_TRUE(memory.near(kBase + kBytes + 1024));
  EXPECT_FALSE(memory.near(7));
  EXPECT_FALSE(memory.near(UINT64_MAX));
}

}  // namespace
}  // namespace taskgrid::offload
