// Why tasks went where they did (TASKGRID_STATS=1): per rank, the tasks placed
// by a rank hint, where their inputs already were, or away from them (the
// policy's choice: heft's earliest estimated finish, round_robin's turn, ...);
// for heft, how many were placed before their function's duration was
// measured, and per function what heft assumed and what it then measured.
// Counted only when the stats are printed (one branch per task otherwise).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/cost_model.h"

namespace taskgrid::plan {

class PlacementStats {
 public:
  explicit PlacementStats(int ranks) : ranks_(static_cast<size_t>(ranks)) {}

  // A task of `function` placed on `rank`. `estimate`: the duration heft
  // assumed for a function not measured yet (0: a hint or a measured one).
  void count(uint32_t function, int rank, bool hinted, bool inputs_there, double estimate);

  // The report's lines, each ending in '\n'. `policy`: the scheduler's name,
  // or "owner" (spmd); `costs`: what was measured by the end.
  std::string report(const char* policy, const sched::CostModel& costs) const;

 private:
  struct PerRank {
    uint64_t tasks = 0, hinted = 0, inputs_there = 0, uncalibrated = 0;
  };
  struct PerFunction {
    std::vector<uint64_t> tasks;  // per rank
    uint64_t uncalibrated = 0;
    double estimated_seconds = 0;  // summed over the uncalibrated ones
  };
  std::vector<PerRank> ranks_;
  std::unordered_map<uint32_t, PerFunction> functions_;
};

}  // namespace taskgrid::plan
