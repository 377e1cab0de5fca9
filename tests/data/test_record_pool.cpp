// data::RecordPool: records keep their address while handed out and are
// handed out again once given back.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "data/record_pool.h"

namespace {

using taskgrid::data::RecordPool;

struct Record {
  int value = 0;
  std::vector<int> room;
};

TEST(RecordPool, AGivenBackRecordIsHandedOutAgainWithItsContent) {
  RecordPool<Record> pool;
  Record* first = pool.acquire();
  first->value = 7;
  first->room.reserve(32);
  pool.release(first);
  Record* again = pool.acquire();
  EXPECT_EQ(again, first);
  EXPECT_EQ(again->value, 7);  // the caller sets every field
  EXPECT_GE(again->room.capacity(), 32u);
}

TEST(RecordPool, OnlyNewRecordsArePrepared) {
  RecordPool<Record> pool;
  int prepared = 0;
  auto prepare = [&](Record& record) {
    prepared += 1;
    record.room.reserve(8);
  };
  Record* a = pool.acquire(prepare);
  Record* b = pool.acquire(prepare);
  EXPECT_EQ(prepared, 2);
  EXPECT_GE(a->room.capacity(), 8u);
  pool.release(a);
  EXPECT_EQ(pool.acquire(prepare), a);
  EXPECT_EQ(prepared, 2);
  pool.release(b);
}

TEST(RecordPool, RecordsHandedOutStayPutAndDistinct) {
  RecordPool<Record> pool;
  std::vector<Record*> out;
  for (int i = 0; i < 10000; ++i) {
    out.push_back(pool.acquire());
    out.back()->value = i;
  }
  EXPECT_EQ(std::set<Record*>(out.begin(), out.end()).size(), out.size());
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(out[static_cast<size_t>(i)]->value, i);
}

}  // namespace
