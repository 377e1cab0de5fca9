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
  uint64_t calls() const { return sequence_; }

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

// Polls until `done()` is true or `deadline_seconds` (MPI_Wtime) passes; false on timeout.
template <typename Done>
bool poll_until(Done done, double deadline_seconds);
// Backs off in a polling loop: spins, then yields, then sleeps briefly.
void back_off(uint64_t idle_rounds);

template <typename Done>
bool poll_until(Done done, double deadline_seconds) {
  for (uint64_t round = 0;; ++round) {
    if (done()) return true;
    if ((round & 63) == 63 && MPI_Wtime() > deadline_seconds) return done();
    back_off(round);
  }
}

}  // namespace taskgrid::pgas
