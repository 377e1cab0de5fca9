// Streams of each device, created on first use and reused once given back,
// with a cap on how many are out at once (DiOMP's policy: more concurrent
// streams than a device overlaps only add scheduling and memory). Owned and
// used by one thread, the engine's progress loop.
#pragma once

#include <vector>

#include "device/backend.h"

namespace taskgrid::device {

class StreamPool {
 public:
  StreamPool(Backend& backend, int max_active_per_device);
  ~StreamPool();  // destroys every stream it created, waiting for their work
  StreamPool(const StreamPool&) = delete;
  StreamPool& operator=(const StreamPool&) = delete;

  // A stream of `device` to enqueue work on: the idle one given back last,
  // else a new one; nullptr while `max_active_per_device` are out.
  Stream* acquire(int device);
  void give_back(Stream* stream);

  int active(int device) const { return per_device(device).active; }
  int created(int device) const { return static_cast<int>(per_device(device).all.size()); }
  int max_active() const { return max_active_; }

 private:
  struct PerDevice {
    std::vector<Stream*> idle;
    std::vector<Stream*> all;
    int active = 0;
  };
  PerDevice& per_device(int device);
  const PerDevice& per_device(int device) const;

  Backend& backend_;
  int max_active_;
  std::vector<PerDevice> devices_;
};

}  // namespace taskgrid::device
