#include "comm/loopback/collectives.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace taskgrid::comm::loopback {

class LoopbackCollectiveGroup::Member final : public Collectives {
 public:
  Member(LoopbackCollectiveGroup& group, int rank) : group_(group), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return group_.size(); }
  int ranks_on_node() const override { return group_.ranks_per_node_; }

  void allreduce_max(uint64_t* values, size_t count) override {
    publish(values, count * sizeof(uint64_t));
    std::vector<uint64_t> result(values, values + count);
    for (const Slot& slot : group_.slots_) {
      const auto* theirs = static_cast<const uint64_t*>(slot.data);
      for (size_t i = 0; i < count; ++i) result[i] = std::max(result[i], theirs[i]);
    }
    group_.meet();  // nobody reads `values` any more
    std::copy(result.begin(), result.end(), values);
  }

  std::vector<std::vector<char>> gather(int root, const void* mine, size_t bytes) override {
    publish(mine, bytes);
    std::vector<std::vector<char>> all;
    if (rank_ == root) {
      for (const Slot& slot : group_.slots_) {
        const char* data = static_cast<const char*>(slot.data);
        all.emplace_back(data, data + slot.bytes);
      }
    }
    group_.meet();
    return all;
  }

  void broadcast(int root, void* data, size_t bytes) override {
    publish(data, bytes);
    const Slot& from = group_.slots_[static_cast<size_t>(root)];
    if (rank_ != root && bytes) std::memcpy(data, from.data, bytes);
    group_.meet();
  }

  void barrier() override { group_.meet(); }

  LinkEstimate measure_link() override {
    if (size() < 2) return {};
    if (group_.link_) return *group_.link_;
    // An in-process "link": broadcasts from rank 0 and rank 1 in turn stand
    // for the ping-pong; only rank 0's clock counts.
    constexpr size_t kLarge = size_t{1} << 20;
    std::vector<char> buffer(kLarge);
    auto rounds = [&](int count, size_t bytes) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < count; ++i) {
        broadcast(0, buffer.data(), bytes);
        broadcast(1, buffer.data(), bytes);
      }
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      return elapsed.count() / (2.0 * count);
    };
    rounds(2, 8);
    const double latency = std::max(rounds(20, 8), 1e-9);
    const double large = rounds(4, kLarge);
    double measured[2] = {latency, static_cast<double>(kLarge) / std::max(large - latency, 1e-9)};
    broadcast(0, measured, sizeof measured);
    return {measured[0], measured[1]};
  }

 private:
  // Puts this rank's contribution in its slot and waits for everyone's.
  void publish(const void* data, size_t bytes) {
    group_.slots_[static_cast<size_t>(rank_)] = {data, bytes};
    group_.meet();
  }

  LoopbackCollectiveGroup& group_;
  int rank_;
};

LoopbackCollectiveGroup::LoopbackCollectiveGroup(int ranks, int ranks_per_node, Blocking& blocking)
    : slots_(static_cast<size_t>(std::max(ranks, 0))),
      ranks_per_node_(ranks_per_node > 0 ? ranks_per_node : std::max(ranks, 1)),
      mutex_(blocking),
      met_(blocking) {
  if (ranks < 1) throw std::invalid_argument("LoopbackCollectiveGroup: needs at least one rank");
  for (int r = 0; r < ranks; ++r) members_.push_back(std::make_unique<Member>(*this, r));
}

LoopbackCollectiveGroup::~LoopbackCollectiveGroup() = default;

Collectives& LoopbackCollectiveGroup::collectives(int rank) {
  return *members_.at(static_cast<size_t>(rank));
}

void LoopbackCollectiveGroup::meet() {
  // The mutex also orders every slot write before the meeting ahead of every
  // read after it.
  std::unique_lock lock(mutex_);
  const uint64_t generation = generation_;
  if (++arrived_ == size()) {
    arrived_ = 0;
    ++generation_;
    met_.notify_all();
    return;
  }
  met_.wait(lock, [&] { return generation_ != generation; });
}

}  // namespace taskgrid::comm::loopback
