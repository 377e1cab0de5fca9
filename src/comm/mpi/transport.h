// Transport over non-blocking MPI point-to-point on private communicators.
//
// Why data receives are matched by probing instead of pre-posted: a planner
// runs far ahead of execution, so a rank may expect thousands of transfers at
// once, and MPI_Testsome over N posted receives costs O(N) on every poll
// (26 µs at N = 1000 with MPICH). Instead an expected transfer is only a
// table entry; each poll asks MPI_Improbe for whatever data has arrived,
// looks its (source, tag) up and receives it with MPI_Imrecv straight into the
// registered buffer. A message that arrives before the engine expects it is
// received into a stash and copied over when the expectation comes. Only
// transfers actually in flight are tested, so polling cost does not grow with
// how far ahead the planner is.
//
// Transfers larger than one chunk, and the chunks of broadcasts, use a third
// communicator with pre-posted receives (their chunks must not be probed one
// by one, and a receiver posts only a window of them at a time).
#pragma once

#include <mpi.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "comm/transport.h"

namespace taskgrid::comm::mpi {

class MpiTransport final : public Transport {
 public:
  // Duplicates `comm` so TaskGrid's tags never meet the program's messages.
  // Transfers larger than `max_chunk` bytes travel as several messages.
  explicit MpiTransport(MPI_Comm comm, size_t max_chunk = kMaxChunk);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int max_tag() const override { return max_tag_; }
  MPI_Comm communicator() const { return comm_; }

  void send_control(int dest, std::vector<char>&& batch) override;
  bool receive_control(int& source, std::vector<char>& batch) override;
  void send_data(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) override;
  void receive_data(int source, int tag, void* data, size_t bytes, uint64_t cookie) override;
  void send_chunk(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) override;
  void receive_chunk(int source, int tag, void* data, size_t bytes, uint64_t cookie) override;
  int create_group(const std::vector<int32_t>& members, int tag) override;
  int find_group(const std::vector<int32_t>& members) override;
  void broadcast_chunk(int group, int root, void* data, size_t bytes, uint64_t cookie) override;
  bool poll(std::vector<uint64_t>& finished) override;
  size_t pending() const override;
  bool copying_bulk_data() const override { return bulk_operations_ > 0; }
  bool same_node(int rank) const override {
    return node_of_rank_[static_cast<size_t>(rank)] == node_of_rank_[static_cast<size_t>(rank_)];
  }
  // Per rank, the lowest rank on its node.
  const std::vector<int32_t>& node_of_rank() const { return node_of_rank_; }
  // Doorbells: the engine's Wakeup lives in memory the node's ranks share, and
  // a send to a rank of the node rings it, so a rank with nothing to do sleeps
  // instead of polling and wakes as soon as a message comes. Where the node
  // has more ranks than cores and more of them are awake than it has cores,
  // an idle rank sleeps after 25 µs instead of 2 ms.
  WakeupWords* doorbell() override { return own_doorbell_; }
  void idle(IdleBackoff& backoff, Wakeup& wakeup, bool streaming) override;
  bool oversubscribed() const override { return oversubscribed_; }
  int cores_per_rank() const override { return cores_per_rank_; }
  uint64_t bytes_arriving_from(int peer) const override {
    return arriving_[static_cast<size_t>(peer)].load(std::memory_order_relaxed);
  }
  // Ranks that share this rank's cores (see affinity.h) not asleep on their
  // doorbells, this one included.
  int awake_ranks_on_node() const;
  // Whether `rank` (of this node) sleeps on its doorbell now.
  bool sleeping(int rank) const {
    const WakeupWords* bell = doorbells_[static_cast<size_t>(rank)];
    return bell && bell->sleep.sleepers.load() > 0;
  }
  [[noreturn]] void abort_job(int status) override;

  static constexpr int kControlTag = 1;
  // Transfers are cut into chunks of at most this size (MPI counts are int).
  static constexpr size_t kMaxChunk = size_t{1} << 30;
  // Data messages this small are sent eagerly by every MPI we support: a
  // send is tested at once (complete, it keeps no request), and an arrival
  // is received inside the probe that found it (MPI_Mrecv copies bytes
  // already here and never waits on the sender).
  static constexpr size_t kAtOnceBytes = 1024;
  size_t max_chunk() const override { return max_chunk_; }
  void set_max_chunk(size_t bytes) override {
    if (bytes > 0 && bytes < max_chunk_) max_chunk_ = bytes;
  }
  size_t data_piece_bytes(size_t bytes) const override;
  void send_data_piece(int dest, int tag, const void* data, size_t bytes, size_t total,
                       uint64_t cookie) override;

