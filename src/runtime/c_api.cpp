// The C API (include/taskgrid/taskgrid.h) over the C++ API.
//
// Errors: every entry point catches everything, keeps the message in a
// thread-local string for tg_last_error() and returns a status code.
//
// Task functions: a C task function takes a tg_task_context*, a C++ one a
// TaskContext&, and the registry identifies functions by their C++ pointer. So
// each registered C function gets its own slot in a fixed table and its own
// C++ trampoline, trampoline<I>, which calls table[I]. Slots are handed out in
// registration order and the id still comes from the name
// (taskgrid::register_function), so ranks that register the same names agree
// on the ids whatever the slot numbers. A device function
// (tg_register_device_function) takes a slot per implementation. The calls
// used inside device implementations are in c_api_device.cpp.
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/c_status.h"
#include "core/function_registry.h"
#include "taskgrid/taskgrid.h"
#include "taskgrid/taskgrid.hpp"

// What a C task function sees: the C++ context plus the failure reported by
// tg_task_fail, which the trampoline turns into an exception after the call.
struct tg_task_context {
  taskgrid::TaskContext* context;
  std::atomic<bool> failed{false};
  std::mutex mutex;  // guards message
  std::string message;
};

namespace {

using taskgrid::AccessMode;

static_assert(TG_IN == static_cast<int>(AccessMode::in));
static_assert(TG_OUT == static_cast<int>(AccessMode::out));
static_assert(TG_INOUT == static_cast<int>(AccessMode::inout));
static_assert(sizeof(tg_data{}.id) == sizeof(taskgrid::DataHandle{}.id));
// tg_task_options.device_hint is TaskOptions::device + 1.
static_assert(TG_DEVICE_ANY - 1 == taskgrid::TaskOptions::any_device);
static_assert(TG_DEVICE_ON_CPU - 1 == taskgrid::TaskOptions::on_cpu);
static_assert(TG_DEVICE_HINT(0) - 1 == 0);

using taskgrid::core::c_status::CError;
using taskgrid::core::c_status::fail;
using taskgrid::core::c_status::guarded;
using taskgrid::core::c_status::set_last_error;

void require_running(const char* function) {
  if (!taskgrid::is_running()) fail(TG_ERROR_STATE, function, "call tg_start() first");
}

void require_handle(const char* function, tg_data data) {
  if (data.id == 0) fail(TG_ERROR_INVALID_ARGUMENT, function, "handle 0 is not a data handle");
}

taskgrid::DataHandle to_handle(tg_data data) { return taskgrid::DataHandle{data.id}; }

// A C caller may store any integer in an enum; reading such a value as the
// C++ enum type is undefined, so read its bytes as an integer.
template <typename Enum>
long long enum_value(const Enum& value) {
  std::underlying_type_t<Enum> raw;
  static_assert(sizeof raw == sizeof value);
  std::memcpy(&raw, &value, sizeof raw);
  return static_cast<long long>(raw);
}

taskgrid::Mode to_mode(const char* function, const tg_mode& mode) {
  switch (enum_value(mode)) {
    case TG_MODE_CLUSTER:
      return taskgrid::Mode::cluster;
    case TG_MODE_SPMD:
      return taskgrid::Mode::spmd;
    case TG_MODE_FROM_ENVIRONMENT:
      return taskgrid::Mode::from_environment;
    default:
      fail(TG_ERROR_INVALID_ARGUMENT, function,
           ("mode " + std::to_string(enum_value(mode)) +
            " (TG_MODE_CLUSTER, TG_MODE_SPMD or TG_MODE_FROM_ENVIRONMENT)")
               .c_str());
  }
}

// ---------------------------------------------------- function table ----

constexpr size_t kSlots = TG_MAX_C_FUNCTIONS;

// What a slot's function is to its registration.
enum class Role { task, cpu_of_device, device };

struct Slot {
  std::atomic<tg_task_fn> function{nullptr};
  std::string name;  // to tell a repeated registration from a second name
  uint32_t id = 0;
  Role role = Role::task;
  tg_task_fn partner = nullptr;  // a device function's other implementation (cpu may be NULL)
};

struct Table {
  std::mutex mutex;
  size_t used = 0;
  std::array<Slot, kSlots> slots;
};

// Constructed on first use: C++ static initialisers may register C functions.
Table& table() {
  static Table instance;
  return instance;
}

void run_c_task(size_t slot, taskgrid::TaskContext& context) {
  const tg_task_fn function = table().slots[slot].function.load(std::memory_order_acquire);
  if (!function)
    throw taskgrid::Error("taskgrid: C task function slot " + std::to_string(slot) + " is empty");
  tg_task_context c_context;
  c_context.context = &context;
  function(&c_context);
  if (c_context.failed.load(std::memory_order_acquire)) {
    std::lock_guard lock(c_context.mutex);
    throw taskgrid::Error(c_context.message);
  }
}

template <size_t I>
void trampoline(taskgrid::TaskContext& context) {
  run_c_task(I, context);
}

template <size_t... I>
constexpr std::array<taskgrid::TaskFunction, sizeof...(I)> make_trampolines(
    std::index_sequence<I...>) {
  return {&trampoline<I>...};
}

constexpr std::array<taskgrid::TaskFunction, kSlots> trampolines =
    make_trampolines(std::make_index_sequence<kSlots>{});

// The slot holding `fn` (t.mutex held), or nullptr.
Slot* find_slot(Table& t, tg_task_fn fn) {
  for (size_t i = 0; i < t.used; ++i)
    if (t.slots[i].function.load(std::memory_order_relaxed) == fn) return &t.slots[i];
  return nullptr;
}

// tg_register_function (device NULL) and tg_register_device_function
// (device set, cpu may be NULL), after the argument checks.
uint32_t register_c_functions(const char* who, const char* name, tg_task_fn cpu,
                              tg_task_fn device) {
  // In cluster mode ranks > 0 never return from tg_start: a later
  // registration would exist on rank 0 only, and tasks placed elsewhere
  // would name an unknown id.
  if (taskgrid::is_running())
    fail(TG_ERROR_STATE, who, "register every function before tg_start(), on every rank");
  Table& t = table();
  std::lock_guard lock(t.mutex);
  // The same registration again gives its id; any other use of a registered
  // function is an error.
  const Slot* main = find_slot(t, device ? device : cpu);
  if (main && main->name == name && main->role == (device ? Role::device : Role::task) &&
      main->partner == (device ? cpu : nullptr))
    return main->id;
  for (tg_task_fn fn : {cpu, device}) {
    const Slot* slot = fn ? find_slot(t, fn) : nullptr;
    if (!slot) continue;
    if (slot->name != name)
      fail(TG_ERROR_INVALID_ARGUMENT, who,
           ("the function registered as \"" + std::string(name) + "\" is already registered as \"" +
            slot->name + "\"")
               .c_str());
    fail(TG_ERROR_INVALID_ARGUMENT, who,
         (std::string(name).insert(0, 1, '"') + "\" is already registered with other functions")
             .c_str());
  }
  const size_t needed = cpu && device ? 2 : 1;
  if (t.used + needed > kSlots) {
    const std::string what = "cannot register \"" + std::string(name) + "\": ";
    fail(TG_ERROR_LIMIT, who,
         (t.used == kSlots ? what + "all " + std::to_string(kSlots) +
                                 " C task function slots (TG_MAX_C_FUNCTIONS) are used"
                           : what + "its two functions need two C task function slots, and 1 of " +
                                 std::to_string(kSlots) + " (TG_MAX_C_FUNCTIONS) is free")
             .c_str());
  }
  const size_t first = t.used;  // cpu (when set), then device
  for (size_t i = first; i < first + needed; ++i) t.slots[i].name = name;
  try {
    const taskgrid::TaskFunction cpp_cpu = cpu ? trampolines[first] : nullptr;
    const uint32_t id =
        device ? taskgrid::register_device_function(name, cpp_cpu, trampolines[first + needed - 1])
                     .value
               : taskgrid::register_function(name, cpp_cpu).value;
    for (size_t i = first; i < first + needed; ++i) t.slots[i].id = id;
  } catch (const std::exception& error) {
    // Nothing was registered: the slots stay free.
    for (size_t i = first; i < first + needed; ++i) t.slots[i].name.clear();
    throw CError{TG_ERROR_INVALID_ARGUMENT, error.what()};
  }
  if (cpu) {
    Slot& slot = t.slots[first];
    slot.role = device ? Role::cpu_of_device : Role::task;
    slot.partner = device;
    slot.function.store(cpu, std::memory_order_release);
  }
  if (device) {
    Slot& slot = t.slots[first + needed - 1];
    slot.role = Role::device;
    slot.partner = cpu;
    slot.function.store(device, std::memory_order_release);
  }
  t.used += needed;
  return t.slots[first].id;
}

// ------------------------------------------------------- task context ----

void record_failure(tg_task_context* ctx, const char* message) noexcept {
  try {
    std::lock_guard lock(ctx->mutex);
    if (ctx->failed.load(std::memory_order_relaxed)) return;  // the first message wins
    ctx->failed.store(true, std::memory_order_release);
    ctx->message = message ? message : "tg_task_fail called without a message";
  } catch (...) {
    // Out of memory: the flag alone still fails the task, with an empty message.
    ctx->failed.store(true, std::memory_order_release);
  }
}

// A bad index inside a task: the C++ context would throw; here the caller
// gets NULL/0, the message, and the task fails when it returns.
void index_error(tg_task_context* ctx, const char* function, size_t index) noexcept {
  char message[160];
  std::snprintf(message, sizeof message, "%s(%zu): the task has %zu data accesses", function, index,
                ctx->context->num_data());
  set_last_error(message);
  record_failure(ctx, message);
}

// tg_start and tg_start_mode; `who` names the call in error messages.
int start_as(const char* who, int* argc, char*** argv, tg_mode mode) {
  return guarded([&] {
    const taskgrid::Mode cpp_mode = to_mode(who, mode);
    if (taskgrid::is_running()) fail(TG_ERROR_STATE, who, "already started");
    taskgrid::start(argc, argv, cpp_mode);
  });
}

}  // namespace

