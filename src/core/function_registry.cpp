#include "core/function_registry.h"

#include <cxxabi.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/failure.h"

namespace taskgrid {
namespace detail {
namespace {

struct Registry {
  std::mutex mutex;
  // Names are copied: the caller's string need not outlive the call. Node
  // based maps keep each name's address stable for RegisteredFunction::name.
  std::unordered_map<uint32_t, std::string> names;
  std::unordered_map<uint32_t, RegisteredFunction> by_id;
  std::unordered_map<TaskFunction, uint32_t> by_function;
  size_t device_functions = 0;  // registered with a device implementation
};

// Constructed on first use: registrations run during static initialisation.
Registry& registry() {
  static Registry instance;
  return instance;
}

// FNV-1a: a stable hash of the name, so ids agree across ranks and builds.
uint32_t name_hash(const char* name) {
  uint32_t hash = 2166136261u;
  for (const char* c = name; *c; ++c) hash = (hash ^ static_cast<unsigned char>(*c)) * 16777619u;
  return hash == 0 ? 1 : hash;
}

// Names an unregistered function for its error message: the symbol the
// dynamic linker knows for the address (the executable's own functions only
// when it exports them: -rdynamic, CMake ENABLE_EXPORTS), else the address.
std::string unregistered_message(TaskFunction fn) {
  void* address = nullptr;
  std::memcpy(&address, &fn, sizeof address);  // a function pointer as data, portably
  char hex[32];
  std::snprintf(hex, sizeof hex, "%p", address);
  Dl_info info{};
  if (dladdr(address, &info) != 0 && info.dli_sname && info.dli_saddr == address) {
    std::string name = info.dli_sname;
    int status = 0;
    if (char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status)) {
      name = demangled;
      std::free(demangled);
    }
    // TASKGRID_REGISTER takes the bare name: no parameters, no namespaces.
    std::string bare = name.substr(0, name.find('('));
    if (const size_t colons = bare.rfind("::"); colons != std::string::npos)
      bare.erase(0, colons + 2);
    return "taskgrid: task function '" + name + "' (" + hex +
           ") is not registered: register it with TASKGRID_REGISTER(" + bare +
           ") at namespace scope (or taskgrid::register_function) on every rank";
  }
  std::string where;
  if (info.dli_fname && info.dli_fbase) {
    char offset[32];
    std::snprintf(
        offset, sizeof offset, "+0x%zx",
        static_cast<size_t>(static_cast<char*>(address) - static_cast<char*>(info.dli_fbase)));
    where = std::string(" in ") + info.dli_fname + offset;
  }
  return std::string("taskgrid: the task function at ") + hex + where +
         " is not registered: register it with TASKGRID_REGISTER(name) at namespace scope (or "
         "taskgrid::register_function) on every rank (link with -rdynamic to see its name here)";
}

}  // namespace

uint64_t function_table_hash() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  // In id order: registration order may differ between builds.
  std::map<uint32_t, const std::string*> ordered;
  for (const auto& [id, name] : r.names) ordered.emplace(id, &name);
  uint64_t hash = 14695981039346656037ull;
  const auto mix = [&hash](unsigned char byte) { hash = (hash ^ byte) * 1099511628211ull; };
  for (const auto& [id, name] : ordered) {
    for (int shift = 0; shift < 32; shift += 8) mix(static_cast<unsigned char>(id >> shift));
    for (const char c : *name) mix(static_cast<unsigned char>(c));
    mix(0);
  }
  return hash;
}

const RegisteredFunction* find_function(FunctionId id) {
  // Every task looks its function up twice (planner, engine): a per-thread
  // cache keeps the lock and the hash lookup off that path. Entries are never
  // removed or moved (node-based map), so a cached pointer stays valid.
  struct CacheEntry {
    uint32_t id = 0;
    const RegisteredFunction* function = nullptr;
  };
  thread_local CacheEntry cache[64];
  CacheEntry& entry = cache[id.value & 63];
  if (entry.id == id.value && entry.function) return entry.function;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.by_id.find(id.value);
  if (it == r.by_id.end()) return nullptr;
  entry = CacheEntry{id.value, &it->second};
  return &it->second;
}

bool any_device_function() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.device_functions > 0;
}

}  // namespace detail

namespace {

FunctionId register_functions(const char* who, const char* name, TaskFunction cpu,
                              TaskFunction device) {
  detail::Registry& r = detail::registry();
  std::lock_guard lock(r.mutex);
  const uint32_t id = detail::name_hash(name);
  if (auto it = r.by_id.find(id); it != r.by_id.end()) {
    if (it->second.function == cpu && it->second.device_function == device &&
        std::string(it->second.name) == name)
      return {id};
    throw Error(std::string(who) + ": \"" + name + "\" clashes with \"" + it->second.name +
                "\" (same name or same hash); rename one of them");
  }
  for (TaskFunction fn : {cpu, device})
    if (fn && r.by_function.count(fn))
      throw Error(std::string(who) + ": the function registered as \"" + name +
                  "\" is already registered under another name");
  const std::string& stored = r.names.emplace(id, name).first->second;
  r.by_id.emplace(id, detail::RegisteredFunction{cpu, stored.c_str(), device});
  for (TaskFunction fn : {cpu, device})
    if (fn) r.by_function.emplace(fn, id);
  if (device) r.device_functions += 1;
  return {id};
}

}  // namespace

FunctionId register_function(const char* name, TaskFunction fn) {
  // Registrations run at static initialisation, possibly before the library's
  // own: an error here must already end with a message, not "terminate called".
  core::install_terminate_handler();
  if (!name || !*name || !fn) throw Error("taskgrid::register_function: empty name or function");
  return register_functions("taskgrid::register_function", name, fn, nullptr);
}

FunctionId register_device_function(const char* name, TaskFunction cpu, TaskFunction device) {
  core::install_terminate_handler();
  constexpr const char* kWho = "taskgrid::register_device_function";
  if (!name || !*name || !device)
    throw Error(std::string(kWho) + ": empty name or device function");
  if (cpu == device)
    throw Error(std::string(kWho) + ": \"" + name + "\" gives one function for both");
  return register_functions(kWho, name, cpu, device);
}

FunctionId function_id(TaskFunction fn) {
  detail::Registry& r = detail::registry();
  std::lock_guard lock(r.mutex);
  auto it = r.by_function.find(fn);
  if (it == r.by_function.end()) throw Error(detail::unregistered_message(fn));
  return {it->second};
}

}  // namespace taskgrid
