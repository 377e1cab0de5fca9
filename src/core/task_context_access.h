// The runtime's access to the private parts of taskgrid::TaskContext: the
// engine builds contexts, task-aware communication reads their binding, and
// tests that run task functions outside the runtime build them too.
#pragma once

#include <cstddef>
#include <cstdint>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::detail {

struct TaskContextAccess {
  using Buffer = TaskContext::Buffer;

  // `binding`: the engine's per-task state for task-aware communication
  // (nullptr: the task cannot use it).
  static TaskContext make(const Buffer* buffers, size_t num_data, const void* args,
                          size_t args_size, int rank, uint64_t task_id, void* binding = nullptr) {
    return TaskContext(buffers, num_data, args, args_size, rank, task_id, binding);
  }
  static void* binding(const TaskContext& context) { return context.binding_; }
  // A task running on a device: `device` is its device::TaskBinding.
  static void set_device(TaskContext& context, void* device) { context.device_ = device; }
  static void* device(const TaskContext& context) { return context.device_; }
  // Checked mode: the arguments' types (core/arg_signature.h) arg<T> checks.
  static void set_signature(TaskContext& context, const void* signature, size_t bytes) {
    context.signature_ = signature;
    context.signature_size_ = bytes;
  }
  static const void* signature(const TaskContext& context) { return context.signature_; }
  static size_t signature_size(const TaskContext& context) { return context.signature_size_; }
};

}  // namespace taskgrid::detail
