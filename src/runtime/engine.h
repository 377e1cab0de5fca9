// The per-rank execution engine, the same in every mode: it applies planner
// commands (tasks, sends, retirements) in order, tracks which data versions
// this rank holds, runs tasks whose inputs are present on the CPU workers,
// and moves versions peer to peer. One progress loop drives all MPI.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "coll/broadcast.h"
#include "comm/idle_backoff.h"
#include "comm/transport.h"
#include "comm/wire.h"
#include "data/buffer_pool.h"
#include "data/node_pool.h"
#include "exec/task_comm_ops.h"
#include "exec/worker_pool.h"
#include "runtime/command_sink.h"
#include "runtime/function_registry.h"

namespace taskgrid::runtime {

struct EngineStats {
  uint64_t tasks_executed = 0;
  uint64_t task_ns = 0;
  uint64_t data_messages_sent = 0;
  uint64_t data_bytes_sent = 0;
  uint64_t data_messages_received = 0;
  uint64_t data_bytes_received = 0;
  uint64_t control_messages_sent = 0;
  uint64_t control_bytes_sent = 0;
  uint64_t control_messages_received = 0;
  uint64_t versions_reclaimed = 0;
  uint64_t inout_buffers_reused = 0;
  // Broadcasts (printed on their own line; see README, TASKGRID_STATS).
  uint64_t broadcasts_rooted = 0;  // tree/pipeline/p2p broadcasts started here
  uint64_t broadcast_routes_received = 0;
  uint64_t broadcast_chunks_sent = 0;
  uint64_t broadcast_chunks_received = 0;
  uint64_t mpi_broadcasts = 0;  // MPI_Ibcast broadcasts taken part in
};

class Engine final : public CommandSink {
 public:
  // `threads` task-running threads: the engine thread plus threads-1 workers.
  // `channels`: one communicator per task-aware communication channel.
  // `collectives`: the parent of the communicators of MPI broadcasts.
  Engine(comm::Transport& transport, int threads, int head_rank,
         std::vector<MPI_Comm> channels = {}, MPI_Comm collectives = MPI_COMM_NULL);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void set_listener(EngineListener* listener) { listener_ = listener; }
  // Measure every task's duration (for a cost model); off, tasks are only
  // timed when tracing. Clock reads are a visible share of a tiny task.
  void set_timing(bool timing) { timing_ = timing; }
  // Thread-safe: a command batch for rank `dest` (this rank: applied locally,
  // in order with earlier local batches; others: sent as a control message).
  void post(int dest, std::vector<char>&& batch) override;
  // CommandSink: creates (or finds) the MPI broadcast communicator of `members`.
  void prepare_broadcast_group(const std::vector<int32_t>& members, int tag) override {
    broadcast_comm(members, tag);
  }
  // Runs the progress loop on the calling thread until a shutdown command
  // was applied and everything in flight has completed.
  void run();
  void wake() { wakeup_.notify(); }

  int rank() const { return transport_.rank(); }
  const EngineStats& stats() const { return stats_; }

  // The communicator of an MPI broadcast among `members` (ascending ranks):
  // the cached one, else created now (collective over the members, blocking;
  // `tag` tells concurrent creations apart). Thread-safe. In spmd mode the
  // program thread creates them at a point every member reaches, so that an
  // engine never blocks on a rank whose program is still behind.
  MPI_Comm broadcast_comm(const std::vector<int32_t>& members, int tag);
  bool has_broadcast_comm(const std::vector<int32_t>& members);
  // spmd mode: the engine waits for the program thread to create communicators.
  void set_engine_creates_comms(bool creates) { engine_creates_comms_ = creates; }

