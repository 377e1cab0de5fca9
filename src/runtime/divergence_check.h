// spmd mode is only correct when every rank submits the same sequence. Each
// submission is folded into a running hash; at check points (every
// `interval` submissions, and whenever the program waits, fetches or
// finishes) the ranks compare (count, hash) with one all-reduce on a private
// communicator. On a mismatch they compare their recent submissions one by
// one and stop with a message that names the first differing task on every
// rank. A check point is collective, so every rank must reach the same one:
// waits and the interval are both points in the submission sequence, which
// is exactly what has to agree.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::runtime {

class DivergenceCheck {
 public:
  DivergenceCheck(MPI_Comm comm, uint64_t interval);
  ~DivergenceCheck();
  DivergenceCheck(const DivergenceCheck&) = delete;
  DivergenceCheck& operator=(const DivergenceCheck&) = delete;

  void record_task(uint32_t function, const DataAccess* accesses, size_t count, int rank_hint,
                   const void* args, size_t args_bytes);
  void record_data(size_t bytes, int owner);
  bool due() const { return since_check_ >= interval_; }
  // Collective. Returns when all ranks agree; otherwise ends the job.
  void check();

 private:
  struct Submission {
    uint64_t digest;
    uint32_t function;  // 0 for enter_data
    uint32_t accesses;
    uint64_t first_handles[3];
    uint8_t first_modes[3];
    int32_t hint;
    uint64_t bytes;  // args bytes, or data bytes
  };
  void fold(const Submission& s);
  [[noreturn]] void report_divergence();
  std::string describe(size_t index) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  uint64_t interval_;
  uint64_t count_ = 0;  // submissions since start
  uint64_t hash_ = 0;
  uint64_t since_check_ = 0;
  uint64_t window_start_ = 0;       // count_ at the last agreeing check
  std::vector<Submission> window_;  // submissions since then
};

}  // namespace taskgrid::runtime
