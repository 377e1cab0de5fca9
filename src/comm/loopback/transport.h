// N ranks in one process: a Transport for each, over shared in-memory
// queues. Runs the real planners and engines without MPI or mpiexec, for
// tests of the runtime's parts (many random graphs at 1-8 ranks in a second).
//
// Same matching rules as the MPI backend: data messages and chunk messages
// are two streams; within a stream, messages from one source with one tag
// arrive in the order they were sent. A send completes at once (the bytes are
// copied); a receive completes when its message is there. Control batches
// arrive whole, in order per sender.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "comm/transport.h"

namespace taskgrid::comm::loopback {

class LoopbackFabric {
 public:
  explicit LoopbackFabric(int ranks);
  ~LoopbackFabric();
  LoopbackFabric(const LoopbackFabric&) = delete;
  LoopbackFabric& operator=(const LoopbackFabric&) = delete;

  int size() const { return static_cast<int>(endpoints_.size()); }
  Transport& transport(int rank);
  // Data and chunk messages sent so far, every rank together.
  uint64_t data_messages() const { return data_messages_.load(); }
  // What every rank's transport gives as its Blocking (Transport::blocking):
  // the system's unless a test sets its own, before the engines are made.
  void set_blocking(Blocking& blocking) { blocking_ = &blocking; }
  // What every rank's transport gives as its cores (Transport::cores_per_rank;
  // 0, unknown, unless a test sets it before the engines are made): with
  // cores for them, an engine's idle workers spin instead of sleeping.
  void set_cores_per_rank(int cores) { cores_per_rank_ = cores; }

 private:
  class Endpoint;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::atomic<uint64_t> data_messages_{0};
  Blocking* blocking_ = &system_blocking();
  int cores_per_rank_ = 0;
  std::mutex groups_mutex_;
  std::map<std::vector<int32_t>, int> group_ids_;
  std::vector<std::vector<int32_t>> group_members_;  // per group id - 1
};

}  // namespace taskgrid::comm::loopback
