// What the planner knows about time: measured task durations per function
// and per kind of executor (CPU thread or device: the same function takes
// different times on each; moving average of completions), the network's
// latency and bandwidth (calibrated by a ping-pong at start-up), and the
// host<->device link (measured at start-up where ranks have devices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>

namespace taskgrid::sched {

enum class Executor : uint8_t { cpu = 0, device = 1 };

class CostModel {
 public:
  CostModel(double latency_seconds, double bandwidth_bytes_per_second)
      : latency_(latency_seconds), bandwidth_(bandwidth_bytes_per_second) {}
  // Policies keep a reference to their model (and it one into its own map).
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  // Estimated run time of a task of `function` on `executor` (cost hint wins when > 0).
  double task_seconds(uint32_t function, double cost_hint, Executor executor = Executor::cpu) const;
  void record_duration(uint32_t function, double seconds, Executor executor = Executor::cpu);
  // Whether a duration of `function` on `executor` was recorded.
  bool measured(uint32_t function, Executor executor) const {
    return mean_seconds_.count(key(function, executor)) != 0;
  }
  // The mean duration recorded for `function` on `executor`; nullopt before any.
  std::optional<double> measured_seconds(uint32_t function,
                                         Executor executor = Executor::cpu) const;
  double transfer_seconds(size_t bytes) const {
    return latency_ + static_cast<double>(bytes) / bandwidth_;
  }
  // A copy between a rank's host memory and one of its devices, or between
  // two of its devices: the link measured at start-up (set_device_link),
  // else an assumed PCIe-class one.
  double device_transfer_seconds(size_t bytes) const {
    return device_latency_ + static_cast<double>(bytes) / device_bandwidth_;
  }
  void set_device_link(double latency_seconds, double bandwidth_bytes_per_second) {
    if (bandwidth_bytes_per_second <= 0) return;
    device_latency_ = latency_seconds;
    device_bandwidth_ = bandwidth_bytes_per_second;
  }
  double latency() const { return latency_; }
  double bandwidth() const { return bandwidth_; }

  // Used for functions never seen complete: small but not zero, so that
  // unknown tasks still spread over the ranks (and try each executor). heft
  // assumes more where a task has inputs (sched::estimated_task_seconds).
  static constexpr double kUnknownTaskSeconds = 10e-6;
  // heft's assumption for a function not measured yet: its tasks work
  // through their input bytes at this rate (a pass over the data with some
  // arithmetic: a 128x128 dgemm on three tiles is 0.4 ms at it, 0.15 ms
  // measured), so that moving a task pays where the network moves bytes
  // faster than the task is assumed to process them.
  static constexpr double kUnknownTaskBytesPerSecond = 1e9;
  // The host<->device link until one is measured.
  static constexpr double kDeviceLatencySeconds = 10e-6;
  static constexpr double kDeviceBandwidth = 16e9;

 private:
  static uint64_t key(uint32_t function, Executor executor) {
    return uint64_t{function} << 1 | static_cast<uint64_t>(executor);
  }
  double latency_;
  double bandwidth_;
  double device_latency_ = kDeviceLatencySeconds;
  double device_bandwidth_ = kDeviceBandwidth;
  std::unordered_map<uint64_t, double> mean_seconds_;  // by key()
  // The mean record_duration() updated last: consecutive tasks mostly run
  // the same function (a map's nodes never move, and none is erased).
  uint64_t last_key_ = 0;
  double* last_mean_ = nullptr;
};

}  // namespace taskgrid::sched
