// data::BufferPool and allocate_buffer: exact-size recycling, 64-byte
// alignment, never null.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "data/buffer_pool.h"

namespace {

using taskgrid::data::allocate_buffer;
using taskgrid::data::BufferPool;
using taskgrid::data::release_buffer;

bool aligned64(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; }

TEST(BufferPool, PutThenGetReusesTheBuffer) {
  BufferPool pool;
  char* p = pool.get(100);
  ASSERT_NE(p, nullptr);
  pool.put(p, 100);
  EXPECT_EQ(pool.cached_bytes(), 128u);  // whole 64-byte blocks
  EXPECT_EQ(pool.get(100), p);
  EXPECT_EQ(pool.cached_bytes(), 0u);
  pool.put(p, 100);
}

TEST(BufferPool, EveryCachedBufferOfASizeComesBack) {
  BufferPool pool;
  char* a = pool.get(256);
  char* b = pool.get(256);
  ASSERT_NE(a, b);
  pool.put(a, 256);
  pool.put(b, 256);
  EXPECT_EQ(pool.cached_bytes(), 512u);
  const std::set<char*> got = {pool.get(256), pool.get(256)};
  EXPECT_EQ(got, (std::set<char*>{a, b}));
  char* fresh = pool.get(256);  // nothing cached any more
  EXPECT_EQ(got.count(fresh), 0u);
  pool.put(a, 256);
  pool.put(b, 256);
  pool.put(fresh, 256);
}

TEST(BufferPool, DifferentSizesDoNotMix) {
  BufferPool pool;
  char* small = pool.get(100);
  pool.put(small, 100);
  char* large = pool.get(200);
  EXPECT_NE(large, small);
  char* similar = pool.get(101);  // same 64-byte rounding, still another size
  EXPECT_NE(similar, small);
  EXPECT_EQ(pool.get(100), small);  // still cached for its own size
  pool.put(small, 100);
  pool.put(large, 200);
  pool.put(similar, 101);
  EXPECT_EQ(pool.cached_bytes(), 128u + 256u + 128u);
}

TEST(BufferPool, BuffersAre64ByteAlignedAndUsable) {
  BufferPool pool;
  std::vector<std::pair<char*, size_t>> held;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{7}, size_t{63}, size_t{64}, size_t{65},
                       size_t{1000}, size_t{4096}, size_t{1} << 20}) {
    for (int i = 0; i < 3; ++i) {
      char* p = pool.get(bytes);
      ASSERT_NE(p, nullptr) << bytes;
      EXPECT_TRUE(aligned64(p)) << bytes;
      std::memset(p, 0xab, bytes);  // the whole size is writable
      held.emplace_back(p, bytes);
    }
  }
  for (auto [p, bytes] : held) pool.put(p, bytes);
  std::vector<std::pair<char*, size_t>> again;
  for (auto [p, bytes] : held) {
    again.emplace_back(pool.get(bytes), bytes);
    EXPECT_TRUE(aligned64(again.back().first)) << bytes;
  }
  for (auto [p, bytes] : again) pool.put(p, bytes);  // the destructor frees them
}

TEST(BufferPool, GetZeroIsNotNull) {
  BufferPool pool;
  char* p = pool.get(0);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned64(p));
  pool.put(p, 0);
  EXPECT_EQ(pool.get(0), p);
  pool.put(p, 0);
}

TEST(BufferPool, EmptyBuffersCountTheBlockTheyHold) {
  // A stream of 0-byte buffers must reach the limit like any other: each
  // holds a 64-byte block.
  BufferPool pool;
  std::vector<char*> empty;
  for (int i = 0; i < 10; ++i) empty.push_back(pool.get(0));
  for (char* p : empty) pool.put(p, 0);
  EXPECT_EQ(pool.cached_bytes(), 640u);
  EXPECT_EQ(taskgrid::data::allocated_bytes(0), 64u);
  EXPECT_EQ(taskgrid::data::allocated_bytes(65), 128u);
}

TEST(BufferPool, IdleBuffersOfOneSizeAreBounded) {
  // Buffers allocated outside the pool and put here (enter_data's copies)
  // must not pile up: at most 4096 idle of one size.
  BufferPool pool;
  for (int i = 0; i < 10000; ++i) pool.put(allocate_buffer(8), 8);
  EXPECT_EQ(pool.cached_bytes(), 4096u * 64u);
}

TEST(BufferPool, AllocateBufferIsAlignedAndNeverNull) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{12345}}) {
    char* p = allocate_buffer(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_TRUE(aligned64(p)) << bytes;
    std::memset(p, 1, bytes);
    release_buffer(p);
  }
}

TEST(BufferPool, IdleMemoryIsBounded) {
  // The header bounds idle memory at 256 MiB; a larger buffer goes back to
  // the system instead of the cache (its pages are never touched here).
  BufferPool pool;
  const size_t huge = size_t{300} << 20;
  char* p = pool.get(huge);
  ASSERT_NE(p, nullptr);
  pool.put(p, huge);
  EXPECT_LE(pool.cached_bytes(), size_t{256} << 20);
  char* small = pool.get(64);
  pool.put(small, 64);
  EXPECT_EQ(pool.cached_bytes(), 64u);
}

}  // namespace
