#include "device/stream_pool.h"

#include <string>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::device {

StreamPool::StreamPool(Backend& backend, int max_active_per_device)
    : backend_(backend),
      max_active_(max_active_per_device),
      devices_(static_cast<size_t>(backend.devices())) {
  if (max_active_ < 1)
    throw Error("stream pool: at least one stream per device must be allowed, not " +
                std::to_string(max_active_));
}

StreamPool::~StreamPool() {
  for (PerDevice& device : devices_)
    for (Stream* stream : device.all) backend_.destroy_stream(stream);
}

const StreamPool::PerDevice& StreamPool::per_device(int device) const {
  if (device < 0 || static_cast<size_t>(device) >= devices_.size())
    throw Error("stream pool: device " + std::to_string(device) + " does not exist (" +
                std::to_string(devices_.size()) + " devices)");
  return devices_[static_cast<size_t>(device)];
}

StreamPool::PerDevice& StreamPool::per_device(int device) {
  return const_cast<PerDevice&>(static_cast<const StreamPool&>(*this).per_device(device));
}

Stream* StreamPool::acquire(int device) {
  PerDevice& d = per_device(device);
  if (d.active >= max_active_) return nullptr;
  Stream* stream = nullptr;
  if (!d.idle.empty()) {
    stream = d.idle.back();
    d.idle.pop_back();
  } else {
    d.all.reserve(d.all.size() + 1);  // so that a throw below leaks nothing
    stream = backend_.create_stream(device);
    d.all.push_back(stream);
  }
  d.active += 1;
  return stream;
}

void StreamPool::give_back(Stream* stream) {
  if (!stream) throw Error("stream pool: a null stream given back");
  PerDevice& d = per_device(stream->device);
  if (d.active == 0) throw Error("stream pool: a stream given back that was not out");
  d.idle.push_back(stream);
  d.active -= 1;
}

}  // namespace taskgrid::device