 private:
  // One logical operation: a control send, a data transfer (maybe chunked),
  // or a stash receive.
  struct Operation {
    enum class Kind { control, data, stash } kind = Kind::data;
    uint64_t cookie = 0;
    uint32_t chunks_left = 0;
    uint64_t key = 0;          // stash: (source, tag)
    bool bulk = false;         // counted in bulk_operations_
    int32_t from = -1;         // a receive from this rank, counted in arriving_
    uint64_t arriving = 0;     // its bytes there
    std::vector<char> buffer;  // control batch or stashed message
  };
  struct Expected {
    void* data;
    size_t bytes;
    uint64_t cookie;
  };
  struct Stashed {
    std::vector<char> bytes;
    bool complete = false;
    bool expected = false;  // an expectation is waiting for it to complete
    Expected expectation{};
  };
  static uint64_t key_of(int source, int tag) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(source)) << 32) |
           static_cast<uint32_t>(tag);
  }
  // `bytes` and `peer` (-1: none) tell whether it is bulk data within the node.
  uint32_t new_operation(Operation::Kind kind, uint64_t cookie, size_t bytes = 0, int peer = -1);
  void add_request(MPI_Request request, uint32_t operation);
  void check(int code, const char* call);
  // Matches the data messages that arrived to their receives (or stashes
  // them) until none is left, or until a control batch: then true, and the
  // batch waits in control_message_ for receive_control.
  bool probe_arrivals();
  void deliver_stash(Stashed& stash, const Expected& expected, std::vector<uint64_t>& finished);
  // bytes_arriving_from's counts: the thread driving the transport (one at a
  // time) writes them, any thread reads. A load and a store, not a locked
  // read-modify-write: there is one writer, and this is on every receive.
  void arriving(int source, size_t bytes) {
    std::atomic<uint64_t>& count = arriving_[static_cast<size_t>(source)];
    count.store(count.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
  }
  void arrived(int source, size_t bytes) {
    std::atomic<uint64_t>& count = arriving_[static_cast<size_t>(source)];
    count.store(count.load(std::memory_order_relaxed) - bytes, std::memory_order_relaxed);
  }
  // `operation` receives `bytes` from `source`, counted as arriving until it
  // completes (`counted`: they already are, since they were asked for).
  void arriving_until_done(uint32_t operation, int source, size_t bytes, bool counted = false) {
    if (!counted) arriving(source, bytes);
    operations_[operation].from = source;
    operations_[operation].arriving = bytes;
  }
  // Calls post(address, bytes) for each chunk of at most max_chunk_ bytes
  // (larger when that would make more than kMaxChunksPerTransfer chunks).
  static constexpr size_t kMaxChunksPerTransfer = 1024;
  template <typename Post>
  void for_each_chunk(void* data, size_t bytes, Post&& post) const;

  MPI_Comm comm_ = MPI_COMM_NULL;          // set-up queries; parent of the task channels
  MPI_Comm data_comm_ = MPI_COMM_NULL;     // control batches and single-message transfers (probed)
  MPI_Comm bulk_comm_ = MPI_COMM_NULL;     // chunked transfers (pre-posted)
  MPI_Comm group_parent_ = MPI_COMM_NULL;  // parent of the broadcast groups' communicators
  int rank_ = 0;
  int size_ = 1;
  int max_tag_ = 32767;
  size_t max_chunk_ = kMaxChunk;
  std::vector<MPI_Request> requests_;
  std::vector<uint32_t> request_operation_;  // parallel to requests_
  std::vector<Operation> operations_;
  std::vector<uint32_t> free_operations_;
  std::vector<int> completed_indices_;
  std::unordered_map<uint64_t, Expected> expected_;
  std::unordered_map<uint64_t, Stashed> stashed_;
  std::vector<uint64_t> finished_early_;               // transfers finished outside poll()
  std::unique_ptr<std::atomic<uint64_t>[]> arriving_;  // per rank: bytes_arriving_from
  // probe_arrivals' state between receive_control and poll.
  bool probed_ = false;        // since the last poll()
  bool data_matched_ = false;  // a data message was matched or stashed
  bool control_waiting_ = false;
  MPI_Message control_message_ = MPI_MESSAGE_NULL;
  int control_count_ = 0;
  int control_source_ = -1;
  size_t bulk_operations_ = 0;  // within the node, of kBulkBytes or more
  std::vector<int32_t> node_of_rank_;
  // Doorbells (see doorbell()): one slot per rank of the node in a shared
  // window; per rank of the job, its slot or nullptr (another node).
  void set_up_doorbells(MPI_Comm node);
  void ring(int dest) {
    if (WakeupWords* bell = doorbells_[static_cast<size_t>(dest)]) Wakeup::ring(*bell);
  }
  bool message_waiting();
  MPI_Win doorbell_window_ = MPI_WIN_NULL;
  std::vector<WakeupWords*> doorbells_;
  WakeupWords* own_doorbell_ = nullptr;
  std::vector<const WakeupWords*> node_doorbells_;  // of this node's other ranks on our cores
  bool oversubscribed_ = false;
  int usable_cores_ = 0;               // this rank's affinity mask (0: unknown)
  int cores_per_rank_ = 0;             // usable_cores_ / ranks that may use them
  bool can_probe_while_idle_ = false;  // MPI_THREAD_MULTIPLE
  // Broadcast groups: one communicator each (id = index + 1). The map is read
  // by the polling thread and written by the creating one.
  std::mutex groups_mutex_;
  std::map<std::vector<int32_t>, int> group_ids_;
  std::vector<MPI_Comm> group_comms_;
  std::vector<bool> group_copies_locally_;  // a member shares this node
};

}  // namespace taskgrid::comm::mpi
