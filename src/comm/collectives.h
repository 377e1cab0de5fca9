// Blocking job-wide collectives for the runtime's bookkeeping: start-up
// figures, the spmd divergence check, statistics, the trace and the exit
// status. Not the data path (that is comm/transport.h).
//
// Why a seam of its own: these few calls are all the runtime needs of MPI
// outside the transport, and with them behind an interface only src/comm/
// includes <mpi.h> for them, and the divergence check, trace and options run
// over the in-process loopback (comm/loopback/collectives.h) in unit tests.
//
// Contract: every rank calls the same collectives in the same order, each
// rank from one thread at a time (the runtime calls them from the program's
// thread only). Sizes may differ between ranks only where a call says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace taskgrid::comm {

// The network figures of the cost model.
struct LinkEstimate {
  double latency_seconds = 0;
  double bandwidth_bytes_per_second = 0;
};

class Collectives {
 public:
  virtual ~Collectives() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // How many ranks share this rank's node (at least 1). Not collective.
  virtual int ranks_on_node() const = 0;
  // How many ranks of this node may run on this rank's cores, itself included
  // (at least 1): all of the node's where the launcher binds nothing, 1 where
  // it binds each rank to cores of its own (srun --cpu-bind, Open MPI's
  // binding). The default thread count divides this rank's cores by it.
  virtual int ranks_sharing_cores() const { return ranks_on_node(); }

  // In place: values[i] becomes the largest values[i] of all ranks. `count`
  // must be the same on every rank.
  virtual void allreduce_max(uint64_t* values, size_t count) = 0;
  // The same without blocking the caller: starts it and returns a test that
  // is true once `values` hold the result (call it until then; `values` must
  // stay put). The default runs the blocking one.
  virtual std::function<bool()> start_allreduce_max(uint64_t* values, size_t count) {
    allreduce_max(values, count);
    return [] { return true; };
  }
  // Every rank gives `bytes` bytes (sizes may differ). The root gets one entry
  // per rank, in rank order; the other ranks get an empty vector.
  virtual std::vector<std::vector<char>> gather(int root, const void* mine, size_t bytes) = 0;
  // The root's `bytes` bytes at `data` are copied into every rank's `data`.
  // `bytes` must be the same on every rank.
  virtual void broadcast(int root, void* data, size_t bytes) = 0;
  virtual void barrier() = 0;
  // Latency and bandwidth of the link between ranks 0 and 1, measured by a
  // ping-pong and given to every rank (spmd planners must all see the same
  // figures). With one rank there is nothing to measure: all zero.
  virtual LinkEstimate measure_link() = 0;

  // The largest of the ranks' values (a signed convenience over allreduce_max).
  int64_t max_over_ranks(int64_t value) {
    // Flipping the sign bit maps signed order onto unsigned order.
    constexpr uint64_t kSign = uint64_t{1} << 63;
    uint64_t word = static_cast<uint64_t>(value) ^ kSign;
    allreduce_max(&word, 1);
    return static_cast<int64_t>(word ^ kSign);
  }
};

}  // namespace taskgrid::comm
