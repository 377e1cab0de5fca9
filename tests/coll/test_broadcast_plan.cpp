// coll/broadcast: the shapes that carry a broadcast, the cost model behind
// auto, and the chunking of buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <vector>

#include "coll/broadcast.h"

namespace {

using namespace taskgrid::coll;

struct Delivery {
  int parent;
  int round;  // store-and-forward round in which the rank receives
};

// Walks a whole broadcast as receivers would: each rank splits the list its
// route carries. Returns, per rank, who sent to it and in which round (a
// rank's k-th send leaves in round receive_round + k).
std::map<int, Delivery> simulate(Shape shape, int participants) {
  std::vector<int32_t> readers(static_cast<size_t>(participants - 1));
  std::iota(readers.begin(), readers.end(), 1);
  std::map<int, Delivery> delivered;
  std::function<void(int, int, const std::vector<int32_t>&)> visit =
      [&](int rank, int round, const std::vector<int32_t>& forward) {
        std::vector<Child> children;
        split_children(shape, forward.data(), forward.size(), children);
        int send_round = round;
        for (const Child& child : children) {
          send_round += 1;
          EXPECT_FALSE(delivered.count(child.rank)) << "rank " << child.rank << " served twice";
          delivered[child.rank] = {rank, send_round};
          visit(child.rank, send_round, child.forward);
        }
      };
  visit(0, 0, readers);
  return delivered;
}

int rounds(const std::map<int, Delivery>& delivered) {
  int last = 0;
  for (const auto& [rank, delivery] : delivered) last = std::max(last, delivery.round);
  return last;
}

TEST(BroadcastShapes, EveryShapeReachesEveryReaderExactlyOnce) {
  for (Shape shape : {Shape::sequential, Shape::binomial, Shape::chain})
    for (int participants = 2; participants <= 33; ++participants) {
      const auto delivered = simulate(shape, participants);
      ASSERT_EQ(delivered.size(), static_cast<size_t>(participants - 1))
          << "shape " << static_cast<int>(shape) << ", " << participants << " participants";
      for (int rank = 1; rank < participants; ++rank) EXPECT_TRUE(delivered.count(rank));
    }
}

TEST(BroadcastShapes, BinomialTakesCeilLog2Rounds) {
  const int expected[] = {0, 0, 1, 2, 2, 3, 3, 3, 3, 4};  // by participants
  for (int participants = 2; participants < 10; ++participants)
    EXPECT_EQ(rounds(simulate(Shape::binomial, participants)), expected[participants])
        << participants << " participants";
  EXPECT_EQ(rounds(simulate(Shape::binomial, 64)), 6);
  EXPECT_EQ(rounds(simulate(Shape::binomial, 65)), 7);
}

TEST(BroadcastShapes, BinomialRootOfEightServesLargestSubtreeFirst) {
  const int32_t readers[] = {1, 2, 3, 4, 5, 6, 7};
  std::vector<Child> children;
  split_children(Shape::binomial, readers, 7, children);
  ASSERT_EQ(children.size(), 3u);
  EXPECT_EQ(children[0].rank, 4);
  EXPECT_EQ(children[0].forward, (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(children[1].rank, 2);
  EXPECT_EQ(children[1].forward, (std::vector<int32_t>{3}));
  EXPECT_EQ(children[2].rank, 1);
  EXPECT_TRUE(children[2].forward.empty());
}

TEST(BroadcastShapes, ChainAndSequential) {
  const auto chain = simulate(Shape::chain, 5);
  for (int rank = 1; rank < 5; ++rank) EXPECT_EQ(chain.at(rank).parent, rank - 1);
  const auto star = simulate(Shape::sequential, 5);
  for (int rank = 1; rank < 5; ++rank) {
    EXPECT_EQ(star.at(rank).parent, 0);
    EXPECT_EQ(star.at(rank).round, rank);  // one after the other
  }
  std::vector<Child> children;
  split_children(Shape::chain, nullptr, 0, children);
  EXPECT_TRUE(children.empty());
}

TEST(BroadcastPlan, ChunkCount) {
  EXPECT_EQ(chunk_count(0, 100), 1u);  // one empty message still carries completion
  EXPECT_EQ(chunk_count(1, 100), 1u);
  EXPECT_EQ(chunk_count(100, 100), 1u);
  EXPECT_EQ(chunk_count(101, 100), 2u);
  EXPECT_EQ(chunk_count(size_t{1} << 30, size_t{1} << 20), 1024u);
}

TEST(BroadcastPlan, StrategiesMapToShapes) {
  const NetworkModel model{50e-6, 25e6};
  const size_t max_message = size_t{1} << 30;
  const size_t big = size_t{256} << 20;
  const Plan p2p = choose_plan(Strategy::p2p, big, 8, model, 0, max_message);
  EXPECT_EQ(p2p.shape, Shape::sequential);
  EXPECT_EQ(p2p.chunk_bytes, big);
  const Plan tree = choose_plan(Strategy::tree, big, 8, model, 0, max_message);
  EXPECT_EQ(tree.shape, Shape::binomial);
  EXPECT_FALSE(tree.forward_each_chunk);
  EXPECT_EQ(tree.chunk_bytes, big);
  const Plan pipeline = choose_plan(Strategy::pipeline, big, 8, model, 0, max_message);
  EXPECT_EQ(pipeline.shape, Shape::chain);
  EXPECT_TRUE(pipeline.forward_each_chunk);
  EXPECT_LT(pipeline.chunk_bytes, big);
  EXPECT_GE(pipeline.chunk_bytes, size_t{64} << 10);
  // A chunk setting wins, capped by the transport's message limit.
  EXPECT_EQ(choose_plan(Strategy::pipeline, big, 8, model, 3000, max_message).chunk_bytes, 3000u);
  EXPECT_EQ(choose_plan(Strategy::pipeline, big, 8, model, 3000, 1000).chunk_bytes, 1000u);
  EXPECT_EQ(choose_plan(Strategy::tree, big, 8, model, 0, 1000).chunk_bytes, 1000u);
  // One chunk cannot be pipelined: a binomial tree then.
  EXPECT_EQ(choose_plan(Strategy::pipeline, 1000, 8, model, 0, max_message).shape, Shape::binomial);
}

TEST(BroadcastPlan, ModelOrdersStrategiesAsTheLinkCountsSay) {
  // Bandwidth-bound: p2p needs P-1 link transfers, a binomial tree
  // ceil(log2 P), a pipelined chain about one.
  const NetworkModel model{50e-6, 25e6};
  const size_t big = size_t{256} << 20;
  const auto time = [&](Strategy s) {
    return estimate_seconds(choose_plan(s, big, 8, model, 0, size_t{1} << 30), big, 8, model);
  };
  const double one_link = static_cast<double>(big) / model.bandwidth_bytes_per_second;
  EXPECT_NEAR(time(Strategy::p2p) / one_link, 7.0, 0.01);
  EXPECT_NEAR(time(Strategy::tree) / one_link, 3.0, 0.01);
  EXPECT_LT(time(Strategy::pipeline) / one_link, 1.1);
}

TEST(BroadcastPlan, AutoPicksPipelineForLargeAndTreeForSmall) {
  const NetworkModel model{50e-6, 25e6};
  const size_t max_message = size_t{1} << 30;
  EXPECT_EQ(choose_plan(Strategy::automatic, size_t{64} << 20, 8, model, 0, max_message).strategy,
            Strategy::pipeline);
  EXPECT_EQ(choose_plan(Strategy::automatic, 1024, 8, model, 0, max_message).strategy,
            Strategy::tree);
}

TEST(BroadcastPlan, ParseNames) {
  for (const char* name : {"none", "p2p", "mpi", "tree", "pipeline", "auto"}) {
    const auto strategy = parse_strategy(name);
    ASSERT_TRUE(strategy) << name;
    EXPECT_STREQ(strategy_name(*strategy), name);
  }
  EXPECT_FALSE(parse_strategy("bogus"));
  EXPECT_FALSE(parse_strategy(""));
}

}  // namespace
