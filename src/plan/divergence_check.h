// spmd mode is only correct when every rank submits the same sequence. Each
// submission is folded straight into a running hash; at check points (every
// `interval` submissions, and whenever the program waits, fetches or
// finishes) the ranks compare (count, hash) with one all-reduce. A check
// point is collective, so every rank must reach the same one: waits and the
// interval are both points in the submission sequence, which is exactly what
// has to agree.
//
// Why a ring: submitting is the hot path (about 100 instructions here for a
// task with four accesses and 24 argument bytes, against some 265 when every
// submission was copied into a growing vector), so nothing is allocated per
// task. A fixed ring keeps, per submission since the last agreeing check, the
// running hash after it and a compact record (head, shape, first accesses).
// On a mismatch the ranks compare the running hashes position by position:
// the first position where they differ is the first differing submission,
// and every rank describes its own from the ring. The interval is capped at
// kMaxInterval so that a window always fits; only many enter_data calls in a
// row (which are no check points) can outrun the ring, and then the report
// says that the difference may be earlier.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "comm/collectives.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::plan {

class DivergenceCheck {
 public:
  static constexpr uint64_t kMaxInterval = 8192;

  // How a rank waits for the ranks' comparison: given a test, returns once
  // it is true. The planner's runs the engine's loop meanwhile, so that a
  // rank that reached a check point first executes tasks instead of taking
  // a core to poll MPI (a blocking all-reduce here cost miniAMR's spmd run
  // 40% of its time at 2 ranks on 2 cores). The default yields.
  using Waiter = std::function<void(const std::function<bool()>&)>;

  // `collectives` must outlive the check; only check() and compare() use it.
  DivergenceCheck(comm::Collectives& collectives, uint64_t interval);
  void set_waiter(Waiter waiter) { waiter_ = std::move(waiter); }
  ~DivergenceCheck();
  DivergenceCheck(const DivergenceCheck&) = delete;
  DivergenceCheck& operator=(const DivergenceCheck&) = delete;

  // `args_bytes` is below 2^31 (the planner allows 64 KiB).
  void record_task(uint32_t function, const DataAccess* accesses, size_t count, int rank_hint,
                   const void* args, size_t args_bytes);
  void record_data(size_t bytes, int owner);
  // A fetch of `handle` into `to`'s host buffer (Planner::kHome, kAllRanks or a rank).
  void record_fetch(uint64_t handle, int to);
  bool due() const { return count_ - window_start_ >= interval_; }
  // Collective. Returns when all ranks agree; otherwise ends the job.
  void check();
  // Collective, check() without ending the job: nothing when all ranks agree;
  // otherwise rank 0 gets the report naming every rank's first differing
  // submission and the other ranks an empty string.
  std::optional<std::string> compare();

 private:
  // A call other than a task (enter_data, fetch): its head and marked shape.
  void record_call(uint64_t head, uint64_t shape);
  // One cache line, written with plain stores on every submission.
  struct alignas(64) Record {
    uint64_t hash;      // the running hash after this submission
    uint64_t head;      // function (0 for enter_data) | rank hint or owner << 32
    uint64_t shape;     // accesses | argument bytes << 32, or data bytes | kData
    uint64_t words[4];  // the first accesses, handle * 4 + mode (3 are reported)
  };
  std::string report();
  std::string describe(uint64_t position) const;

  comm::Collectives& collectives_;
  Waiter waiter_;
  uint64_t interval_;
  uint64_t mask_;       // ring capacity - 1 (a power of two)
  uint64_t count_ = 0;  // submissions since start
  // Over all of them. Not 0 at the start: a zero factor would zero the first
  // product (see mix() in the .cpp), whatever the submission.
  uint64_t hash_ = 0x243F6A8885A308D3ULL;
  uint64_t window_start_ = 0;       // count_ at the last agreeing check
  std::unique_ptr<Record[]> ring_;  // position p at ring_[p & mask_]
};

}  // namespace taskgrid::plan