 private:
  struct Version;
  struct Broadcast;
  struct Task {
    uint64_t id = 0;
    const detail::RegisteredFunction* function = nullptr;
    uint32_t waiting = 0;  // inputs not yet present
    std::vector<wire::Access> accesses;
    std::vector<Version*> inputs;   // per access, nullptr when it does not read
    std::vector<Version*> outputs;  // per access, nullptr when it does not write
    std::vector<TaskContext::Buffer> buffers;
    std::vector<char> args;
    const char* name = nullptr;  // interned: the option's name or the function's
    int channel = -1;
    bool body_done = false;
    std::vector<exec::CommOperation> operations;  // recorded by the body
    std::vector<MPI_Request> requests;            // posted in channel order
    uint64_t duration_ns = 0;
  };
  struct PendingSend {
    int dest;
    int tag;
  };
  struct Version {
    uint64_t id = 0;
    char* data = nullptr;
    size_t bytes = 0;
    bool ready = false;
    bool retired = false;
    uint32_t uses = 0;  // registered reads, sends and fetches, plus the producer
    std::vector<Task*> waiters;
    std::vector<PendingSend> sends;
    std::vector<wire::Fetch> fetches;
    std::vector<Broadcast*> broadcasts;  // rooted here, waiting for the data
    bool mpi_waiting = false;            // an MPI broadcast root waits for it
  };
  struct FetchReceive {
    uint64_t version;
  };
  // Tree, pipeline and p2p broadcasts (engine_broadcast.cpp).
  struct ChunkEvent {  // a transfer's cookie target
    Broadcast* broadcast;
    int32_t child;  // -1: a receive
    uint32_t chunk;
  };
  struct BroadcastChild {
    int rank = 0;
    std::vector<int32_t> forward;
    uint32_t posted = 0;  // chunks handed to MPI
    uint32_t done = 0;    // chunks sent
  };
  struct Broadcast {
    Version* version = nullptr;
    int parent = -1;  // -1: this rank is the root
    int tag = 0;
    coll::Shape shape = coll::Shape::binomial;
    bool forward_each_chunk = false;
    size_t chunk_bytes = 0;
    uint32_t chunks = 0;
    std::vector<BroadcastChild> children;
    size_t serving = 0;  // the child being sent to (one at a time)
    uint32_t receives_posted = 0;
    uint32_t received = 0;  // chunks 0..received-1 are complete
    std::vector<uint8_t> chunk_arrived;
    std::vector<ChunkEvent> receive_events;  // one per chunk
    std::vector<ChunkEvent> send_events;     // one per child
    bool delivered = false;
  };
  // MPI broadcasts: posted per communicator in command order.
  struct MpiBroadcast {
    Version* version = nullptr;
    bool root = false;
    int root_index = 0;
    size_t chunk_bytes = 0;
    bool copies_locally = false;  // bulk data, a member shares this node
    MPI_Comm comm = MPI_COMM_NULL;
    std::vector<MPI_Request> requests;  // one per chunk
    uint32_t posted = 0;                // chunks handed to MPI_Ibcast
    uint32_t completed = 0;             // chunks 0..completed-1 are done
  };
  struct MpiQueue {
    std::vector<int32_t> members;
    int tag = 0;
    MPI_Comm comm = MPI_COMM_NULL;
    std::deque<std::unique_ptr<MpiBroadcast>> waiting;
    MpiBroadcast* posting = nullptr;  // started, not all chunks posted yet
  };

