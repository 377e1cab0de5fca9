#include "device/link_probe.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace taskgrid::device {
namespace {

constexpr size_t kLargestProbe = size_t{8} << 20;
constexpr size_t kSmallestProbe = size_t{64} << 10;
constexpr int kLatencyRounds = 16;
constexpr int kBandwidthRounds = 3;

// Seconds one copy of `bytes` takes, from enqueueing to its event.
double time_copy(Backend& backend, Stream* stream, void* to, const void* from, size_t bytes) {
  const auto start = std::chrono::steady_clock::now();
  backend.copy_async(stream, to, from, bytes, CopyKind::host_to_device);
  Event* event = backend.record_event(stream);
  // The emulated device's streams are threads: give them the core.
  while (!backend.event_done(event)) std::this_thread::yield();
  backend.destroy_event(event);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

LinkEstimate measure_link(Backend& backend, int device) {
  const size_t bytes = std::min<size_t>(kLargestProbe, backend.memory_limit(device) / 2);
  if (bytes < kSmallestProbe) return {};
  void* on_device = backend.allocate(device, bytes);
  if (!on_device) return {};
  void* on_host = backend.allocate_staging(bytes);
  std::memset(on_host, 0, bytes);
  Stream* stream = backend.create_stream(device);
  double latency = 1e30;
  double whole = 1e30;
  for (int i = 0; i < kLatencyRounds; ++i)
    latency = std::min(latency, time_copy(backend, stream, on_device, on_host, 8));
  for (int i = 0; i < kBandwidthRounds; ++i)
    whole = std::min(whole, time_copy(backend, stream, on_device, on_host, bytes));
  backend.destroy_stream(stream);
  backend.release_staging(on_host);
  backend.release(device, on_device);
  // A copy of `bytes` costs the latency plus bytes / bandwidth.
  const double streaming = std::max(whole - latency, whole / 2);
  return {latency, static_cast<double>(bytes) / streaming};
}

}  // namespace taskgrid::device
