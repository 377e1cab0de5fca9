// The failure detector: a rank that stops (SIGSTOP, a frozen node, a lost
// link) or a task that outlives its deadline ends the job with a message
// instead of a silent hang.
//
// The ranks form a ring: each sends a beat to its successor every
// timeout/5 and watches its predecessor. Silence for longer than the timeout
// (TASKGRID_FAILURE_TIMEOUT) makes the watcher tell every other rank and end
// the job; each survivor prints
//   error: taskgrid: rank S: rank R stopped responding (last heard T s ago)
// Why a thread of its own and not the engine's loop: with one task thread
// per rank the loop runs tasks inline, and a task may take minutes; beats
// must not depend on tasks being short. The thread sleeps between steps (50
// ms) and costs nothing per task.
//
// A finishing rank tells its successor that it leaves, so that ranks ending
// at different times are not mistaken for stopped ones.
//
// Beats share the links with the job's data: on a slow link a beat can wait
// seconds behind a large transfer from the same rank. So a predecessor with
// data still arriving here is allowed the time that data takes at
// kSlowestLinkBytesPerSecond on top of the timeout: a slow network is not a
// failure, and a rank that stops mid-transfer is still reported, later.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "comm/heartbeat.h"

namespace taskgrid::runtime {

struct WatchdogConfig {
  double timeout_seconds = 5;        // silence before a rank counts as stopped; 0: no ring
  double task_deadline_seconds = 0;  // 0: tasks may run for ever
  // Bytes this rank waits to receive from a rank (comm::Transport's
  // bytes_arriving_from; called on the watchdog's thread); empty: none.
  std::function<uint64_t(int rank)> bytes_arriving_from;
};

// The slowest link a transfer is expected to cross (16 Mbit/s): far below
// any cluster network, so the allowance never hides a stop for long.
inline constexpr uint64_t kSlowestLinkBytesPerSecond = 2'000'000;

// What this process can add about a rank that stopped responding (the
// OpenMP offload plugin names the device and its last kernel): "" for
// nothing. Set before start; called on the watchdog's thread.
using StoppedRankNote = std::string (*)(int rank);
void set_stopped_rank_note(StoppedRankNote note);

class Watchdog {
 public:
  // `link` may be null (one rank, or MPI without thread-multiple): then only
  // the task deadline is watched. `fail` ends the job; it does not return.
  Watchdog(std::unique_ptr<comm::HeartbeatLink> link, const WatchdogConfig& config,
           std::function<void(const std::string&)> fail);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the thread (steps every tick_ns() until leave()).
  void start();
  // Tells the successor that this rank leaves and stops the thread. Call
  // once every rank has passed the job's last collective.
  void leave();

  // One step at `now_ns`: sends a beat when due, reads what arrived, checks
  // the predecessor and the running tasks. Returns the message the job must
  // fail with, or "". Public for unit tests (no thread, any clock).
  std::string step(uint64_t now_ns);
  // Sends `leaving` to the successor (part of leave(); tests call it).
  void say_leaving();
  uint64_t tick_ns() const { return tick_ns_; }
  bool watching() const { return link_ != nullptr && timeout_ns_ > 0; }

 private:
  std::string check_ring(uint64_t now_ns);
  std::string check_tasks(uint64_t now_ns);
  void loop();

  std::unique_ptr<comm::HeartbeatLink> link_;
  std::function<void(const std::string&)> fail_;
  uint64_t timeout_ns_ = 0;
  uint64_t deadline_ns_ = 0;
  std::function<uint64_t(int)> bytes_arriving_from_;
  uint64_t period_ns_ = 0;
  uint64_t tick_ns_ = 50'000'000;
  int rank_ = 0;
  int predecessor_ = 0;
  int successor_ = 0;

  bool started_clock_ = false;
  uint64_t next_beat_ns_ = 0;
  uint64_t last_heard_ns_ = 0;
  bool predecessor_left_ = false;

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable stop_signal_;
  bool stopping_ = false;
};

}  // namespace taskgrid::runtime
