// Placement policies (TASKGRID_SCHEDULER): which rank runs a task.
//   round_robin  ranks in turn
//   locality     the rank already holding most of the task's input bytes
//   heft         earliest estimated finish time (cost model: durations,
//                latency, bandwidth; per-rank worker availability)
// An explicit rank hint in TaskOptions overrides every policy.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/directory.h"
#include "sched/cost_model.h"

namespace taskgrid::sched {

// One input of the task being placed.
struct PlacedInput {
  const data::VersionInfo* version;  // holders, size, ready estimate
};

struct PlacementRequest {
  uint32_t function = 0;
  double cost_hint = 0;
  const PlacedInput* inputs = nullptr;
  size_t num_inputs = 0;
  double now = 0;  // planner clock, seconds
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual const char* name() const = 0;
  virtual int place(const PlacementRequest& request) = 0;
  // Told where every task went (hinted ones too) and when each finishes.
  virtual void placed(const PlacementRequest&, int /*rank*/) {}
  // place() then placed() with its answer (an unhinted task), in one go
  // where a policy can book what it has just computed.
  virtual int place_and_book(const PlacementRequest& request) {
    const int rank = place(request);
    placed(request, rank);
    return rank;
  }
  virtual void completed(int /*rank*/) {}
  // Estimated finish time of the last placed task (heft only; others 0).
  virtual double estimated_finish() const { return 0; }
};

// Throws taskgrid::Error naming the valid choices for an unknown name.
std::unique_ptr<PlacementPolicy> make_policy(const std::string& name, int ranks,
                                             int threads_per_rank, const CostModel& costs);

}  // namespace taskgrid::sched
