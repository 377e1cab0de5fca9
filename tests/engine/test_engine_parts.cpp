// The engine's parts alone, without an engine: the version store, the task
// table, the completion batcher, and the tree and group broadcasters driven
// by hand over the loopback transport (each rank's part polled in turn),
// and the records the planner builds its rank's tasks in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/loopback/transport.h"
#include "comm/wire.h"
#include "engine/completion_batcher.h"
#include "engine/group_broadcaster.h"
#include "engine/in_place_tasks.h"
#include "engine/task_table.h"
#include "engine/transfer_cookie.h"
#include "engine/tree_broadcaster.h"
#include "engine/version_store.h"

namespace taskgrid::engine {
namespace {

TEST(VersionStore, CreatesFindsAndReclaimsRetiredVersions) {
  VersionStore store;
  Version* v = store.create(7, 100);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(store.find(7), v);
  EXPECT_EQ(store.create(7, 100), nullptr) << "a version created twice must be refused";
  store.give_buffer(v);
  v->uses = 3;
  EXPECT_FALSE(store.release_use(v)) << "not retired: kept";
  v->retired = true;
  EXPECT_FALSE(store.release_use(v)) << "retired but one use left: kept";
  EXPECT_EQ(store.find(7), v);
  v->uses = 1;
  EXPECT_TRUE(store.release_use(v));
  EXPECT_EQ(store.find(7), nullptr);
  EXPECT_EQ(store.reclaimed(), 1u);
  EXPECT_EQ(store.live(), 0u);
  // The record is recycled, reset.
  Version* again = store.create(8, 4);
  EXPECT_EQ(again, v);
  EXPECT_FALSE(again->ready);
  EXPECT_FALSE(again->retired);
  EXPECT_EQ(again->uses, 0u);
  EXPECT_TRUE(again->waiters.empty());
}

TEST(VersionStore, ExpectCreatesOnceWithABuffer) {
  VersionStore store;
  Version* v = store.expect(3, 64);
  ASSERT_NE(v, nullptr);
  EXPECT_NE(v->data, nullptr);
  EXPECT_EQ(store.expect(3, 64), v);
  EXPECT_EQ(store.live(), 1u);
}

TEST(VersionStore, CountsTheBytesItsVersionsHold) {
  VersionStore store;
  Version* a = store.create(1, 100);  // two 64-byte blocks
  store.give_buffer(a);
  Version* b = store.expect(2, 1000);  // 16 blocks
  Version* c = store.create(3, 10);
  store.give_buffer(c, data::allocate_buffer(10));  // allocated elsewhere: one block
  EXPECT_EQ(store.held_bytes(), 128u + 1024u + 64u);
  for (Version* v : {a, b, c}) {
    v->retired = true;
    v->uses = 1;
  }
  EXPECT_TRUE(store.release_use(b));
  EXPECT_EQ(store.held_bytes(), 128u + 64u);
  EXPECT_EQ(store.peak_held_bytes(), 128u + 1024u + 64u);
  EXPECT_EQ(store.idle_bytes(), 1024u) << "b's buffer went back to the pool";
  EXPECT_TRUE(store.release_use(a));
  EXPECT_TRUE(store.release_use(c));
  EXPECT_EQ(store.held_bytes(), 0u);
  EXPECT_EQ(store.live(), 0u);
}

TEST(TaskTable, RecyclesTasksAndRunsReadyOnesInOrder) {
  TaskTable table;
  Task* a = table.acquire();
  Task* b = table.acquire();
  EXPECT_NE(a, b);
  EXPECT_TRUE(table.idle());
  table.started();
  table.push_ready(a);
  table.started();
  table.push_ready(b);
  EXPECT_FALSE(table.idle());
  EXPECT_EQ(table.pop_ready(), a);
  EXPECT_EQ(table.pop_ready(), b);
  EXPECT_EQ(table.pop_ready(), nullptr);
  EXPECT_FALSE(table.idle()) << "two started, none finished";
  table.finished();
  table.finished();
  EXPECT_TRUE(table.idle());
  table.release(a);
  EXPECT_EQ(table.acquire(), a);
  const std::string name = "stencil";
  const char* interned = table.names().intern(name.data(), name.size());
  EXPECT_STREQ(interned, "stencil");
  EXPECT_EQ(table.names().intern("stencil", 7), interned) << "one copy per name";
  // The last name is checked first: names of its length that differ, a
  // prefix, and a return to an older name must each find their own copy.
  const char* other = table.names().intern("stencix", 7);
  EXPECT_STREQ(other, "stencix");
  EXPECT_NE(other, interned);
  const char* prefix = table.names().intern("stencil-long", 7);
  EXPECT_EQ(prefix, interned) << "the first 7 bytes: \"stencil\"";
  EXPECT_STREQ(table.names().intern("sten", 4), "sten");
  EXPECT_EQ(table.names().intern("stencix", 7), other);
}

TEST(InPlaceTasks, FillsARecordAndReusesItOnlyOnceHandedOver) {
  const FunctionId function =
      taskgrid::register_function("in_place_tasks_test", [](TaskContext&) {});
  InPlaceTasks builder(comm::system_blocking());
  const uint64_t args[2] = {7, 9};
  comm::wire::Task header{};
  header.task_id = 42;
  header.function = function.value;
  header.num_accesses = 2;
  header.args_bytes = sizeof args;
  header.channel = -1;
  header.priority = 3;
  header.completion_key = 5;
  const core::LocalTaskBuilder::Slot slot = builder.open(header, args, "named");
  auto* task = static_cast<Task*>(slot.record);
  ASSERT_NE(task, nullptr);
  EXPECT_TRUE(task->in_place);
  EXPECT_EQ(task->id, 42u);
  EXPECT_EQ(task->completion_key, 5u);
  EXPECT_EQ(task->priority, 3);
  EXPECT_STREQ(task->name, "named");
  ASSERT_EQ(task->args.size(), sizeof args);
  EXPECT_EQ(std::memcmp(task->args.data(), args, sizeof args), 0);
  ASSERT_EQ(task->accesses.size(), 2u);
  EXPECT_EQ(slot.accesses, task->accesses.data()) << "the caller writes the record's own accesses";

  // Given back but not handed over: the next task gets a new record.
  builder.give_back(task);
  header.task_id = 43;
  header.num_accesses = 0;
  header.args_bytes = 0;
  auto* second = static_cast<Task*>(builder.open(header, nullptr, nullptr).record);
  EXPECT_NE(second, task);
  EXPECT_STREQ(second->name, "in_place_tasks_test") << "no name: the function's";
  EXPECT_TRUE(second->args.empty());
  EXPECT_EQ(builder.made(), 2u);
  // Handed over: reused, refilled.
  builder.hand_over();
  header.task_id = 44;
  auto* third = static_cast<Task*>(builder.open(header, nullptr, nullptr).record);
  EXPECT_EQ(third, task);
  EXPECT_EQ(third->id, 44u);
  EXPECT_TRUE(third->accesses.empty());
  EXPECT_EQ(builder.made(), 2u);

  header.function = 0xFFFFFFF0u;
  EXPECT_THROW(builder.open(header, nullptr, nullptr), std::logic_error)
      << "a function this process never registered";
}

class RecordingListener : public core::EngineListener {
 public:
  void on_completed(const comm::wire::Completed* records, size_t count) override {
    for (size_t i = 0; i < count; ++i) completed.push_back(records[i].task_id);
  }
  void on_fetched(uint64_t) override {}
  std::vector<uint64_t> completed;
};

TEST(CompletionBatcher, HeadHandsRecordsOverOthersSendThemInBatches) {
  comm::loopback::LoopbackFabric fabric(2);
  EngineStats head_stats, other_stats;
  CompletionBatcher head(fabric.transport(0), 0, head_stats);
  CompletionBatcher other(fabric.transport(1), 0, other_stats);
  RecordingListener listener;
  head.add({1, 0, 1});
  EXPECT_FALSE(head.idle());
  head.flush(&listener, false);
  EXPECT_EQ(listener.completed, std::vector<uint64_t>{1});
  EXPECT_TRUE(head.idle());

  other.add({2, 0, 2});
  other.add({3, 0, 3});
  other.flush(nullptr, false);  // neither 4 KiB nor 200 µs yet (on any sane machine)
  int source = -1;
  std::vector<char> batch;
  if (!fabric.transport(0).receive_control(source, batch)) {
    EXPECT_FALSE(other.idle());
    other.flush(nullptr, true);
    ASSERT_TRUE(fabric.transport(0).receive_control(source, batch));
  }
  EXPECT_TRUE(other.idle());
  EXPECT_EQ(source, 1);
  comm::wire::BatchReader reader(batch.data(), batch.size());
  comm::wire::Header header;
  const char* payload = nullptr;
  std::vector<uint64_t> ids;
  while (reader.next(header, payload)) {
    ASSERT_EQ(header.kind, comm::wire::Kind::completed);
    ids.push_back(comm::wire::read<comm::wire::Completed>(payload).task_id);
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(other_stats.control_messages_sent, 1u);
}

TEST(CompletionBatcher, AnAgedBatchLeavesWithinFourFlushesAYoungOneWaits) {
  comm::loopback::LoopbackFabric fabric(2);
  EngineStats stats;
  CompletionBatcher other(fabric.transport(1), 0, stats);
  int source = -1;
  std::vector<char> batch;
  // Aged at once: sent by the fourth flush at the latest (the age is looked
  // at every fourth pass).
  other.set_delay_ns(0);
  other.add({7, 0, 7});
  int flushes = 0;
  while (!other.idle() && flushes < 100) {
    other.flush(nullptr, false);
    ++flushes;
  }
  EXPECT_TRUE(other.idle());
  EXPECT_LE(flushes, CompletionBatcher::kFlushesPerClockRead);
  EXPECT_TRUE(fabric.transport(0).receive_control(source, batch));
  // Never aged: however many flushes, only force sends it.
  other.set_delay_ns(UINT64_MAX);
  other.add({8, 0, 8});
  for (int i = 0; i < 100; ++i) other.flush(nullptr, false);
  EXPECT_FALSE(other.idle());
  other.flush(nullptr, true);
  EXPECT_TRUE(other.idle());
  EXPECT_TRUE(fabric.transport(0).receive_control(source, batch));
  EXPECT_EQ(stats.control_messages_sent, 2u);
}

// One rank's broadcaster parts with a version store and a record of events.
struct BroadcastRank : VersionEvents {
  explicit BroadcastRank(comm::Transport& t)
      : transport(t), trees(t, versions, *this, stats), groups(t, versions, *this, stats) {}
  void version_arrived(Version* version) override {
    version->ready = true;
    arrived.push_back(version->id);
    for (const VersionWaiter& waiter : version->waiters) {
      if (waiter.kind == VersionWaiter::Kind::tree_broadcast) trees.version_present(waiter.object);
      if (waiter.kind == VersionWaiter::Kind::group_broadcast) groups.post();
    }
    version->waiters.clear();
  }
  void version_released(Version* version) override {
    released.push_back(version->id);
    versions.release_use(version);
  }
  // No devices here: host data is all there is.
  void wait_on_host(Version* version, const VersionWaiter& waiter) override {
    version->waiters.push_back(waiter);
  }
  [[noreturn]] void fail(const std::string& message) override { throw std::runtime_error(message); }
  // Applies control messages and completes transfers; true when anything happened.
  bool poll() {
    bool any = false;
    int source = -1;
    std::vector<char> batch;
    while (transport.receive_control(source, batch)) {
      comm::wire::BatchReader reader(batch.data(), batch.size());
      comm::wire::Header header;
      const char* payload = nullptr;
      while (reader.next(header, payload)) {
        EXPECT_EQ(header.kind, comm::wire::Kind::route);
        trees.apply(payload, source, false);
      }
      any = true;
    }
    std::vector<uint64_t> done;
    any |= transport.poll(done);
    for (uint64_t cookie : done) {
      if (cookie_kind(cookie) == kTreeChunk) trees.chunk_done(cookie);
      if (cookie_kind(cookie) == kGroupChunk) groups.chunk_done(cookie);
    }
    if (groups.waiting_for_groups()) groups.post();
    return any;
  }
  comm::Transport& transport;
  EngineStats stats;
  VersionStore versions;
  TreeBroadcaster trees;
  GroupBroadcaster groups;
  std::vector<uint64_t> arrived;
  std::vector<uint64_t> released;
};

std::vector<char> pattern(size_t bytes) {
  std::vector<char> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<char>(i * 31 + 7);
  return data;
}

void poll_all(std::vector<std::unique_ptr<BroadcastRank>>& ranks) {
  for (int round = 0; round < 1000; ++round) {
    bool any = false;
    for (auto& rank : ranks) any |= rank->poll();
    if (!any) return;
  }
  FAIL() << "the broadcast did not settle";
}

class TreeBroadcasterShapes : public ::testing::TestWithParam<std::tuple<coll::Shape, bool>> {};

TEST_P(TreeBroadcasterShapes, DeliversEveryByteToEveryReaderAndReleasesTheRoot) {
  const auto [shape, forward_each_chunk] = GetParam();
  constexpr int kRanks = 6;
  constexpr size_t kBytes = 1000;
  comm::loopback::LoopbackFabric fabric(kRanks);
  std::vector<std::unique_ptr<BroadcastRank>> ranks;
  for (int r = 0; r < kRanks; ++r)
    ranks.push_back(std::make_unique<BroadcastRank>(fabric.transport(r)));
  // The root holds version 42 but its data is not there yet: routes go out
  // first, the chunks once the version arrives.
  BroadcastRank& root = *ranks[2];
  Version* source = root.versions.create(42, kBytes);
  root.versions.give_buffer(source);
  const std::vector<char> bytes = pattern(kBytes);
  std::memcpy(source->data, bytes.data(), kBytes);
  source->uses = 1;  // the producer's
  const std::vector<int32_t> readers{0, 1, 3, 4, 5};
  comm::wire::BatchWriter command;
  const comm::wire::Route route{42,
                                kBytes,
                                96,
                                9,
                                static_cast<uint32_t>(readers.size()),
                                static_cast<uint8_t>(shape),
                                static_cast<uint8_t>(forward_each_chunk),
                                {}};
  command.add(comm::wire::Kind::broadcast, route, readers.data(), readers.size() * sizeof(int32_t));
  comm::wire::BatchReader reader(command.bytes().data(), command.size());
  comm::wire::Header header;
  const char* payload = nullptr;
  ASSERT_TRUE(reader.next(header, payload));
  root.trees.apply(payload, 2, true);
  poll_all(ranks);
  for (int32_t r : readers) EXPECT_TRUE(ranks[static_cast<size_t>(r)]->arrived.empty());
  root.version_arrived(source);  // the data exists now
  poll_all(ranks);
  for (int32_t r : readers) {
    BroadcastRank& rank = *ranks[static_cast<size_t>(r)];
    ASSERT_EQ(rank.arrived, std::vector<uint64_t>{42}) << "rank " << r;
    Version* copy = rank.versions.find(42);
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(std::memcmp(copy->data, bytes.data(), kBytes), 0) << "rank " << r;
    EXPECT_EQ(rank.released, std::vector<uint64_t>{42}) << "rank " << r << " forwarded all";
    EXPECT_TRUE(rank.trees.idle());
  }
  EXPECT_EQ(root.released, std::vector<uint64_t>{42});
  EXPECT_TRUE(root.trees.idle());
  EXPECT_EQ(root.stats.broadcasts_rooted, 1u);
}

INSTANTIATE_TEST_SUITE_P(Shapes, TreeBroadcasterShapes,
                         ::testing::Combine(::testing::Values(coll::Shape::binomial,
                                                              coll::Shape::chain,
                                                              coll::Shape::sequential),
                                            ::testing::Bool()));

TEST(GroupBroadcaster, WaitsForItsGroupAndTheRootsDataThenDeliversInOrder) {
  constexpr int kRanks = 4;
  comm::loopback::LoopbackFabric fabric(kRanks);
  std::vector<std::unique_ptr<BroadcastRank>> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.push_back(std::make_unique<BroadcastRank>(fabric.transport(r)));
    ranks.back()->groups.set_engine_creates_groups(false);  // spmd: the program creates groups
  }
  const std::vector<int32_t> members{0, 1, 3};
  const std::vector<char> first = pattern(300), second = pattern(50);
  // Two broadcasts in one group, from ranks 1 and 3, in command order.
  Version* v1 = ranks[1]->versions.create(1, first.size());
  ranks[1]->versions.give_buffer(v1);
  std::memcpy(v1->data, first.data(), first.size());
  v1->uses = 1;
  Version* v2 = ranks[3]->versions.create(2, second.size());
  ranks[3]->versions.give_buffer(v2);
  std::memcpy(v2->data, second.data(), second.size());
  v2->ready = true;
  v2->uses = 1;
  for (int32_t r : members) {
    for (const auto& [version, root, bytes] :
         {std::tuple<uint64_t, int32_t, size_t>{1, 1, first.size()}, {2, 3, second.size()}}) {
      comm::wire::BatchWriter command;
      const comm::wire::MpiBroadcast body{
          version, bytes, 64, root, 5, static_cast<uint32_t>(members.size()), 0};
      command.add(comm::wire::Kind::mpi_broadcast, body, members.data(),
                  members.size() * sizeof(int32_t));
      comm::wire::BatchReader reader(command.bytes().data(), command.size());
      comm::wire::Header header;
      const char* payload = nullptr;
      ASSERT_TRUE(reader.next(header, payload));
      ranks[static_cast<size_t>(r)]->groups.apply(payload, r);
    }
  }
  poll_all(ranks);
  for (int32_t r : members) {
    EXPECT_TRUE(ranks[static_cast<size_t>(r)]->arrived.empty()) << "no group yet on " << r;
    EXPECT_TRUE(ranks[static_cast<size_t>(r)]->groups.waiting_for_groups());
  }
  for (int32_t r : members) ranks[static_cast<size_t>(r)]->groups.prepare(members, 5);
  poll_all(ranks);
  // Rank 1's data is not there yet: its broadcast cannot have reached anyone.
  // (The second may complete first, as MPI's non-blocking collectives may.)
  for (int32_t r : members)
    EXPECT_EQ(std::count(ranks[static_cast<size_t>(r)]->arrived.begin(),
                         ranks[static_cast<size_t>(r)]->arrived.end(), 1u),
              0);
  ranks[1]->version_arrived(v1);
  poll_all(ranks);
  for (auto* arrived : {&ranks[0]->arrived, &ranks[1]->arrived})
    std::sort(arrived->begin(), arrived->end());
  EXPECT_EQ(ranks[0]->arrived, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(ranks[1]->arrived, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(ranks[3]->arrived, (std::vector<uint64_t>{1}));
  EXPECT_EQ(std::memcmp(ranks[0]->versions.find(1)->data, first.data(), first.size()), 0);
  EXPECT_EQ(std::memcmp(ranks[0]->versions.find(2)->data, second.data(), second.size()), 0);
  EXPECT_EQ(std::memcmp(ranks[3]->versions.find(1)->data, first.data(), first.size()), 0);
  for (int32_t r : members) EXPECT_TRUE(ranks[static_cast<size_t>(r)]->groups.idle());
  EXPECT_TRUE(ranks[2]->arrived.empty()) << "not a member";
}

}  // namespace
}  // namespace taskgrid::engine
