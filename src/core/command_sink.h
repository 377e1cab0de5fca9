// The seam between the planner and whatever carries out its commands: the
// per-rank engine in a job, a fake in the planner's unit tests and benchmark.
// The planner depends on this header, not on the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "comm/blocking.h"
#include "comm/wire.h"

namespace taskgrid::core {

// Optional, offered by a sink that runs tasks in the planner's process: the
// tasks of the planner's own rank are built in place, in the record the
// engine will run, instead of being encoded into a `task` command and decoded
// again; the batch then carries a comm::wire::LocalTask with the record's address,
// in order with the other commands. Called by one thread at a time (under
// the planner's lock).
class LocalTaskBuilder {
 public:
  struct Slot {
    void* record;                  // for comm::wire::LocalTask
    comm::wire::Access* accesses;  // task.num_accesses of them, for the caller to fill
  };
  // A record holding `task`'s fields, a copy of its `task.args_bytes` bytes
  // of arguments and of its name (nullptr: the function's).
  virtual Slot open(const comm::wire::Task& task, const void* args, const char* name) = 0;

 protected:
  ~LocalTaskBuilder() = default;
};

// Where the planner sends its commands.
class CommandSink {
 public:
  virtual ~CommandSink() = default;
  // Thread-safe: a command batch (comm/wire.h) for rank `dest`; batches for
  // one rank are applied in the order they are posted. Returns an empty buffer
  // for the caller's next batch: one the sink is done with, capacity kept, so
  // that a steady stream of batches allocates nothing (none: a plain empty one).
  virtual std::vector<char> post(int dest, std::vector<char>&& batch) = 0;
  // spmd mode, MPI broadcasts: set up the broadcast group of `members`
  // (ascending ranks) now, at a point of the program every member reaches
  // (collective over the members, blocking; `tag` tells concurrent set-ups apart).
  virtual void prepare_broadcast_group(const std::vector<int32_t>& members, int tag) = 0;
  // The thread model: a program thread that must wait runs the engine's
  // progress loop itself until `done()` (called without the caller's locks)
  // holds, instead of sleeping while another thread does the work. Returns
  // false, at once, when this sink cannot be driven by the caller; the
  // caller then waits for the listener's callbacks.
  virtual bool drive_until(const std::function<bool()>& done) {
    (void)done;
    return false;
  }
  // Where drive_until cannot (the engine thread drives): waits until
  // `done()` holds, polling it with pauses that give the core back, in the
  // transport seam's time (a simulated engine's waiter sleeps in simulated
  // time). The default, for sinks without a transport, yields.
  virtual void wait_while_driven(const std::function<bool()>& done) {
    while (!done()) std::this_thread::yield();
  }
  // Called by a submitting program thread now and then, without the
  // caller's locks: a chance to run one pass of the engine's loop, so that a
  // program that submits far ahead also executes and communicates on its own
  // thread instead of waking the engine thread beside it.
  virtual void help() {}
  // How the planner's threads block (its lock and the waits of a program
  // that does not drive): the engine's transport seam, so that a simulated
  // engine and its planner wait in simulated time.
  virtual comm::Blocking& blocking() { return comm::system_blocking(); }
  // The builder of this rank's tasks (see LocalTaskBuilder); nullptr: every
  // task is encoded (a sink in another process, or a test's).
  virtual LocalTaskBuilder* local_task_builder() { return nullptr; }
};

// What the engine reports to the planner that plans for it (the head in
// cluster mode, every rank's own planner in spmd mode).
class EngineListener {
 public:
  virtual ~EngineListener() = default;
  virtual void on_completed(const comm::wire::Completed* records, size_t count) = 0;
  virtual void on_fetched(uint64_t version) = 0;
  // Called from the engine loop now and then: a chance to flush batches.
  virtual void on_poll() {}
};

}  // namespace taskgrid::core
