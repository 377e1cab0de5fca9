// data::Directory: the head's record of live versions and their holders.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
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

// Counts what is allocated through it (passes everything on to new/delete).
class CountingResource final : public std::pmr::memory_resource {
 public:
  size_t allocations = 0;

 private:
  void* do_allocate(size_t bytes, size_t alignment) override {
    ++allocations;
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  void do_deallocate(void* p, size_t bytes, size_t alignment) override {
    std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

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

TEST(Directory, EntriesStayPutWhileOthersAreAdded) {
  // Placement keeps pointers to inputs' entries while outputs are added.
  Directory d;
  VersionInfo* first = &d.add(1, 8, 3, 0);
  for (uint64_t v = 2; v < 2000; ++v) d.add(v, 8, 0, 0);
  EXPECT_EQ(d.find(1), first);
  EXPECT_EQ(first->producer, 3);
  EXPECT_EQ(d.size(), 1999u);
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

TEST(Directory, VersionsAndHolderListsComeFromItsPool) {
  // The header promises that entries and holder lists come from the
  // directory's pool, not one heap allocation per version. Anything that
  // still goes to the default memory resource after the directory is built
  // breaks that promise.
  Directory d;
  for (uint64_t v = 1; v <= 64; ++v) d.add(v, 8, 0, 0);  // warm the pool
  std::vector<int> holders;
  holders.reserve(8);
  for (uint64_t v = 1; v <= 64; ++v) d.remove(v, holders);

  CountingResource counting;
  std::pmr::memory_resource* const previous = std::pmr::set_default_resource(&counting);
  for (uint64_t v = 1000; v < 1032; ++v) {
    d.add(v, 8, 1, 0);
    d.add_holder(v, 2);
    d.add_holder(v, 3);
  }
  for (uint64_t v = 1000; v < 1032; ++v) d.remove(v, holders);
  std::pmr::set_default_resource(previous);
  EXPECT_EQ(counting.allocations, 0u) << "heap allocations for 32 versions with 3 holders each";
}

}  // namespace
