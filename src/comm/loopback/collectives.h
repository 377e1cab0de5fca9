// N ranks in one process: a Collectives for each (one thread per rank), for
// unit tests of the runtime's bookkeeping (divergence check, trace, options)
// without MPI or mpiexec.
//
// Every collective is "publish, meet, read, meet": each rank puts a pointer
// to its contribution in its slot, waits until all ranks have, reads what it
// needs from the others' slots, and waits again so that no contribution goes
// away while someone may still read it. The meetings are a generation
// barrier on one lock and condition, which sleep through a Blocking: the
// system's for threads, the S4U backend's for simulated ranks (actors).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "comm/blocking.h"
#include "comm/collectives.h"
#include "comm/futex_lock.h"

namespace taskgrid::comm::loopback {

class LoopbackCollectiveGroup {
 public:
  // `ranks_per_node`: what ranks_on_node() answers (0: all ranks).
  explicit LoopbackCollectiveGroup(int ranks, int ranks_per_node = 0,
                                   Blocking& blocking = system_blocking());
  ~LoopbackCollectiveGroup();
  LoopbackCollectiveGroup(const LoopbackCollectiveGroup&) = delete;
  LoopbackCollectiveGroup& operator=(const LoopbackCollectiveGroup&) = delete;

  int size() const { return static_cast<int>(members_.size()); }
  // Rank `rank`'s view; lives as long as the group.
  Collectives& collectives(int rank);
  // What measure_link() answers from now on, without measuring (a
  // simulator's figures: its clock does not run while ranks exchange here).
  void set_link(const LinkEstimate& link) { link_ = link; }

 private:
  class Member;
  struct Slot {
    const void* data = nullptr;
    size_t bytes = 0;
  };
  // Blocks until every rank has called it as often as this one.
  void meet();

  std::vector<std::unique_ptr<Member>> members_;
  std::vector<Slot> slots_;  // one per rank; written by its owner before meet()
  int ranks_per_node_;
  std::optional<LinkEstimate> link_;
  FutexLock mutex_;
  Condition met_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

}  // namespace taskgrid::comm::loopback
