// Broadcast strategies: which one delivers a data version that tasks on
// several ranks read, how its buffer is cut, and the shape of the tree that
// carries it. Pure functions, shared by the planner (which picks the plan)
// and the engines (which split the forward lists as data arrives).
//
// Dynamic Broadcast (Denis et al., Euro-Par 2020): the root sends each child
// a route naming the ranks that child must forward to; a receiver splits its
// list the same way. No rank needs to know the tree in advance, only the
// shape rule, which travels in the route.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace taskgrid::coll {

enum class Strategy : uint8_t {
  none,      // on demand: one point-to-point transfer per reader rank
  p2p,       // the holder sends to each reader rank in turn
  mpi,       // MPI_Ibcast on a communicator of exactly the participants
  tree,      // Dynamic Broadcast over a binomial tree, store and forward
  pipeline,  // the tree cut in chunks, each forwarded as it arrives
  automatic  // tree or pipeline, from size, ranks, latency and bandwidth
};

std::optional<Strategy> parse_strategy(const std::string& name);
const char* strategy_name(Strategy strategy);

enum class Shape : uint8_t {
  sequential,  // the root sends to every rank, one after the other
  binomial,    // halving: ceil(log2(P)) rounds
  chain        // each rank forwards to the next: bandwidth-optimal when pipelined
};

// How one broadcast is carried out (resolved from Strategy::automatic).
struct Plan {
  Strategy strategy = Strategy::none;
  Shape shape = Shape::binomial;
  size_t chunk_bytes = 0;           // largest data message of this broadcast
  bool forward_each_chunk = false;  // false: a rank forwards once it has it all
};

struct NetworkModel {
  double latency_seconds = 5e-6;
  double bandwidth_bytes_per_second = 5e9;
};

// `participants` counts the root. `chunk_setting` 0: pick the pipeline chunk
// from the model. `max_message` caps every chunk (the transport's limit).
Plan choose_plan(Strategy strategy, size_t bytes, int participants, const NetworkModel& model,
                 size_t chunk_setting, size_t max_message);

// Estimated completion time of a plan (seconds): the cost model behind auto.
double estimate_seconds(const Plan& plan, size_t bytes, int participants,
                        const NetworkModel& model);

// Number of data messages for `bytes` cut in `chunk_bytes` (at least one: a
// 0-byte broadcast still sends one empty message, which carries completion).
uint32_t chunk_count(size_t bytes, size_t chunk_bytes);

// A rank to send to, and the ranks it must forward to in turn.
struct Child {
  int rank;
  std::vector<int32_t> forward;
};

// Splits `forward` (the ranks below this one) into this rank's children.
// Children come in the order they should be served: largest subtree first.
void split_children(Shape shape, const int32_t* forward, size_t count,
                    std::vector<Child>& children);

}  // namespace taskgrid::coll
