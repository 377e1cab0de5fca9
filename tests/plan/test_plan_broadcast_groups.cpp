// plan::BroadcastGroups: readers gathered per version, delivered in opening
// order with the configured strategy, through the command batches.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "comm/wire.h"
#include "plan/broadcast_groups.h"

namespace taskgrid::plan {
namespace {

struct Command {
  int dest;
  comm::wire::Kind kind;
  std::vector<char> body;
  template <typename T>
  T as() const {
    return comm::wire::read<T>(body.data());
  }
  // The int32 ranks after a body of type T.
  template <typename T>
  std::vector<int32_t> ranks_after() const {
    std::vector<int32_t> ranks((body.size() - sizeof(T)) / sizeof(int32_t));
    std::memcpy(ranks.data(), body.data() + sizeof(T), ranks.size() * sizeof(int32_t));
    return ranks;
  }
};

class CommandLog final : public core::CommandSink {
 public:
  std::vector<char> post(int dest, std::vector<char>&& batch) override {
    comm::wire::BatchReader reader(batch.data(), batch.size());
    comm::wire::Header header;
    const char* payload = nullptr;
    while (reader.next(header, payload))
      commands.push_back({dest, header.kind, std::vector<char>(payload, payload + header.bytes)});
    return {};
  }
  void prepare_broadcast_group(const std::vector<int32_t>&, int) override {}
  std::vector<Command> commands;
};

data::VersionInfo held_by(std::vector<int> holders, int producer, size_t bytes = 1 << 20) {
  data::VersionInfo info;
  info.bytes = bytes;
  info.producer = producer;
  info.holders.assign(holders.begin(), holders.end());
  return info;
}

BroadcastConfig config_for(coll::Strategy strategy, int ranks, int rank = 0, bool spmd = false) {
  BroadcastConfig config;
  config.strategy = strategy;
  config.ranks = ranks;
  config.rank = rank;
  config.spmd = spmd;
  return config;
}

struct Fixture {
  explicit Fixture(const BroadcastConfig& config)
      : batches(log, config.ranks, config.spmd ? config.rank : -1, 1 << 20),
        groups(config, batches, tags) {}
  std::vector<Command> delivered() {
    batches.flush_all();
    return std::exchange(log.commands, {});
  }
  CommandLog log;
  TransferTags tags{32767};
  CommandBatches batches;
  BroadcastGroups groups;
};

TEST(BroadcastGroups, DetectsOnlyLargeInputsWithAStrategyAndThreeRanks) {
  Fixture tree(config_for(coll::Strategy::tree, 4));
  EXPECT_TRUE(tree.groups.detects(64 << 10));
  EXPECT_FALSE(tree.groups.detects((64 << 10) - 1));
  Fixture none(config_for(coll::Strategy::none, 4));
  EXPECT_FALSE(none.groups.detects(1 << 30));
  Fixture two(config_for(coll::Strategy::tree, 2));
  EXPECT_FALSE(two.groups.detects(1 << 30));
}

TEST(BroadcastGroups, ReadersOfAVersionShareItsGroupAndTag) {
  Fixture f(config_for(coll::Strategy::tree, 8));
  const data::VersionInfo v = held_by({2}, 2);
  const data::VersionInfo w = held_by({3}, 3);
  const int tag = f.groups.join(10, v, 4, 0);
  EXPECT_EQ(f.groups.join(10, v, 5, 1), tag);
  const int other = f.groups.join(11, w, 4, 1);
  EXPECT_NE(other, tag);
  EXPECT_EQ(f.groups.pending(), 2u);
  f.groups.deliver_all();
  EXPECT_TRUE(f.groups.empty());
  const auto commands = f.delivered();
  ASSERT_EQ(commands.size(), 2u);
  // Each root gets a broadcast command naming its readers.
  EXPECT_EQ(commands[0].dest, 2);
  EXPECT_EQ(commands[0].kind, comm::wire::Kind::broadcast);
  const auto route = commands[0].as<comm::wire::Route>();
  EXPECT_EQ(route.version, 10u);
  EXPECT_EQ(route.tag, tag);
  EXPECT_EQ(route.bytes, size_t{1} << 20);
  EXPECT_EQ(commands[0].ranks_after<comm::wire::Route>(), (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(commands[1].dest, 3);
  EXPECT_EQ(commands[1].as<comm::wire::Route>().tag, other);
}

TEST(BroadcastGroups, TheRootIsTheProducerWhileItHoldsTheVersion) {
  Fixture f(config_for(coll::Strategy::tree, 8));
  f.groups.join(1, held_by({1, 6}, 1), 3, 0);
  f.groups.join(2, held_by({6, 7}, 1), 3, 0);  // the producer no longer holds it
  f.groups.deliver_all();
  const auto commands = f.delivered();
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[0].dest, 1);
  EXPECT_EQ(commands[1].dest, 6);
}

TEST(BroadcastGroups, GroupsAreDueAfterTheirWindowInOpeningOrder) {
  Fixture f(config_for(coll::Strategy::tree, 32));  // window: max(64, 4 x 32) = 128
  EXPECT_EQ(f.groups.window(), 128u);
  f.groups.join(1, held_by({0}, 0), 5, 10);
  f.groups.join(2, held_by({0}, 0), 5, 20);
  f.groups.deliver_due(137);
  EXPECT_EQ(f.groups.pending(), 2u);
  f.groups.deliver_due(138);
  EXPECT_EQ(f.groups.pending(), 1u);
  f.groups.deliver_due(148);
  EXPECT_TRUE(f.groups.empty());
  const auto commands = f.delivered();
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[0].as<comm::wire::Route>().version, 1u);
  EXPECT_EQ(commands[1].as<comm::wire::Route>().version, 2u);
}

TEST(BroadcastGroups, DeliveringOneGroupDeliversTheOlderOnesFirst) {
  Fixture f(config_for(coll::Strategy::tree, 8));
  for (uint64_t v = 1; v <= 4; ++v) f.groups.join(v, held_by({0}, 0), 3, 0);
  f.groups.deliver_through(99);  // not pending: nothing
  EXPECT_EQ(f.groups.pending(), 4u);
  f.groups.deliver_through(3);
  EXPECT_EQ(f.groups.pending(), 1u);
  const auto commands = f.delivered();
  ASSERT_EQ(commands.size(), 3u);
  for (uint64_t v = 1; v <= 3; ++v) EXPECT_EQ(commands[v - 1].as<comm::wire::Route>().version, v);
}

TEST(BroadcastGroups, OneReaderGoesPointToPoint) {
  Fixture f(config_for(coll::Strategy::mpi, 8));
  EXPECT_EQ(f.groups.strategy_for(0, {0, 3}), coll::Strategy::p2p);
  f.groups.join(1, held_by({0}, 0), 3, 0);
  f.groups.deliver_all();
  const auto commands = f.delivered();
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(commands[0].kind, comm::wire::Kind::broadcast);
  EXPECT_EQ(commands[0].as<comm::wire::Route>().shape,
            static_cast<uint8_t>(coll::Shape::sequential));
}

TEST(BroadcastGroups, SpmdMpiBroadcastsGoToMembersAndAskForACommunicator) {
  for (int rank : {0, 2, 5, 7}) {
    Fixture f(config_for(coll::Strategy::mpi, 8, rank, true));
    const int tag = f.groups.join(1, held_by({2}, 2), 5, 0);
    f.groups.join(1, held_by({2, 5}, 2), 0, 0);
    f.groups.deliver_all();
    const auto commands = f.delivered();
    const bool member = rank == 0 || rank == 2 || rank == 5;
    ASSERT_EQ(commands.size(), member ? 1u : 0u) << rank;
    ASSERT_EQ(f.groups.has_communicators_to_create(), member) << rank;
    if (!member) continue;
    EXPECT_EQ(commands[0].dest, rank);
    EXPECT_EQ(commands[0].kind, comm::wire::Kind::mpi_broadcast);
    const auto command = commands[0].as<comm::wire::MpiBroadcast>();
    EXPECT_EQ(command.root, 2);
    EXPECT_EQ(command.tag, tag);
    EXPECT_EQ(commands[0].ranks_after<comm::wire::MpiBroadcast>(), (std::vector<int32_t>{0, 2, 5}));
    const auto comms = f.groups.take_communicators_to_create();
    ASSERT_EQ(comms.size(), 1u);
    EXPECT_EQ(comms[0].first, (std::vector<int32_t>{0, 2, 5}));
    EXPECT_EQ(comms[0].second, tag);
    EXPECT_FALSE(f.groups.has_communicators_to_create());
  }
}

TEST(BroadcastGroups, ClusterMpiBroadcastsFlushEveryMember) {
  Fixture f(config_for(coll::Strategy::mpi, 4));
  f.groups.join(1, held_by({1}, 1), 2, 0);
  f.groups.join(1, held_by({1, 2}, 1), 3, 0);
  f.groups.deliver_all();
  // Posted at once (members join together), the head's own batch last.
  ASSERT_EQ(f.log.commands.size(), 3u);
  EXPECT_EQ(f.log.commands[0].dest, 1);
  EXPECT_EQ(f.log.commands[1].dest, 2);
  EXPECT_EQ(f.log.commands[2].dest, 3);
  EXPECT_FALSE(f.groups.has_communicators_to_create());
}

TEST(BroadcastGroups, PastTheCapNewMemberSetsGoByTree) {
  Fixture f(config_for(coll::Strategy::mpi, 80, 0, true));
  // 64 distinct member sets {0, 1, r}.
  for (int r = 2; r < 66; ++r) {
    f.groups.join(static_cast<uint64_t>(r), held_by({0}, 0), 1, 0);
    f.groups.join(static_cast<uint64_t>(r), held_by({0, 1}, 0), r, 0);
    f.groups.deliver_all();
  }
  EXPECT_EQ(f.groups.strategy_for(0, {0, 1, 70}), coll::Strategy::tree);
  EXPECT_EQ(f.groups.strategy_for(0, {0, 1, 5}), coll::Strategy::mpi);  // known set
}

TEST(BroadcastGroups, AutomaticWithinOneNodeUsesMpi) {
  BroadcastConfig config = config_for(coll::Strategy::automatic, 8);
  config.node_of_rank = {0, 0, 0, 0, 4, 4, 4, 4};
  Fixture f(config);
  EXPECT_EQ(f.groups.strategy_for(1, {0, 1, 3}), coll::Strategy::mpi);
  EXPECT_EQ(f.groups.strategy_for(1, {0, 1, 5}), coll::Strategy::automatic);
}

TEST(BroadcastGroups, ClusterDeliversByAge) {
  Fixture f(config_for(coll::Strategy::tree, 8));
  f.groups.join(1, held_by({0}, 0), 3, 0);
  f.groups.deliver_if_older_than(1, ~uint64_t{0});
  EXPECT_EQ(f.groups.pending(), 1u);
  f.groups.deliver_if_older_than(~uint64_t{0} >> 1, 100'000);
  EXPECT_TRUE(f.groups.empty());
}

}  // namespace
}  // namespace taskgrid::plan
