#include "comm/loopback/transport.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "comm/message_matching.h"

namespace taskgrid::comm::loopback {

namespace {

enum Stream : int { kData = 0, kChunk = 1, kGroup = 2 };

}  // namespace

class LoopbackFabric::Endpoint final : public Transport {
 public:
  Endpoint(LoopbackFabric& fabric, int rank)
      : fabric_(fabric), rank_(rank), matching_([this](const std::string& what) { fail(what); }) {}

  int rank() const override { return rank_; }
  int size() const override { return fabric_.size(); }
  int max_tag() const override { return 1 << 30; }
  Blocking& blocking() override { return *fabric_.blocking_; }
  int cores_per_rank() const override { return fabric_.cores_per_rank_; }

  void send_control(int dest, std::vector<char>&& batch) override {
    Endpoint& to = peer(dest);
    std::lock_guard lock(to.mutex_);
    to.control_.emplace_back(rank_, std::move(batch));
  }
  bool receive_control(int& source, std::vector<char>& batch) override {
    std::lock_guard lock(mutex_);
    if (control_.empty()) return false;
    source = control_.front().first;
    batch = std::move(control_.front().second);
    control_.pop_front();
    return true;
  }

  void send_data(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) override {
    send(kData, dest, tag, data, bytes, cookie);
  }
  void receive_data(int source, int tag, void* data, size_t bytes, uint64_t cookie) override {
    receive(kData, source, tag, data, bytes, cookie);
  }
  void send_chunk(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) override {
    send(kChunk, dest, tag, data, bytes, cookie);
  }
  void receive_chunk(int source, int tag, void* data, size_t bytes, uint64_t cookie) override {
    receive(kChunk, source, tag, data, bytes, cookie);
  }
  size_t max_chunk() const override { return size_t{1} << 30; }

  // A group broadcast is the root's point-to-point message to every other
  // member on a stream of its own (tag: the group), matched in posting order
  // like MPI's collectives.
  int create_group(const std::vector<int32_t>& members, int) override {
    int id;
    {
      std::lock_guard lock(fabric_.groups_mutex_);
      auto [it, added] =
          fabric_.group_ids_.emplace(members, static_cast<int>(fabric_.group_members_.size()) + 1);
      if (added) fabric_.group_members_.push_back(members);
      id = it->second;
    }
    std::lock_guard lock(mutex_);
    my_groups_.emplace(members, id);
    return id;
  }
  int find_group(const std::vector<int32_t>& members) override {
    std::lock_guard lock(mutex_);
    auto it = my_groups_.find(members);
    return it == my_groups_.end() ? 0 : it->second;
  }
  void broadcast_chunk(int group, int root, void* data, size_t bytes, uint64_t cookie) override {
    std::vector<int32_t> members;
    {
      std::lock_guard lock(fabric_.groups_mutex_);
      members = fabric_.group_members_.at(static_cast<size_t>(group - 1));
    }
    const int root_rank = members.at(static_cast<size_t>(root));
    if (root_rank != rank_) {
      receive(kGroup, root_rank, group, data, bytes, cookie);
      return;
    }
    for (int32_t member : members)
      if (member != rank_) send(kGroup, member, group, data, bytes, 0, false);
    std::lock_guard lock(mutex_);
    matching_.finished(cookie);
  }

  bool poll(std::vector<uint64_t>& finished) override {
    std::lock_guard lock(mutex_);
    return matching_.take_finished(finished);
  }
  size_t pending() const override {
    std::lock_guard lock(mutex_);
    return matching_.pending();
  }
  bool copying_bulk_data() const override { return false; }
  bool same_node(int) const override { return false; }
  [[noreturn]] void abort_job(int status) override {
    std::fprintf(stderr, "loopback transport: rank %d ends the process (status %d)\n", rank_,
                 status);
    std::fflush(stderr);
    std::_Exit(status == 0 ? 1 : status);
  }

 private:
  Endpoint& peer(int rank) {
    if (rank < 0 || rank >= fabric_.size()) fail("a message to rank " + std::to_string(rank));
    return *fabric_.endpoints_[static_cast<size_t>(rank)];
  }
  [[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "loopback transport: rank %d: %s\n", rank_, what.c_str());
    abort_job(1);
  }

  void send(int stream, int dest, int tag, const void* data, size_t bytes, uint64_t cookie,
            bool complete = true) {
    Endpoint& to = peer(dest);
    fabric_.data_messages_.fetch_add(1);
    {
      std::lock_guard lock(to.mutex_);
      to.matching_.arrive(stream, rank_, tag, data, bytes);
    }
    if (!complete) return;
    std::lock_guard lock(mutex_);
    matching_.finished(cookie);  // the bytes are copied: the send is complete
  }

  void receive(int stream, int source, int tag, void* data, size_t bytes, uint64_t cookie) {
    std::lock_guard lock(mutex_);
    matching_.post(stream, source, tag, data, bytes, cookie);
  }

  LoopbackFabric& fabric_;
  const int rank_;
  mutable std::mutex mutex_;  // guards everything below; senders take the receiver's
  std::deque<std::pair<int, std::vector<char>>> control_;
  MessageMatching matching_;
  std::map<std::vector<int32_t>, int> my_groups_;  // created by this rank
};

LoopbackFabric::LoopbackFabric(int ranks) {
  for (int r = 0; r < ranks; ++r) endpoints_.push_back(std::make_unique<Endpoint>(*this, r));
}

LoopbackFabric::~LoopbackFabric() = default;

Transport& LoopbackFabric::transport(int rank) { return *endpoints_.at(static_cast<size_t>(rank)); }

}  // namespace taskgrid::comm::loopback