// For c_api_device.cpp, which declares them: what the C context wraps, and a
// bad buffer index in a task.
namespace taskgrid::c_api {

const TaskContext& cpp_context(const tg_task_context* ctx) noexcept { return *ctx->context; }

void task_index_error(tg_task_context* ctx, const char* function, size_t index) noexcept {
  index_error(ctx, function, index);
}

}  // namespace taskgrid::c_api

extern "C" {

const char* tg_last_error(void) { return taskgrid::core::c_status::last_error(); }

tg_task_options tg_default_task_options(void) {
  tg_task_options options;
  options.rank = -1;
  options.cost = 0.0;
  options.name = nullptr;
  options.channel = -1;
  options.priority = 0;
  options.device_hint = TG_DEVICE_ANY;
  return options;
}

int tg_register_function(const char* name, tg_task_fn fn, uint32_t* id) {
  return guarded([&] {
    constexpr const char* kWho = "tg_register_function";
    if (!id) fail(TG_ERROR_INVALID_ARGUMENT, kWho, "id is NULL");
    *id = 0;
    if (!name || !*name) fail(TG_ERROR_INVALID_ARGUMENT, kWho, "empty or NULL name");
    if (!fn) fail(TG_ERROR_INVALID_ARGUMENT, kWho, "function is NULL");
    *id = register_c_functions(kWho, name, fn, nullptr);
  });
}

int tg_register_device_function(const char* name, tg_task_fn cpu, tg_task_fn device, uint32_t* id) {
  return guarded([&] {
    constexpr const char* kWho = "tg_register_device_function";
    if (!id) fail(TG_ERROR_INVALID_ARGUMENT, kWho, "id is NULL");
    *id = 0;
    if (!name || !*name) fail(TG_ERROR_INVALID_ARGUMENT, kWho, "empty or NULL name");
    if (!device)
      fail(TG_ERROR_INVALID_ARGUMENT, kWho,
           "the device function is NULL (a task without one: tg_register_function)");
    if (cpu == device)
      fail(TG_ERROR_INVALID_ARGUMENT, kWho,
           (std::string(name).insert(0, 1, '"') + "\" gives one function for both").c_str());
    *id = register_c_functions(kWho, name, cpu, device);
  });
}

int tg_start(int* argc, char*** argv) { return start_as("tg_start", argc, argv, TG_MODE_CLUSTER); }

int tg_start_mode(int* argc, char*** argv, tg_mode mode) {
  return start_as("tg_start_mode", argc, argv, mode);
}

int tg_run(int argc, char** argv, int (*main_fn)(int argc, char** argv, void* user), void* user,
           tg_mode mode, int* job_status) {
  return guarded([&] {
    constexpr const char* kWho = "tg_run";
    if (!main_fn) fail(TG_ERROR_INVALID_ARGUMENT, kWho, "main_fn is NULL");
    if (job_status) *job_status = 0;
    taskgrid::RunOptions options;
    options.mode = to_mode(kWho, mode);
    if (taskgrid::is_running()) fail(TG_ERROR_STATE, kWho, "already started");
    const int status = taskgrid::run(
        argc, argv, [&](int c, char** v) { return main_fn(c, v, user); }, options);
    if (job_status) *job_status = status;
  });
}

int tg_finish(void) {
  return guarded([&] {
    require_running("tg_finish");
    taskgrid::finish();
  });
}

int tg_finish_status(int exit_status, int* job_status) {
  return guarded([&] {
    require_running("tg_finish_status");
    const int status = taskgrid::finish(exit_status);
    if (job_status) *job_status = status;
  });
}

int tg_is_spmd(int* spmd) {
  return guarded([&] {
    if (!spmd) fail(TG_ERROR_INVALID_ARGUMENT, "tg_is_spmd", "spmd is NULL");
    require_running("tg_is_spmd");
    *spmd = taskgrid::is_spmd() ? 1 : 0;
  });
}

int tg_rank(int* rank) {
  return guarded([&] {
    if (!rank) fail(TG_ERROR_INVALID_ARGUMENT, "tg_rank", "rank is NULL");
    require_running("tg_rank");
    *rank = taskgrid::rank();
  });
}

int tg_num_ranks(int* num_ranks) {
  return guarded([&] {
    if (!num_ranks) fail(TG_ERROR_INVALID_ARGUMENT, "tg_num_ranks", "num_ranks is NULL");
    require_running("tg_num_ranks");
    *num_ranks = taskgrid::num_ranks();
  });
}

int tg_enter_data(void* host, size_t bytes, tg_data* out) {
  return guarded([&] {
    if (!out) fail(TG_ERROR_INVALID_ARGUMENT, "tg_enter_data", "out is NULL");
    out->id = 0;
    if (!host && bytes > 0)
      fail(TG_ERROR_INVALID_ARGUMENT, "tg_enter_data", "host is NULL with a non-zero size");
    require_running("tg_enter_data");
    out->id = taskgrid::enter_data(host, bytes).id;
  });
}

int tg_enter_data_owner(void* host, size_t bytes, int owner, tg_data* out) {
  return guarded([&] {
    constexpr const char* kWho = "tg_enter_data_owner";
    if (!out) fail(TG_ERROR_INVALID_ARGUMENT, kWho, "out is NULL");
    out->id = 0;
    if (!host && bytes > 0)
      fail(TG_ERROR_INVALID_ARGUMENT, kWho, "host is NULL with a non-zero size");
    if (owner < 0)
      fail(TG_ERROR_INVALID_ARGUMENT, kWho,
           ("owner rank " + std::to_string(owner) + " is negative").c_str());
    require_running(kWho);
    out->id = taskgrid::enter_data(host, bytes, owner).id;
  });
}

int tg_enter_data_alloc(void* host, size_t bytes, int owner, tg_data* out) {
  return guarded([&] {
    constexpr const char* kWho = "tg_enter_data_alloc";
    if (!out) fail(TG_ERROR_INVALID_ARGUMENT, kWho, "out is NULL");
    out->id = 0;
    if (owner < -1)
      fail(TG_ERROR_INVALID_ARGUMENT, kWho,
           ("owner rank " + std::to_string(owner) + " is neither a rank nor -1").c_str());
    require_running(kWho);
    out->id = (owner < 0 ? taskgrid::enter_data_alloc(host, bytes)
                         : taskgrid::enter_data_alloc(host, bytes, owner))
                  .id;
  });
}

int tg_fetch(tg_data data) {
  return guarded([&] {
    require_handle("tg_fetch", data);
    require_running("tg_fetch");
    taskgrid::fetch(to_handle(data));
  });
}

int tg_exit_data(tg_data data) {
  return guarded([&] {
    require_handle("tg_exit_data", data);
    require_running("tg_exit_data");
    taskgrid::exit_data(to_handle(data));
  });
}

int tg_fetch_to(tg_data data, int rank) {
  return guarded([&] {
    require_handle("tg_fetch_to", data);
    require_running("tg_fetch_to");
    taskgrid::fetch(to_handle(data), rank);
  });
}

int tg_exit_data_to(tg_data data, int rank) {
  return guarded([&] {
    require_handle("tg_exit_data_to", data);
    require_running("tg_exit_data_to");
    taskgrid::exit_data(to_handle(data), rank);
  });
}

int tg_release(tg_data data) {
  return guarded([&] {
    require_handle("tg_release", data);
    require_running("tg_release");
    taskgrid::release(to_handle(data));
  });
}

int tg_owner(tg_data data, int* rank) {
  return guarded([&] {
    if (!rank) fail(TG_ERROR_INVALID_ARGUMENT, "tg_owner", "rank is NULL");
    *rank = -1;
    require_handle("tg_owner", data);
    require_running("tg_owner");
    *rank = taskgrid::owner(to_handle(data));
  });
}

int tg_submit(uint32_t function, const tg_access* accesses, size_t num_accesses,
              const tg_task_options* options, const void* args, size_t args_size) {
  return guarded([&] {
    constexpr const char* kWho = "tg_submit";
    require_running(kWho);
    if (!accesses && num_accesses > 0)
      fail(TG_ERROR_INVALID_ARGUMENT, kWho, "accesses is NULL with num_accesses > 0");
    if (!args && args_size > 0)
      fail(TG_ERROR_INVALID_ARGUMENT, kWho, "args is NULL with args_size > 0");
    if (!taskgrid::detail::find_function(taskgrid::FunctionId{function}))
      fail(TG_ERROR_INVALID_ARGUMENT, kWho,
           ("function id " + std::to_string(function) + " is not registered").c_str());
    std::vector<taskgrid::DataAccess> converted(num_accesses);
    for (size_t i = 0; i < num_accesses; ++i) {
      const tg_access& a = accesses[i];
      const long long mode = enum_value(a.mode);
      if (mode != TG_IN && mode != TG_OUT && mode != TG_INOUT)
        fail(TG_ERROR_INVALID_ARGUMENT, kWho,
             ("access " + std::to_string(i) + " has mode " + std::to_string(mode) +
              " (TG_IN, TG_OUT or TG_INOUT)")
                 .c_str());
      if (a.data.id == 0)
        fail(TG_ERROR_INVALID_ARGUMENT, kWho,
             ("access " + std::to_string(i) + " has handle 0").c_str());
      converted[i] = taskgrid::DataAccess{to_handle(a.data), static_cast<AccessMode>(mode)};
    }
    const tg_task_options c_options = options ? *options : tg_default_task_options();
    taskgrid::TaskOptions cpp_options;
    cpp_options.rank = c_options.rank;
    cpp_options.cost = c_options.cost;
    cpp_options.name = c_options.name;  // copied by submit
    cpp_options.channel = c_options.channel;
    cpp_options.priority = c_options.priority;
    if (c_options.device_hint < TG_DEVICE_ON_CPU)
      fail(TG_ERROR_INVALID_ARGUMENT, kWho,
           ("device_hint " + std::to_string(c_options.device_hint) +
            " is not a hint (TG_DEVICE_HINT(index), TG_DEVICE_ANY or TG_DEVICE_ON_CPU)")
               .c_str());
    cpp_options.device = c_options.device_hint - 1;
    taskgrid::submit_packed(taskgrid::FunctionId{function}, converted.data(), converted.size(),
                            cpp_options, args, args_size);
  });
}

int tg_wait_all(void) {
  return guarded([&] {
    require_running("tg_wait_all");
    taskgrid::wait_all();
  });
}

int tg_wait(tg_data data) {
  return guarded([&] {
    require_handle("tg_wait", data);
    require_running("tg_wait");
    taskgrid::wait(to_handle(data));
  });
}

void* tg_task_data(tg_task_context* ctx, size_t index) {
  if (!ctx) {
    set_last_error("tg_task_data: ctx is NULL");
    return nullptr;
  }
  if (index >= ctx->context->num_data()) {
    index_error(ctx, "tg_task_data", index);
    return nullptr;
  }
  return ctx->context->data(index);
}

size_t tg_task_size(tg_task_context* ctx, size_t index) {
  if (!ctx) {
    set_last_error("tg_task_size: ctx is NULL");
    return 0;
  }
  if (index >= ctx->context->num_data()) {
    index_error(ctx, "tg_task_size", index);
    return 0;
  }
  return ctx->context->size(index);
}

size_t tg_task_num_data(tg_task_context* ctx) {
  if (!ctx) {
    set_last_error("tg_task_num_data: ctx is NULL");
    return 0;
  }
  return ctx->context->num_data();
}

const void* tg_task_args(tg_task_context* ctx) {
  if (!ctx) {
    set_last_error("tg_task_args: ctx is NULL");
    return nullptr;
  }
  return ctx->context->args_size() ? ctx->context->args() : nullptr;
}

size_t tg_task_args_size(tg_task_context* ctx) {
  if (!ctx) {
    set_last_error("tg_task_args_size: ctx is NULL");
    return 0;
  }
  return ctx->context->args_size();
}

int tg_task_rank(tg_task_context* ctx) {
  if (!ctx) {
    set_last_error("tg_task_rank: ctx is NULL");
    return -1;
  }
  return ctx->context->rank();
}

void tg_task_fail(tg_task_context* ctx, const char* message) {
  if (!ctx) {
    set_last_error("tg_task_fail: ctx is NULL (call it from a task function with its context)");
    return;
  }
  record_failure(ctx, message);
}

}  // extern "C"

namespace taskgrid::core::c_status {

namespace {
thread_local std::string last_error_text;
thread_local const char* last_error_message = "";
}  // namespace

void set_last_error(const char* message) noexcept {
  try {
    last_error_text = message ? message : "taskgrid: unknown error";
    last_error_message = last_error_text.c_str();
  } catch (...) {
    last_error_message = "taskgrid: out of memory while recording an error";
  }
}

const char* last_error() noexcept { return last_error_message; }

}  // namespace taskgrid::core::c_status
