// Placement policies (TASKGRID_SCHEDULER): which rank runs a task.
//   round_robin  ranks in turn
//   locality     the rank already holding most of the task's input bytes
//   heft         earliest estimated finish time over every executor of
//                every rank: its CPU threads and each of its devices'
//                streams (cost model: durations measured per function and
//                per kind of executor, latency, bandwidth, host<->device
//                copies; per-executor availability). It also picks the
//                device (or the CPU) of a task that could run on either;
//                a function's first few such tasks go to devices, to measure
//                them there (calibration). A function not measured yet is
//                assumed to work through its input bytes at 1 GB/s
//                (estimated_task_seconds).
// Without devices, a task's placement by locality or heft costs O(log ranks)
// plus its inputs' holders, not O(ranks) (placement.cpp, RankMinima).
// An explicit rank hint in TaskOptions overrides every policy; a device hint
// restricts heft to that device (or to the CPUs).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/directory.h"
#include "sched/cost_model.h"
#include "taskgrid/taskgrid.hpp"

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
  // Which implementations the function has, and TaskOptions::device.
  bool has_cpu = true;
  bool has_device = false;
  int device_hint = TaskOptions::any_device;
};

// The devices of each rank, for heft (empty: no rank has any). Each device
// counts as `streams_per_device` executors, as a rank's CPU as its threads.
struct DeviceSlots {
  std::vector<int> devices_per_rank;
  int streams_per_device = 1;
  // The host<->device link measured at start-up, the slowest rank's
  // (bandwidth 0: not measured; CostModel assumes one).
  double link_latency_seconds = 0;
  double link_bandwidth = 0;
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
  // The comm::wire::Task::device of the last placed task: heft names the device
  // or TaskOptions::on_cpu where the rank has devices; the others keep
  // `hint` (the rank's engine then chooses).
  virtual int chosen_device(int hint) const { return hint; }
};

// The duration heft books for a task on `executor`: its cost hint, else the
// mean measured for its function there, else (never measured: typically
// every task of a graph submitted before its first task completes) its input
// bytes at CostModel::kUnknownTaskBytesPerSecond, at least
// CostModel::kUnknownTaskSeconds. A small fixed default let any sizeable
// input's transfer outweigh running elsewhere and kept a whole uncalibrated
// graph on the rank holding its data, even where the network is fast; sized
// by its data, a task moves where the measured network carries the data
// faster than the task is assumed to use it, and stays put where it does not.
double estimated_task_seconds(const CostModel& costs, const PlacementRequest& request,
                              Executor executor = Executor::cpu);
// Whether estimated_task_seconds() assumes (no cost hint, nothing measured).
bool uncalibrated(const CostModel& costs, const PlacementRequest& request,
                  Executor executor = Executor::cpu);

// The placement policies (TASKGRID_SCHEDULER), parsed once by the runtime's
// settings (runtime/options.cpp).
enum class Scheduler : uint8_t { round_robin, locality, heft };
const char* scheduler_name(Scheduler scheduler);
// nullopt for a name that is no scheduler.
std::optional<Scheduler> parse_scheduler(std::string_view name);
// heft weighs the measured durations of earlier tasks: the engines must time
// every task for it (one clock read per task); the others need no durations.
bool needs_task_durations(Scheduler scheduler);

std::unique_ptr<PlacementPolicy> make_policy(Scheduler scheduler, int ranks, int threads_per_rank,
                                             const CostModel& costs,
                                             const DeviceSlots& devices = {});

}  // namespace taskgrid::sched
