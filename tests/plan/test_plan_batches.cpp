// plan::CommandBatches: per-rank batches, flushed by size, by age and on
// demand, byte for byte in the wire format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "comm/wire.h"
#include "plan/batches.h"
#include "trace/trace.h"

namespace taskgrid::plan {
namespace {

class PostedSink final : public core::CommandSink {
 public:
  std::vector<char> post(int dest, std::vector<char>&& batch) override {
    posted.emplace_back(dest, std::move(batch));
    return {};
  }
  void prepare_broadcast_group(const std::vector<int32_t>&, int) override {}
  std::vector<std::pair<int, std::vector<char>>> posted;
};

std::vector<comm::wire::Kind> kinds_of(const std::vector<char>& batch) {
  std::vector<comm::wire::Kind> kinds;
  comm::wire::BatchReader reader(batch.data(), batch.size());
  comm::wire::Header header;
  const char* payload = nullptr;
  while (reader.next(header, payload)) kinds.push_back(header.kind);
  return kinds;
}

TEST(CommandBatches, SpmdEmitsOnlyForItsRank) {
  PostedSink sink;
  CommandBatches batches(sink, 1024, 5, 1 << 14);
  EXPECT_TRUE(batches.emits_for(5));
  EXPECT_FALSE(batches.emits_for(0));
  EXPECT_FALSE(batches.emits_for(1023));
  CommandBatches cluster(sink, 4, -1, 1 << 14);
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(cluster.emits_for(r));
}

TEST(CommandBatches, TasksAreWrittenAsBatchWriterWritesThem) {
  PostedSink sink;
  CommandBatches batches(sink, 2, -1, 1 << 20);
  comm::wire::BatchWriter expected;
  const comm::wire::Access accesses[3] = {
      {1, 0, 8, -1, 0, 1, 0, {}}, {2, 0, 16, 1, 17, 1, 0, {}}, {0, 9, 8, -1, 0, 2, 0, {}}};
  const char args[5] = {'a', 'b', 'c', 'd', 'e'};
  const char* name = "named";
  const comm::wire::Task tasks[3] = {
      {1, 42, 3, 5, -1, 5, 0, 1}, {2, 43, 0, 0, 2, 0, 0, 2}, {3, 44, 1, 0, -1, 0, 0, 3}};
  for (const comm::wire::Task& task : tasks) {
    batches.add_task(1, task, accesses, args, name);
    expected.add_task(task, accesses, args, name);
  }
  batches.to(1).add(comm::wire::Kind::retire, comm::wire::Retire{7});
  expected.add(comm::wire::Kind::retire, comm::wire::Retire{7});
  batches.flush_all();
  ASSERT_EQ(sink.posted.size(), 1u);
  EXPECT_EQ(sink.posted[0].first, 1);
  EXPECT_EQ(sink.posted[0].second, expected.bytes());
}

TEST(CommandBatches, AccessesWrittenAfterTheTaskGiveTheSameBytes) {
  PostedSink sink;
  CommandBatches batches(sink, 1, -1, 1 << 20);
  comm::wire::BatchWriter expected;
  const comm::wire::Access accesses[2] = {{4, 0, 8, 2, 99, 1, 0, {}}, {0, 5, 8, -1, 0, 2, 0, {}}};
  const uint64_t args = 0x0123456789abcdefull;
  const comm::wire::Task task{9, 7, 2, sizeof args, -1, 0, 0, 4};
  const size_t at = batches.to(0).add_task_without_accesses(task, &args, "");
  batches.to(0).set_access(at, 1, accesses[1]);
  batches.to(0).set_access(at, 0, accesses[0]);
  expected.add_task(task, accesses, &args, "");
  batches.flush_all();
  ASSERT_EQ(sink.posted.size(), 1u);
  EXPECT_EQ(sink.posted[0].second, expected.bytes());
}

// Room is taken in steps (CommandBuffer::kGrowBytes), not per command: a batch
// of many small commands and one larger than a step, posted as exactly its
// bytes, nothing of the unused room after them.
TEST(CommandBatches, ABatchLargerThanItsGrowthStepIsPostedByteForByte) {
  PostedSink sink;
  CommandBatches batches(sink, 1, -1, 1 << 20);
  comm::wire::BatchWriter expected;
  for (uint64_t v = 1; v <= 300; ++v) {  // 4,800 bytes of retirements
    batches.to(0).add(comm::wire::Kind::retire, comm::wire::Retire{v});
    expected.add(comm::wire::Kind::retire, comm::wire::Retire{v});
  }
  std::vector<char> args(5000);
  for (size_t i = 0; i < args.size(); ++i) args[i] = static_cast<char>(i * 7);
  const comm::wire::Access access{0, 5, 8, -1, 0, 2, 0, {}};
  const comm::wire::Task task{9, 7, 1, static_cast<uint32_t>(args.size()), -1, 0, 0, 4};
  batches.add_task(0, task, &access, args.data(), "");
  expected.add_task(task, &access, args.data(), "");
  batches.to(0).add(comm::wire::Kind::retire, comm::wire::Retire{301});
  expected.add(comm::wire::Kind::retire, comm::wire::Retire{301});
  EXPECT_EQ(batches.to(0).size(), expected.bytes().size());
  batches.flush_all();
  ASSERT_EQ(sink.posted.size(), 1u);
  EXPECT_EQ(sink.posted[0].second, expected.bytes());
  EXPECT_TRUE(batches.empty(0));
}

// A sink that hands every batch back, emptied, as the engine does with the
// batches it applied: the next batch is written into the same memory.
class RecyclingSink final : public core::CommandSink {
 public:
  std::vector<char> post(int, std::vector<char>&& batch) override {
    posted_data.push_back(batch.data());
    posted_bytes.push_back(batch);
    batch.clear();
    return std::move(batch);
  }
  void prepare_broadcast_group(const std::vector<int32_t>&, int) override {}
  std::vector<const char*> posted_data;
  std::vector<std::vector<char>> posted_bytes;
};

TEST(CommandBatches, ReusesTheBufferTheSinkHandsBack) {
  RecyclingSink sink;
  CommandBatches batches(sink, 1, -1, 1 << 10);
  for (uint64_t v = 1; v <= 3; ++v) {
    batches.to(0).add(comm::wire::Kind::retire, comm::wire::Retire{v});
    batches.flush_all();
  }
  ASSERT_EQ(sink.posted_data.size(), 3u);
  // The first buffer grew from empty and may be smaller than a batch's room
  // (then it is replaced); from then on each batch is written into the
  // buffer the sink handed back.
  EXPECT_EQ(sink.posted_data[1], sink.posted_data[2]);
  for (uint64_t v = 1; v <= 3; ++v) {
    comm::wire::BatchWriter expected;
    expected.add(comm::wire::Kind::retire, comm::wire::Retire{v});
    EXPECT_EQ(sink.posted_bytes[v - 1], expected.bytes()) << "batch " << v;
  }
}

TEST(CommandBatches, FlushesAtTheSizeLimitAtTheEndOfASubmission) {
  PostedSink sink;
  CommandBatches batches(sink, 2, -1, 64);
  batches.to(0).add(comm::wire::Kind::retire, comm::wire::Retire{1});  // 16 bytes
  batches.end_of_submission();
  EXPECT_TRUE(sink.posted.empty());
  for (uint64_t v = 2; v <= 4; ++v)
    batches.to(0).add(comm::wire::Kind::retire, comm::wire::Retire{v});
  EXPECT_TRUE(sink.posted.empty());  // only at the end of a submission
  batches.end_of_submission();
  ASSERT_EQ(sink.posted.size(), 1u);
  EXPECT_EQ(sink.posted[0].second.size(), 64u);
  EXPECT_TRUE(batches.empty(0));
  batches.end_of_submission();
  EXPECT_EQ(sink.posted.size(), 1u);
}

TEST(CommandBatches, FlushesByAgeOnlyBatchesStampedBySubmissions) {
  PostedSink sink;
  CommandBatches batches(sink, 3, -1, 1 << 20);
  batches.to(1).add(comm::wire::Kind::retire, comm::wire::Retire{1});
  const uint64_t far_future = trace::now_ns() + 1'000'000'000'000ull;
  // Not stamped yet: commands outside a submission wait for the next one.
  batches.flush_older_than(far_future, 100'000);
  EXPECT_TRUE(sink.posted.empty());
  batches.end_of_submission();
  batches.flush_older_than(trace::now_ns(), 1'000'000'000'000ull);  // young
  EXPECT_TRUE(sink.posted.empty());
  batches.to(2).add(comm::wire::Kind::retire, comm::wire::Retire{2});
  batches.end_of_submission();
  batches.flush_older_than(far_future, 100'000);
  ASSERT_EQ(sink.posted.size(), 2u);
  EXPECT_TRUE(batches.empty(1));
  EXPECT_TRUE(batches.empty(2));
  // Once flushed, a batch has no age until it is written to again.
  batches.flush_older_than(far_future, 100'000);
  EXPECT_EQ(sink.posted.size(), 2u);
}

TEST(CommandBatches, AgesAreKeptPerBatchAcrossFlushes) {
  PostedSink sink;
  CommandBatches batches(sink, 4, -1, 1 << 20);
  for (int r = 0; r < 4; ++r) batches.to(r).add(comm::wire::Kind::retire, comm::wire::Retire{1});
  batches.end_of_submission();
  batches.flush(2);  // leaves the open list in the middle
  batches.flush(0);
  ASSERT_EQ(sink.posted.size(), 2u);
  batches.flush_older_than(trace::now_ns() + 1'000'000'000ull, 1);
  ASSERT_EQ(sink.posted.size(), 4u);
  std::vector<int> ranks;
  for (const auto& [rank, bytes] : sink.posted) ranks.push_back(rank);
  std::sort(ranks.begin(), ranks.end());
  EXPECT_EQ(ranks, (std::vector<int>{0, 1, 2, 3}));
}

TEST(CommandBatches, FlushAllButThenPostsThatRankLast) {
  PostedSink sink;
  CommandBatches batches(sink, 4, -1, 1 << 20);
  for (int r = 0; r < 4; ++r) batches.to(r).add(comm::wire::Kind::shutdown, char{0});
  batches.flush_all_but_then(0);
  ASSERT_EQ(sink.posted.size(), 4u);
  EXPECT_EQ(sink.posted.back().first, 0);
  for (const auto& [rank, bytes] : sink.posted)
    EXPECT_EQ(kinds_of(bytes), std::vector<comm::wire::Kind>{comm::wire::Kind::shutdown});
  // Empty batches are not posted.
  batches.flush_all_but_then(0);
  EXPECT_EQ(sink.posted.size(), 4u);
}

TEST(CommandBatches, SpmdPostsToItsOwnRank) {
  PostedSink sink;
  CommandBatches batches(sink, 64, 9, 1 << 20);
  batches.to(9).add(comm::wire::Kind::retire, comm::wire::Retire{3});
  batches.flush_all_but_then(9);
  ASSERT_EQ(sink.posted.size(), 1u);
  EXPECT_EQ(sink.posted[0].first, 9);
}

}  // namespace
}  // namespace taskgrid::plan
