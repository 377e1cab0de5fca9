#include "coll/broadcast.h"

#include <algorithm>
#include <cmath>

namespace taskgrid::coll {
namespace {

constexpr const char* kNames[] = {"none", "p2p", "mpi", "tree", "pipeline", "auto"};

// Pipeline chunks: small enough to start forwarding soon, large enough that
// per-message costs stay small next to the transfer itself.
constexpr size_t kMinPipelineChunk = size_t{64} << 10;
constexpr size_t kMaxPipelineChunk = size_t{4} << 20;

int ceil_log2(int n) {
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  return rounds;
}

// The chunk c minimising (P - 2 + bytes / c) * (latency + c / bandwidth),
// the time of a pipelined chain: sqrt(bytes * latency * bandwidth / (P - 2)).
size_t model_chunk(size_t bytes, int participants, const NetworkModel& model) {
  const double hops = std::max(1, participants - 2);
  const double best = std::sqrt(static_cast<double>(bytes) * model.latency_seconds *
                                model.bandwidth_bytes_per_second / hops);
  return std::clamp(static_cast<size_t>(best), kMinPipelineChunk, kMaxPipelineChunk);
}

}  // namespace

std::optional<Strategy> parse_strategy(const std::string& name) {
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (name == kNames[i]) return static_cast<Strategy>(i);
  return std::nullopt;
}

const char* strategy_name(Strategy strategy) { return kNames[static_cast<size_t>(strategy)]; }

uint32_t chunk_count(size_t bytes, size_t chunk_bytes) {
  if (bytes == 0 || chunk_bytes == 0) return 1;
  return static_cast<uint32_t>((bytes + chunk_bytes - 1) / chunk_bytes);
}

double estimate_seconds(const Plan& plan, size_t bytes, int participants,
                        const NetworkModel& model) {
  const double a = model.latency_seconds;
  const double per_byte = 1.0 / model.bandwidth_bytes_per_second;
  const double n = static_cast<double>(bytes);
  const double receivers = participants - 1;
  const double chunks = chunk_count(bytes, plan.chunk_bytes);
  const double chunk = n / chunks;
  switch (plan.shape) {
    case Shape::sequential:
      return receivers * (a + n * per_byte);
    case Shape::binomial:
      // Every rank forwards only once it holds the whole buffer, unless the
      // chunks are forwarded as they come: then the root's share dominates.
      if (!plan.forward_each_chunk || chunks <= 1)
        return ceil_log2(participants) * (a + n * per_byte);
      return (ceil_log2(participants) * chunks + ceil_log2(participants) - 1) *
             (a + chunk * per_byte);
    case Shape::chain:
      if (!plan.forward_each_chunk) return receivers * (a + n * per_byte);
      return (std::max(0.0, receivers - 1) + chunks) * (a + chunk * per_byte);
  }
  return 0;
}

Plan choose_plan(Strategy strategy, size_t bytes, int participants, const NetworkModel& model,
                 size_t chunk_setting, size_t max_message) {
  const size_t whole = std::max<size_t>(1, std::min(bytes, max_message));
  const size_t pipeline_chunk = std::min(
      max_message, chunk_setting ? chunk_setting : model_chunk(bytes, participants, model));
  Plan plan;
  plan.strategy = strategy;
  switch (strategy) {
    case Strategy::none:
    case Strategy::p2p:
      plan.shape = Shape::sequential;
      plan.chunk_bytes = whole;
      break;
    case Strategy::mpi:
    case Strategy::tree:
      plan.shape = Shape::binomial;
      plan.chunk_bytes = whole;
      break;
    case Strategy::pipeline:
      plan.chunk_bytes = pipeline_chunk;
      plan.forward_each_chunk = true;
      // One chunk cannot be pipelined: a chain would only add hops.
      plan.shape = chunk_count(bytes, pipeline_chunk) > 1 ? Shape::chain : Shape::binomial;
      break;
    case Strategy::automatic: {
      const Plan tree =
          choose_plan(Strategy::tree, bytes, participants, model, chunk_setting, max_message);
      const Plan piped =
          choose_plan(Strategy::pipeline, bytes, participants, model, chunk_setting, max_message);
      plan = estimate_seconds(piped, bytes, participants, model) <
                     estimate_seconds(tree, bytes, participants, model)
                 ? piped
                 : tree;
      break;
    }
  }
  return plan;
}

void split_children(Shape shape, const int32_t* forward, size_t count,
                    std::vector<Child>& children) {
  children.clear();
  switch (shape) {
    case Shape::sequential:
      for (size_t i = 0; i < count; ++i) children.push_back({forward[i], {}});
      return;
    case Shape::chain:
      if (count > 0) children.push_back({forward[0], {forward + 1, forward + count}});
      return;
    case Shape::binomial:
      // Halving: the upper half goes to its first rank (which forwards the
      // rest of it), the lower half is split again.
      for (size_t left = count; left > 0;) {
        const size_t half = left / 2;
        children.push_back({forward[half], {forward + half + 1, forward + left}});
        left = half;
      }
      return;
  }
}

}  // namespace taskgrid::coll
