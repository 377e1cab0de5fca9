// The device side of taskgrid::TaskContext and taskgrid/device.hpp.
#include <memory>
#include <string>

#include "core/task_context_access.h"
#include "device/backend.h"
#include "device/emulated_backend.h"
#include "taskgrid/device.hpp"

namespace taskgrid {
namespace {

const device::TaskBinding* binding_of(const TaskContext& context) {
  return static_cast<const device::TaskBinding*>(detail::TaskContextAccess::device(context));
}

const device::TaskBinding& on_device(const TaskContext& context, const char* call) {
  const device::TaskBinding* binding = binding_of(context);
  if (!binding)
    throw Error(std::string("taskgrid::") + call + ": task " + std::to_string(context.task_id()) +
                " runs on a CPU of rank " + std::to_string(context.rank()) + ", not on a device");
  return *binding;
}

}  // namespace

int TaskContext::device() const {
  const device::TaskBinding* binding = binding_of(*this);
  return binding ? binding->stream->device : -1;
}

void* TaskContext::stream() const {
  const device::TaskBinding* binding = binding_of(*this);
  return binding ? binding->backend->native_stream(binding->stream) : nullptr;
}

DeviceKind device_kind(const TaskContext& context) {
  const device::TaskBinding* binding = binding_of(context);
  if (!binding) return DeviceKind::cpu;
  return dynamic_cast<device::EmulatedBackend*>(binding->backend) ? DeviceKind::emulated
                                                                  : DeviceKind::cuda;
}

void launch_host_work(const TaskContext& context, std::function<void()> work) {
  const device::TaskBinding& binding = on_device(context, "launch_host_work");
  auto owned = std::make_unique<std::function<void()>>(std::move(work));
  binding.backend->host_function_async(
      binding.stream,
      [](void* argument) {
        const std::unique_ptr<std::function<void()>> run(
            static_cast<std::function<void()>*>(argument));
        (*run)();
      },
      owned.get());
  owned.release();  // the stream runs and frees it
}

void* emulated_view(const TaskContext& context, size_t index) {
  const device::TaskBinding& binding = on_device(context, "emulated_view");
  auto* emulated = dynamic_cast<device::EmulatedBackend*>(binding.backend);
  if (!emulated)
    throw Error(std::string("taskgrid::emulated_view: task '") + binding.task_name +
                "' runs on a CUDA device, whose memory the host cannot see");
  return emulated->host_view(context.data(index));
}

}  // namespace taskgrid
