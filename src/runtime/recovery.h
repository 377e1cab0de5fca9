// Checkpoints at a consistent cut, and restart where the job stopped
// (TASKGRID_CHECKPOINT, TASKGRID_RESTART; docs/guide.md, "Checkpoint and
// restart").
//
// The program's calls that make the submission sequence (enter_data,
// submit, fetch, exit_data, release, wait, wait_all) are numbered 1, 2, ...
// on every rank that runs the program. Checkpoint K is the state after the
// first K of them: every live handle's version at that point. It is taken
// by the data-flow graph itself, without stopping the program: at K the
// runtime submits, per live handle, a task that reads that version and
// appends it to its holder's file (the engine keeps a version until its
// readers are done, so later writers go on); per rank a task that seals
// the rank's file; and on rank 0 a task that writes the manifest once all
// are durable. The tasks of a rank chain through one small "seal" handle
// per rank, which also carries each rank's outcome to rank 0.
//
// A restarted job (TASKGRID_RESTART=DIR, same program, same rank count)
// runs main from the start: calls up to K are replayed (handles are made,
// released, but no task runs; a fetch returns the bytes it returned in the
// first run, from the checkpoint's replay log), the sequence's hash is
// checked against the manifest's at K, and tasks restore every live
// handle's version on the rank that wrote it. From there the job runs on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/checkpoint_file.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::plan {
class Planner;
}

namespace taskgrid::runtime {

struct RecoverySettings {
  std::string checkpoint_dir;  // TASKGRID_CHECKPOINT ("": no checkpoints)
  uint64_t every = 0;          // TASKGRID_CHECKPOINT_EVERY: submissions between checkpoints
  int keep = 1;                // TASKGRID_CHECKPOINT_KEEP: complete checkpoints kept
  std::string restart_dir;     // TASKGRID_RESTART ("": a fresh start)
  bool enabled() const { return !checkpoint_dir.empty() || !restart_dir.empty(); }
};

// Every rank, right after MPI starts (cluster mode's serving ranks too:
// they run the checkpoint's tasks). With a restart, reads the newest
// complete checkpoint's manifest and this rank's file and checks them
// against this job; returns "" or what is wrong (the caller stops the job
// on every rank with it). `restart_point`: K, or 0 for a fresh start.
std::string prepare_recovery(const RecoverySettings& settings, int rank, int ranks, Mode mode,
                             uint64_t& restart_point);

// The program's side, on every rank that runs the program.
class Recovery {
 public:
  Recovery(plan::Planner& planner, int rank, int ranks, Mode mode);

  // Each call of the sequence goes through one of these before the planner.
  // True: the call goes on to the planner; false: it is replayed (done).
  // enter_data always goes on (the handle must exist): entering() says
  // whether its bytes are copied, entered() records it.
  bool entering(size_t bytes, int owner);
  void entered(DataHandle handle, void* host, size_t bytes);
  bool submitting(FunctionId function, const DataAccess* accesses, size_t count, const void* args,
                  size_t args_size, int channel);
  // fetch / exit_data to `to` (Planner::kHome, kAllRanks or a rank).
  bool fetching(DataHandle handle, int to, bool release);
  void fetched(DataHandle handle, int to, bool release);
  void releasing(DataHandle handle);
  bool waiting(uint64_t handle_or_zero);
  // At finish(): a restart whose program ended before K is an error.
  void finishing();

 private:
  // Numbers the call, takes the checkpoint or restores at a boundary, and
  // adds the call to the sequence's hash. True unless the call is replayed.
  bool begin(uint64_t kind, uint64_t a, uint64_t b);
  void mix(uint64_t word);
  void mix_bytes(const void* data, size_t bytes);
  bool receives_here(uint64_t handle, int to) const;
  void take_checkpoint(uint64_t checkpoint);
  void restore();
  [[noreturn]] void diverged(const std::string& what) const;

  plan::Planner& planner_;
  const int rank_;
  const int ranks_;
  const Mode mode_;
  uint64_t every_ = 0;
  // The next checkpoint is due at this call (a multiple of every_), and
  // taken at the first call from there that does not follow a task of a
  // task-aware channel: a send and its receive are consecutive tasks, and
  // a cut between them would replay the send but run the receive.
  uint64_t next_checkpoint_ = 0;
  bool after_channel_task_ = false;
  uint64_t calls_ = 0;
  uint64_t restart_point_ = 0;  // K; 0: no restart
  uint64_t sequence_hash_ = 14695981039346656037ull;
  struct Live {
    void* host;
    size_t bytes;
    int owner;
  };
  std::unordered_map<uint64_t, Live> live_;  // the program's handles, not yet released
  // What the program observed (fetches into this rank's buffers), for the
  // replay log of every later checkpoint.
  std::vector<RankFileContents::Observation> observations_;
  size_t replayed_ = 0;  // observations of the restart's log used so far
  // One per rank: orders that rank's checkpoint tasks and carries its
  // outcome to rank 0 (SealStatus bytes).
  std::vector<DataHandle> seals_;
  std::vector<char> seal_buffers_;
};

}  // namespace taskgrid::runtime
