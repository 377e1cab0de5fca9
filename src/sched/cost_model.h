// What the planner knows about time: measured task durations per function
// (moving average of completions) and the network's latency and bandwidth
// (calibrated by a ping-pong at start-up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace taskgrid::sched {

class CostModel {
 public:
  CostModel(double latency_seconds, double bandwidth_bytes_per_second)
      : latency_(latency_seconds), bandwidth_(bandwidth_bytes_per_second) {}
  // Policies keep a reference to their model (and it one into its own map).
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  // Estimated run time of a task of `function` (cost hint wins when > 0).
  double task_seconds(uint32_t function, double cost_hint) const;
  void record_duration(uint32_t function, double seconds);
  double transfer_seconds(size_t bytes) const {
    return latency_ + static_cast<double>(bytes) / bandwidth_;
  }
  double latency() const { return latency_; }
  double bandwidth() const { return bandwidth_; }

  // Used for functions never seen complete: small but not zero, so that
  // unknown tasks still spread over the ranks.
  static constexpr double kUnknownTaskSeconds = 10e-6;

 private:
  double latency_;
  double bandwidth_;
  std::unordered_map<uint32_t, double> mean_seconds_;
  // The mean record_duration() updated last: consecutive tasks mostly run
  // the same function (a map's nodes never move, and none is erased).
  uint32_t last_function_ = 0;
  double* last_mean_ = nullptr;
};

}  // namespace taskgrid::sched
