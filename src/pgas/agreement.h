// The check every PGAS collective starts with: each member sends a record of
// the call it is making to the set's root, which compares them and answers
// with a verdict. It costs two point-to-point hops and buys three things:
//  - a member calling something else (another collective, other arguments,
//    finalize) ends the job at once with a message naming both calls;
//  - a member that never comes ends the job after the timeout with the ranks
//    that did not join, instead of a hang;
//  - values the call must agree on (e.g. the free space below the other arena
//    on every rank) are reduced on the way.
// Waiting polls with MPI_Test and backs off, so ranks sharing cores do not
// take them from the ranks still computing.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace taskgrid::pgas {

enum class CallKind : uint32_t {
  init = 1,
  finalize,
  alloc,
  alloc_asymmetric,
  alloc_asymmetric_publish,
  free,
  barrier,
  broadcast,
  reduce,
  allreduce,
  create_group,
  split,
  merge,
  free_group,
  device_broadcast,
  device_allreduce,
  device_path,  // choosing a group's device collective path (once per group)
};
const char* call_name(CallKind kind);

// What a member says about the call it is making. `args` must be equal on
// every member; `reduced` is combined (min and max, with the ranks holding them).
struct CallRecord {
  CallKind kind = CallKind::barrier;
  uint32_t reserved = 0;
  uint64_t sequence = 0;  // the member's count of calls on this set
  uint64_t args[4] = {0, 0, 0, 0};
  uint64_t reduced = 0;
};

struct AgreedValues {
  uint64_t min = 0;
  int min_rank = -1;  // world rank holding the minimum
  uint64_t max = 0;
  int max_rank = -1;
};

class Agreement {
 public:
  // `comm` carries the check's messages; `members` are the set's ranks in
  // `comm` (the first is the root) and `world_ranks` the same ranks in
  // MPI_COMM_WORLD, for messages. `label` names the set ("world", "group {0,2}").
  Agreement(MPI_Comm comm, std::vector<int> members, std::vector<int> world_ranks,
            std::string label, double timeout_seconds);

  // Runs the check for the calling member (its rank in `comm` must be one of
  // `members`). Ends the job on a mismatch or a timeout; returns the reduced values.
  AgreedValues agree(CallRecord record, const std::string& description);

 private:
  AgreedValues run_root(const CallRecord& mine, const std::string& description);
  AgreedValues run_member(const CallRecord& mine, const std::string& description);

  MPI_Comm comm_;
  std::vector<int> members_;
  std::vector<int> world_ranks_;
  std::string label_;
  double timeout_seconds_;
  int my_index_ = -1;
  uint64_t sequence_ = 0;
};

// Ends the job: "error: taskgrid: rank R: <message>" on stderr, then MPI_Abort.
[[noreturn]] void fail_job(const std::string& message);

// Backs off in a polling loop that has been idle `idle_rounds` polls and
// `idle_seconds`: spins, then yields, and sleeps only after a long wait.
// Yielding keeps MPI polled: through MPI RMA (TASKGRID_PGAS_SHM=0) operations
// aimed at this rank progress only while it polls (MPICH ch4), and a 50 us
// sleep per poll made each 8-byte put to a rank waiting in a barrier take
// 125 us instead of 8 us. A yield still gives the core to a rank computing on it.
void back_off(uint64_t idle_rounds, double idle_seconds);

// Polls until `done()` is true or MPI_Wtime() passes `deadline_seconds`; false on timeout.
template <typename Done>
bool poll_until(Done done, double deadline_seconds) {
  const double start = MPI_Wtime();
  double now = start;
  for (uint64_t round = 0;; ++round) {
    if (done()) return true;
    if ((round & 63) == 63) {
      now = MPI_Wtime();
      if (now > deadline_seconds) return done();
    }
    back_off(round, now - start);
  }
}

}  // namespace taskgrid::pgas
