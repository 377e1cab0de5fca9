// What a task's device implementation (taskgrid::register_device_function)
// may use on any device. On a CUDA device, launch kernels on
// TaskContext::stream() with the pointers of TaskContext::data() and return;
// the runtime waits for the stream's work (without blocking a thread) before
// the task counts as finished. On the emulated device (TASKGRID_DEVICE=emulated,
// for testing without a GPU) a "kernel" is host work on the stream, reading
// and writing device buffers through emulated_view().
#pragma once

#include <cstddef>
#include <functional>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid {

enum class DeviceKind { cpu, cuda, emulated };

// Where `context`'s task runs.
DeviceKind device_kind(const TaskContext& context);

// Runs `work` on the task's stream after the work enqueued before it, and
// before what is enqueued after it (cudaLaunchHostFunc on CUDA: `work` must
// not call CUDA, nor wait for other work: the host work of every stream may
// run on one thread). Throws taskgrid::Error on a CPU.
void launch_host_work(const TaskContext& context, std::function<void()> work);

// The emulated device only: where the host reads and writes the bytes of the
// task's device buffer `index` (the device pointer itself faults when the
// host touches it, as a GPU's would). Throws taskgrid::Error elsewhere.
void* emulated_view(const TaskContext& context, size_t index);

}  // namespace taskgrid
