// The CUDA backend: the CUDA runtime (libcudart) is loaded when the backend is
// opened, not linked, so TaskGrid builds and runs without CUDA and uses GPUs
// where they are. Streams are non-blocking CUDA streams, events are CUDA
// events without timing, polled with cudaEventQuery.
#pragma once

#include <memory>
#include <string>

#include "device/backend.h"

namespace taskgrid::device {

// The CUDA backend for `memory_limit` bytes per device (0: the device's free
// memory when opened), or nullptr with `why` saying what is missing (no
// libcudart, no device, a driver error).
std::unique_ptr<Backend> open_cuda_backend(uint64_t memory_limit, std::string& why);

}  // namespace taskgrid::device