  // Commands.
  void apply_batch(const char* data, size_t bytes, int source);
  void apply_task(const char* payload);
  void apply_send(const wire::Send& send);
  void apply_retire(uint64_t version);
  void apply_create(const wire::Create& create);
  void apply_fetch(const wire::Fetch& fetch);
  void apply_broadcast(const char* payload, size_t bytes, int source, bool root);
  void apply_mpi_broadcast(const char* payload, size_t bytes);
  // Broadcasts.
  Version* expect_version(uint64_t id, size_t bytes);
  void advance_broadcast(Broadcast* broadcast);
  void send_route(const Broadcast& broadcast, const BroadcastChild& child);
  void broadcast_chunk_done(ChunkEvent* event);
  void post_mpi_broadcasts();
  bool poll_mpi_broadcasts();
  // Posts the next chunks of `broadcast`, within the chunk window.
  void post_mpi_chunks(MpiBroadcast& broadcast);
  size_t mpi_queues_waiting() const;
  // Versions.
  Version* find(uint64_t id);
  Version* find_or_fail(uint64_t id, const char* why);
  Version* create_version(uint64_t id, size_t bytes);
  void version_ready(Version* version);
  void release_use(Version* version);
  void send_version(Version* version, int dest, int tag);
  void copy_to_host(Version* version, const wire::Fetch& fetch);
  // Tasks.
  void make_ready(Task* task);
  void dispatch_ready();
  void execute(Task* task);
  // The body returned: finish it, or (task-aware communication) post its
  // operations in channel order and finish once they complete.
  void body_finished(Task* task);
  void advance_channel(int channel);
  bool poll_task_requests();
  void finish(Task* task);
  void transfer_done(uint64_t cookie);
  // Loop pieces.
  bool drain_posted();
  bool receive_control();
  bool collect_finished();
  bool poll_transfers();
  bool run_one_task_here();
  void flush_completions(bool force);
  bool quiescent();

  comm::Transport& transport_;
  const int head_rank_;
  EngineListener* listener_ = nullptr;
  bool timing_ = true;
  comm::Wakeup wakeup_;
  comm::IdleBackoff backoff_;
  EngineStats stats_;

  // Posted batches (any thread) -> engine thread.
  std::mutex posted_mutex_;
  std::vector<std::pair<int, std::vector<char>>> posted_;
  std::vector<std::pair<int, std::vector<char>>> posted_taken_;

  // Engine-thread state. Node maps draw from a pool: no heap traffic per task.
  data::NodePool memory_;
  std::pmr::unordered_map<uint64_t, Version*> versions_{&memory_};
  std::vector<std::unique_ptr<Version>> version_storage_;
  std::vector<Version*> free_versions_;
  std::vector<std::unique_ptr<Task>> task_storage_;
  std::vector<Task*> free_tasks_;
  std::vector<std::unique_ptr<FetchReceive>> fetch_storage_;
  data::BufferPool buffers_;
  std::vector<Task*> newly_ready_;
  std::vector<Task*> local_ready_;  // used when there are no workers
  size_t local_ready_head_ = 0;
  std::vector<Task*> finished_;
  std::vector<uint64_t> transfers_done_;
  std::vector<char> control_in_;
  size_t running_ = 0;  // handed to workers, not yet finished
  bool shutdown_requested_ = false;

  // Completion records for the head.
  std::vector<wire::Completed> completed_local_;   // this rank's, when it is the head
  std::vector<wire::Completed> completed_remote_;  // decoded from other ranks' batches
  wire::BatchWriter completed_batch_;
  uint64_t completed_batch_since_ns_ = 0;

  std::unique_ptr<exec::WorkerPool<Task>> workers_;

  // Broadcasts.
  std::vector<std::unique_ptr<Broadcast>> broadcasts_;
  std::vector<coll::Child> split_;  // reused
  MPI_Comm collectives_ = MPI_COMM_NULL;
  bool engine_creates_comms_ = true;
  std::mutex comms_mutex_;
  std::map<std::vector<int32_t>, MPI_Comm> broadcast_comms_;  // guarded by comms_mutex_
  std::deque<MpiQueue> mpi_queues_;                           // a deque: queues never move
  std::vector<std::unique_ptr<MpiBroadcast>> mpi_active_;

  // Task-aware communication.
  std::vector<MPI_Comm> channel_comms_;
  std::vector<std::deque<Task*>> channel_queues_;  // submission order, until posted
  std::vector<Task*> waiting_requests_;
  std::unordered_set<std::string> names_;  // interned task names (stable addresses)
};

// Ends the job with a message naming the rank (used for task failures and
// protocol violations): prints "error: taskgrid: rank R: <message>", aborts.
[[noreturn]] void fail_job(int rank, const std::string& message);
void set_abort_transport(comm::Transport* transport);

}  // namespace taskgrid::runtime
