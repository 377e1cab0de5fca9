// How fast a rank's host reaches its device: measured once at start-up
// (cluster mode, where heft weighs copies to and from devices against
// running elsewhere), on the device backend the engine will use.
#pragma once

#include "device/backend.h"

namespace taskgrid::device {

struct LinkEstimate {
  double latency_seconds = 0;
  double bandwidth_bytes_per_second = 0;  // 0: not measured
};

// Host-to-device copies from staging memory on `device`: the fastest of a few
// 8-byte copies (the latency) and of a few copies of up to 8 MiB (the
// bandwidth, after the latency). Not measured (zeros) when the device has no
// room for a probe of at least 64 KiB. Takes some milliseconds.
LinkEstimate measure_link(Backend& backend, int device);

}  // namespace taskgrid::device
