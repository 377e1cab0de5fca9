// The seam's Blocking on SimGrid S4U: a word's sleepers wait on a simulated
// condition variable (s4u::ConditionVariable), in simulated time, so that an
// engine, its workers and its planner sleep as actors and never in the
// kernel (which would stop the whole simulation).
//
// Actors run one at a time and switch only inside simcalls, so the table of
// words needs no lock of its own; each word's s4u::Mutex makes the check of
// the word and going to sleep one step against a waker (which takes it too).
#pragma once

#include <memory>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <unordered_map>

#include "comm/blocking.h"

namespace taskgrid::comm::s4u {

class S4uBlocking final : public Blocking {
 public:
  void wait(std::atomic<uint32_t>& word, uint32_t expected) override;
  void wait_for(std::atomic<uint32_t>& word, uint32_t expected, uint64_t timeout_ns) override;
  void wake_one(std::atomic<uint32_t>& word) override;
  void wake_all(std::atomic<uint32_t>& word) override;

 private:
  struct Sleepers {
    simgrid::s4u::MutexPtr mutex;
    simgrid::s4u::ConditionVariablePtr condition;
  };
  // The sleepers of `word`, made on first use (nullptr: none yet, when `make` is false).
  Sleepers* sleepers(const void* word, bool make);

  std::unordered_map<const void*, std::unique_ptr<Sleepers>> sleepers_;
};

}  // namespace taskgrid::comm::s4u
