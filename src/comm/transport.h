// The seam between the engine and the network. MPI is the production
// backend; a simulator backend (SimGrid S4U) can implement the same calls.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "comm/blocking.h"
#include "comm/idle_backoff.h"

namespace taskgrid::comm {

// Messages from this size on count as bulk data (see copying_bulk_data()):
// above every eager limit in common use, so they need both sides' polling.
inline constexpr size_t kBulkBytes = size_t{64} << 10;

// A thread started through the seam (Transport::start_thread).
class Thread {
 public:
  virtual ~Thread() = default;
  virtual void join() = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Largest tag usable for data transfers.
  virtual int max_tag() const = 0;

  // Control batches: sent asynchronously (the transport keeps the buffer
  // until the send completes); received whole, any size, any source.
  virtual void send_control(int dest, std::vector<char>&& batch) = 0;
  virtual bool receive_control(int& source, std::vector<char>& batch) = 0;

  // Data transfers of any size (split into chunks underneath). `cookie` is
  // returned by poll() when the transfer completes.
  virtual void send_data(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) = 0;
  virtual void receive_data(int source, int tag, void* data, size_t bytes, uint64_t cookie) = 0;

  // How send_data cuts a transfer of `bytes`: each piece but the last is
  // data_piece_bytes(bytes) long (`bytes` itself: one message). A sender
  // that has the data piece by piece (a version copied off a device) sends
  // each with send_data_piece as it comes, in order; the receiver posts
  // receive_data for the whole, as for send_data. Each piece has its cookie.
  virtual size_t data_piece_bytes(size_t bytes) const { return bytes; }
  virtual void send_data_piece(int dest, int tag, const void* data, size_t bytes, size_t total,
                               uint64_t cookie) {
    (void)total;  // one piece: the whole transfer
    send_data(dest, tag, data, bytes, cookie);
  }
  // Lowers the size above which transfers are cut into pieces (devices: so
  // that a version's pieces are sent while the next ones are copied to host).
  // Job-wide, before the first transfer.
  virtual void set_max_chunk(size_t bytes) { (void)bytes; }

  // One message of a stream of chunks (at most max_chunk() bytes). Receives
  // are posted at once and matched in posting order, so successive chunks on
  // one (peer, tag) land in the order they were sent. Each has its cookie.
  virtual void send_chunk(int dest, int tag, const void* data, size_t bytes, uint64_t cookie) = 0;
  virtual void receive_chunk(int source, int tag, void* data, size_t bytes, uint64_t cookie) = 0;
  virtual size_t max_chunk() const = 0;

  // Broadcast groups (the `mpi` broadcast strategy): a set of ranks that
  // broadcast with the transport's own collective. Creating one is collective
  // over its members and blocks until all joined; it may be called on a thread
  // other than the polling one (`tag` tells concurrent creations apart).
  // `members` are ascending ranks, this rank among them. Ids are > 0.
  virtual int create_group(const std::vector<int32_t>& members, int tag) = 0;
  // The group of `members` if it was created, else 0. Thread-safe.
  virtual int find_group(const std::vector<int32_t>& members) = 0;
  // One chunk of a broadcast from member index `root` of `group`: every
  // member posts a group's chunks in the same order; `cookie` comes back from
  // poll() when this rank's part is done.
  virtual void broadcast_chunk(int group, int root, void* data, size_t bytes, uint64_t cookie) = 0;

  // Completes what it can without blocking; appends finished data cookies.
  // Returns true when anything completed (control sends included).
  virtual bool poll(std::vector<uint64_t>& finished) = 0;
  // Requests still in flight (control sends included).
  virtual size_t pending() const = 0;
  // Whether a large message to or from a rank on this node is in flight (or
  // a receive for one is posted). MPI libraries copy such messages through
  // shared memory only while both processes poll, so the engine must not
  // sleep then. Between nodes the network moves the bytes, and polling
  // every few hundred microseconds keeps a link busy.
  virtual bool copying_bulk_data() const = 0;
  // Whether `rank` shares this rank's node (shared memory).
  virtual bool same_node(int rank) const = 0;
  // Whether `bytes` to or from `peer` are bulk data copied within the node.
  bool copied_locally(int peer, size_t bytes) const {
    return bytes >= kBulkBytes && peer != rank() && same_node(peer);
  }

  // The engine's clock (batch ages, a pass's time budget): a simulator
  // backend gives its simulated time.
  virtual uint64_t now_ns() const {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }

  // How a driving thread with nothing to do waits: spin, yield, then sleep
  // on `wakeup` (comm/idle_backoff.h). A simulator backend waits in
  // simulated time instead.
  virtual void idle(IdleBackoff& backoff, Wakeup& wakeup, bool streaming) {
    backoff.idle(wakeup, streaming);
  }
  // Where the engine's Wakeup keeps its words when other processes can ring
  // it (the MPI transport's doorbells: a send to a sleeping rank of the node
  // wakes it at once); nullptr: in the engine.
  virtual WakeupWords* doorbell() { return nullptr; }
  // Whether this rank's node runs more ranks than it has cores: a rank woken
  // there may take the core of one with work.
  virtual bool oversubscribed() const { return false; }
  // Cores this rank can keep busy without taking another rank's: the cores
  // it may run on, shared among its node's ranks (0: unknown). Where its
  // threads fit, an idle task thread may spin a little before it sleeps.
  virtual int cores_per_rank() const { return 0; }
  // Bytes of data on their way from `peer` to this rank: asked for and not
  // yet received in full, or being received before they were asked for. Any
  // thread may ask (the failure detector does): a peer whose large transfer
  // to this rank is on the wire can seem silent, its heartbeats queued behind
  // that data on a slow link.
  virtual uint64_t bytes_arriving_from(int peer) const {
    (void)peer;
    return 0;
  }

  // The thread primitives the engine uses beside the clock and idle():
  // starting its threads (the task workers; the engine thread beside a
  // program), sleeping, and blocking until another thread signals
  // (blocking.h: the engine's, the workers' and the planner's locks and
  // conditions sleep and wake only through it). A simulator backend makes
  // them its actors, simulated sleeps and simulated waits.
  virtual Blocking& blocking() { return system_blocking(); }
  virtual std::unique_ptr<Thread> start_thread(std::function<void()> body) {
    class StdThread final : public Thread {
     public:
      explicit StdThread(std::function<void()> body) : thread_(std::move(body)) {}
      ~StdThread() override {
        if (thread_.joinable()) thread_.join();
      }
      void join() override {
        if (thread_.joinable()) thread_.join();
      }

     private:
      std::thread thread_;
    };
    return std::make_unique<StdThread>(std::move(body));
  }
  virtual void sleep_ns(uint64_t ns) { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); }
  // Ends the whole job at once (after a fatal error on this rank).
  [[noreturn]] virtual void abort_job(int status) = 0;
};

}  // namespace taskgrid::comm
