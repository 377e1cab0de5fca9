// The C API's calls inside device implementations (include/taskgrid/taskgrid.h,
// tg_register_device_function) over taskgrid/device.hpp: each calls its C++
// counterpart, so checks and messages are the same; failures become status
// codes / NULL and tg_last_error() as everywhere in the C API.
#include <cstddef>
#include <exception>
#include <string>

#include "core/c_status.h"
#include "taskgrid/device.hpp"
#include "taskgrid/taskgrid.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::c_api {
// Defined in c_api.cpp, beside struct tg_task_context.
const TaskContext& cpp_context(const tg_task_context* ctx) noexcept;
void task_index_error(tg_task_context* ctx, const char* function, size_t index) noexcept;
}  // namespace taskgrid::c_api

namespace {

using taskgrid::c_api::cpp_context;
using taskgrid::core::c_status::CError;
using taskgrid::core::c_status::fail;
using taskgrid::core::c_status::guarded;
using taskgrid::core::c_status::set_last_error;

// A query that returns a value: `on_error` with the message kept when ctx is
// NULL or the C++ call throws.
template <typename T, typename Query>
T query(const char* function, const tg_task_context* ctx, T on_error, Query&& body) noexcept {
  if (!ctx) {
    set_last_error((std::string(function) + ": ctx is NULL").c_str());
    return on_error;
  }
  T result = on_error;
  const int status = guarded([&] { result = body(cpp_context(ctx)); });
  return status == TG_SUCCESS ? result : on_error;
}

}  // namespace

extern "C" {

tg_device_kind tg_task_device_kind(const tg_task_context* ctx) {
  return query("tg_task_device_kind", ctx, TG_DEVICE_CPU, [](const taskgrid::TaskContext& c) {
    switch (taskgrid::device_kind(c)) {
      case taskgrid::DeviceKind::cuda:
        return TG_DEVICE_CUDA;
      case taskgrid::DeviceKind::emulated:
        return TG_DEVICE_EMULATED;
      case taskgrid::DeviceKind::cpu:
        break;
    }
    return TG_DEVICE_CPU;
  });
}

int tg_task_device(const tg_task_context* ctx) {
  return query("tg_task_device", ctx, -1,
               [](const taskgrid::TaskContext& c) { return c.device(); });
}

void* tg_task_stream(const tg_task_context* ctx) {
  return query("tg_task_stream", ctx, static_cast<void*>(nullptr),
               [](const taskgrid::TaskContext& c) { return c.stream(); });
}

int tg_launch_host_work(tg_task_context* ctx, tg_host_work_fn work, void* arg) {
  return guarded([&] {
    constexpr const char* kWho = "tg_launch_host_work";
    if (!ctx)
      fail(TG_ERROR_INVALID_ARGUMENT, kWho,
           "ctx is NULL (call it from a device implementation with its context)");
    if (!work) fail(TG_ERROR_INVALID_ARGUMENT, kWho, "work is NULL");
    const taskgrid::TaskContext& context = cpp_context(ctx);
    try {
      taskgrid::launch_host_work(context, [work, arg] { work(arg); });
    } catch (const taskgrid::Error& error) {
      // On a CPU: no stream to run on, a call at the wrong place.
      const bool on_cpu = taskgrid::device_kind(context) == taskgrid::DeviceKind::cpu;
      throw CError{on_cpu ? TG_ERROR_STATE : TG_ERROR, error.what()};
    }
  });
}

void* tg_emulated_view(tg_task_context* ctx, size_t index) {
  if (!ctx) {
    set_last_error("tg_emulated_view: ctx is NULL");
    return nullptr;
  }
  const taskgrid::TaskContext& context = cpp_context(ctx);
  if (index >= context.num_data()) {  // a bug, as in tg_task_data: the task fails
    taskgrid::c_api::task_index_error(ctx, "tg_emulated_view", index);
    return nullptr;
  }
  void* view = nullptr;
  if (guarded([&] { view = taskgrid::emulated_view(context, index); }) != TG_SUCCESS)
    return nullptr;
  return view;
}

}  // extern "C"
