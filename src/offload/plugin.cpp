// TaskGrid's OpenMP offload plugin: LLVM 16's libomptarget loads it as
// libomptarget.rtl.ppc64.so (the first plugin slot it tries, so it claims
// x86_64 device images before LLVM's own x86_64 plugin) and sees the other
// ranks of the MPI job as OpenMP devices: rank 0 runs main, rank k+1 is
// device k.
//
// Every rank loads the plugin with the program. When libomptarget registers
// the program's images (register_lib, from a constructor, before main), rank
// 0 starts TaskGrid in cluster mode and returns; every other rank loads the
// images from its own copy of the executable, reserves the device's memory
// and serves TaskGrid's engine until rank 0 finishes, then exits: it never
// runs main.
//
// Device memory is memory of the device's rank at fixed addresses
// (server_tasks.h); each allocation is a TaskGrid data handle that orders
// every access to it. Transfers, copies and kernels are tasks on the
// device's rank; the data of a transfer moves as TaskGrid data, rank to
// rank. The plugin answers an asynchronous operation as soon as it is
// submitted: the engine orders it after everything submitted before on the
// same allocations, so no later operation can tell. Only a transfer into
// host memory and a region without nowait wait.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "offload/device_image.h"
#include "offload/device_memory.h"
#include "offload/omptarget_abi.h"
#include "offload/server_tasks.h"
#include "runtime/internal_api.h"
#include "runtime/options.h"
#include "runtime/watchdog.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::offload {
namespace {

// A kernel as the plugin hands it to libomptarget (the entry's `addr`).
struct Kernel {
  int device;
  uint32_t image;
  uint32_t entry;
  std::string task_name;  // for error messages: device, kernel
};

struct Device {
  int rank = 0;
  bool described = false;
  DeviceMemory memory;
  // Each loaded image's table, as returned to libomptarget (kept alive).
  std::deque<std::vector<__tgt_offload_entry>> tables;
  std::deque<__tgt_target_table> table_headers;
  std::vector<DataHandle> globals;  // every kernel may touch them
};

enum class Role { undecided, head, device, off };

// What TASKGRID_OFFLOAD_STATS=1 prints when the program ends.
struct Counters {
  std::atomic<uint64_t> kernels{0};
  std::atomic<uint64_t> to_device{0}, to_device_bytes{0};
  std::atomic<uint64_t> from_device{0}, from_device_bytes{0};
  std::atomic<uint64_t> between_devices{0}, between_devices_bytes{0};
  std::atomic<uint64_t> allocations{0};
  std::atomic<uint64_t> unresolved{0};  // kernels ordered after every allocation
};

struct Plugin {
  std::mutex lock;  // guards everything below but `role` and `finished`
  std::atomic<Role> role{Role::undecided};
  std::atomic<bool> finished{false};
  int devices = 0;
  int rank = 0;
  const __tgt_bin_desc* program = nullptr;  // the first registered image set
  std::vector<Device> device;
  std::deque<Kernel> kernels;
  // Per device, the last kernel submitted to it: named when its rank stops.
  std::unique_ptr<std::atomic<const Kernel*>[]> last_kernel;
  Counters counters;
};

Plugin& plugin() {
  static Plugin* instance = new Plugin;  // never destroyed: used from atexit handlers
  return *instance;
}

void report(const std::string& message) {
  std::fprintf(stderr, "error: taskgrid offload: rank %d: %s\n", plugin().rank, message.c_str());
  std::fflush(stderr);
}

std::string device_name(int device) {
  return "device " + std::to_string(device) + " (rank " + std::to_string(device + 1) + ")";
}

// Runs an entry point's work: a failure is reported and becomes
// OFFLOAD_FAIL, which libomptarget turns into its own error.
template <typename Work>
int32_t guarded(const char* call, Work&& work) {
  try {
    work();
    return kOffloadSuccess;
  } catch (const std::exception& error) {
    report(std::string(call) + ": " + error.what());
    return kOffloadFail;
  }
}

Device& device_at(int device) {
  Plugin& p = plugin();
  if (p.role.load() != Role::head || device < 0 || device >= p.devices)
    throw Error("no OpenMP device " + std::to_string(device) + " here");
  if (p.finished.load()) throw Error("the runtime has finished (called after exit)");
  return p.device[static_cast<size_t>(device)];
}

uint64_t address_of(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

TaskOptions on_rank(int rank, const char* name = nullptr) {
  TaskOptions options;
  options.rank = rank;
  options.name = name;
  return options;
}

// The allocation handle of an address that must be in device memory; `what`
// says which address it is (for the message).
DataHandle allocation_handle(Device& device, int index, uint64_t address, const char* what) {
  std::lock_guard guard(plugin().lock);
  const DeviceMemory::Allocation* allocation = device.memory.find(address);
  if (!allocation) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
    throw Error(std::string("the ") + what + " " + text + " is in no allocation of " +
                device_name(index));
  }
  return allocation->handle;
}

// The device's memory range and the image's entry addresses, from its rank.
std::vector<uint64_t> describe_device(int index, uint32_t image, uint32_t entries, uint64_t hash) {
  std::vector<uint64_t> table(kDescribeHeaderWords + entries);
  const DataHandle result = detail::enter_data_unfilled(table.data(), table.size() * 8);
  submit(offload_functions().describe, {out(result)},
         on_rank(index + 1, "offload: describe device"), DescribeArgs{image, entries, hash});
  exit_data(result);
  return table;
}

// A device server (taskgrid-offload-server) runs no copy of the program: the
// image goes to it, with its entries' names, and it loads it.
std::vector<uint64_t> send_image(int index, uint32_t image_index, const __tgt_device_image& image,
                                 uint64_t hash) {
  const auto entries = static_cast<uint32_t>(image.EntriesEnd - image.EntriesBegin);
  const size_t image_bytes = static_cast<size_t>(static_cast<const char*>(image.ImageEnd) -
                                                 static_cast<const char*>(image.ImageStart));
  std::vector<char> bytes(static_cast<const char*>(image.ImageStart),
                          static_cast<const char*>(image.ImageEnd));
  for (const __tgt_offload_entry* entry = image.EntriesBegin; entry != image.EntriesEnd; ++entry)
    bytes.insert(bytes.end(), entry->name, entry->name + std::strlen(entry->name) + 1);
  std::vector<uint64_t> table(kDescribeHeaderWords + entries);
  const DataHandle sent = enter_data(bytes.data(), bytes.size());
  const DataHandle result = detail::enter_data_unfilled(table.data(), table.size() * 8);
  submit(offload_functions().load, {in(sent), out(result)},
         on_rank(index + 1, "offload: load an image"),
         LoadArgs{image_index, entries, hash, image_bytes});
  release(sent);
  exit_data(result);
  return table;
}

// The device's memory range, asked of its rank once (load_binary, or the
// first allocation where omp_target_alloc comes before any kernel).
void describe_memory(Device& device, const std::vector<uint64_t>& table) {
  std::lock_guard guard(plugin().lock);
  if (device.described) return;
  device.memory.set_range(table[0], table[1]);
  device.described = true;
}

uint32_t image_index(const __tgt_device_image* image) {
  const __tgt_bin_desc* program = plugin().program;
  // libomptarget hands over a copy of the registered image, unwrapped.
  for (int32_t i = 0; program && i < program->NumDeviceImages; ++i) {
    const __tgt_device_image& registered = program->DeviceImages[i];
    if (registered.EntriesBegin == image->EntriesBegin &&
        image->ImageStart >= registered.ImageStart && image->ImageEnd <= registered.ImageEnd)
      return static_cast<uint32_t>(i);
  }
  throw Error(
      "a device image of a library registered after the program's: only the program's own "
      "images are loaded on the device ranks");
}

void print_counters() {
  const Plugin& p = plugin();
  const Counters& c = p.counters;
  std::fprintf(stderr,
               "taskgrid offload: %d devices: %llu kernels, %llu allocations, %llu transfers to "
               "devices (%llu bytes), %llu from devices (%llu bytes), %llu between devices (%llu "
               "bytes), %llu kernels with unresolved pointers\n",
               p.devices, static_cast<unsigned long long>(c.kernels.load()),
               static_cast<unsigned long long>(c.allocations.load()),
               static_cast<unsigned long long>(c.to_device.load()),
               static_cast<unsigned long long>(c.to_device_bytes.load()),
               static_cast<unsigned long long>(c.from_device.load()),
               static_cast<unsigned long long>(c.from_device_bytes.load()),
               static_cast<unsigned long long>(c.between_devices.load()),
               static_cast<unsigned long long>(c.between_devices_bytes.load()),
               static_cast<unsigned long long>(c.unresolved.load()));
  std::fflush(stderr);
}

void count(std::atomic<uint64_t>& operations, std::atomic<uint64_t>& bytes, int64_t size) {
  operations.fetch_add(1, std::memory_order_relaxed);
  bytes.fetch_add(static_cast<uint64_t>(size), std::memory_order_relaxed);
}

// Added to "rank R stopped responding": which device that is, and what it
// was last given to run.
std::string stopped_rank_note(int rank) {
  const Plugin& p = plugin();
  if (rank < 1 || rank > p.devices) return "";
  std::string note = "it is OpenMP device " + std::to_string(rank - 1);
  if (const Kernel* kernel = p.last_kernel[static_cast<size_t>(rank - 1)].load())
    note += "; the last kernel submitted to it: " +
            kernel->task_name.substr(kernel->task_name.rfind(' ') + 1);
  return note;
}

void finish_at_exit() {
  Plugin& p = plugin();
  if (p.role.load() != Role::head || p.finished.exchange(true)) return;
  if (const char* stats = std::getenv("TASKGRID_OFFLOAD_STATS");
      stats && std::strcmp(stats, "1") == 0)
    print_counters();
  try {
    finish(0);
  } catch (const std::exception& error) {
    report(std::string("finishing the runtime: ") + error.what());
    std::_Exit(1);
  }
}

constexpr size_t kReclaimBatch = 64;

// Waits for the ranges freed so far and makes them available again.
void reclaim_freed(Device& device, std::unique_lock<std::mutex>& lock) {
  std::vector<DeviceMemory::Freed> freed = device.memory.take_freed();
  lock.unlock();
  for (const DeviceMemory::Freed& range : freed) {
    wait(range.handle);
    release(range.handle);
  }
  lock.lock();
  for (const DeviceMemory::Freed& range : freed) device.memory.reuse(range.begin, range.bytes);
}

}  // namespace
}  // namespace taskgrid::offload

using namespace taskgrid;
using namespace taskgrid::offload;

extern "C" {

int32_t __tgt_rtl_init_plugin() {
  Plugin& p = plugin();
  // Registered on every rank alike, before the runtime starts.
  (void)offload_functions();
  const std::optional<runtime::LauncherJob> job = runtime::launcher_job();
  const char* off = std::getenv("TASKGRID_OFFLOAD");
  if (!job || (off && std::strcmp(off, "off") == 0)) {
    // Alone (or switched off): no devices, and libomptarget drops the plugin.
    p.role = Role::off;
    return kOffloadSuccess;
  }
  p.rank = job->rank;
  p.devices = job->size - 1;
  return kOffloadSuccess;
}

int32_t __tgt_rtl_deinit_plugin() { return kOffloadSuccess; }

int32_t __tgt_rtl_number_of_devices() {
  return plugin().role.load() == Role::off ? 0 : plugin().devices;
}

int32_t __tgt_rtl_is_valid_binary(__tgt_device_image* image) {
  return image && is_x86_64_shared_object(*image) ? 1 : 0;
}

int32_t __tgt_rtl_register_lib(__tgt_bin_desc* desc) {
  Plugin& p = plugin();
  if (p.role.load() != Role::undecided) return kOffloadSuccess;
  p.program = desc;
  if (p.rank != 0) {
    // A device rank: serves until rank 0 finishes, then exits (start does
    // not return here).
    p.role = Role::device;
    try {
      prepare_device_rank(desc);
      start(nullptr, nullptr, Mode::cluster);
    } catch (const std::exception& error) {
      report(std::string("cannot serve as OpenMP device ") + std::to_string(p.rank - 1) + ": " +
             error.what());
      std::_Exit(1);
    }
    std::_Exit(1);  // not reached
  }
  try {
    start(nullptr, nullptr, Mode::cluster);
  } catch (const std::exception& error) {
    report(std::string("cannot start the runtime: ") + error.what());
    std::_Exit(1);
  }
  if (num_ranks() != p.devices + 1) {
    report("the launcher said " + std::to_string(p.devices + 1) + " ranks but MPI has " +
           std::to_string(num_ranks()));
    std::_Exit(1);
  }
  p.device.resize(static_cast<size_t>(p.devices));
  for (int d = 0; d < p.devices; ++d) p.device[static_cast<size_t>(d)].rank = d + 1;
  p.last_kernel = std::make_unique<std::atomic<const Kernel*>[]>(static_cast<size_t>(p.devices));
  runtime::set_stopped_rank_note(stopped_rank_note);
  p.role = Role::head;
  // After the runtime's own exit check, so that it runs first: the runtime
  // finishes when the program exits, after the program's offload entries are
  // unregistered.
  std::atexit(finish_at_exit);
  return kOffloadSuccess;
}

int32_t __tgt_rtl_unregister_lib(__tgt_bin_desc*) { return kOffloadSuccess; }

int64_t __tgt_rtl_init_requires(int64_t flags) { return flags; }

int32_t __tgt_rtl_supports_empty_images() { return 0; }

int32_t __tgt_rtl_init_device(int32_t id) {
  return guarded("init_device", [&] { device_at(id); });
}

int32_t __tgt_rtl_deinit_device(int32_t) { return kOffloadSuccess; }

__tgt_target_table* __tgt_rtl_load_binary(int32_t id, __tgt_device_image* image) {
  __tgt_target_table* result = nullptr;
  guarded("load_binary", [&] {
    Device& device = device_at(id);
    const uint32_t index = image_index(image);
    const auto entries = static_cast<uint32_t>(image->EntriesEnd - image->EntriesBegin);
    const uint64_t hash = image_hash(*image);
    std::vector<uint64_t> table = describe_device(id, index, entries, hash);
    if (!table[2]) table = send_image(id, index, *image, hash);
    if (!table[2]) throw Error("the device image did not load on " + device_name(id));
    std::vector<DataHandle> globals;
    for (uint32_t i = 0; i < entries; ++i)
      if (image->EntriesBegin[i].size > 0)
        globals.push_back(detail::enter_data_unfilled(nullptr, 0));
    describe_memory(device, table);
    Plugin& p = plugin();
    std::lock_guard guard(p.lock);
    std::vector<__tgt_offload_entry>& out = device.tables.emplace_back();
    size_t next_global = 0;
    for (uint32_t i = 0; i < entries; ++i) {
      __tgt_offload_entry entry = image->EntriesBegin[i];
      const uint64_t address = table[kDescribeHeaderWords + i];
      if (!address)
        throw Error(std::string("entry '") + entry.name + "' is missing from the device image on " +
                    device_name(id));
      if (entry.size > 0) {
        // A declare target global: its address on the device's rank.
        const DataHandle handle = globals[next_global++];
        device.memory.add(address, entry.size, handle);
        device.globals.push_back(handle);
        entry.addr = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
      } else {
        p.kernels.push_back(
            Kernel{id, index, i, "OpenMP " + device_name(id) + " kernel " + entry.name});
        entry.addr = &p.kernels.back();
      }
      out.push_back(entry);
    }
    device.table_headers.push_back({out.data(), out.data() + out.size()});
    result = &device.table_headers.back();
  });
  return result;
}

void* __tgt_rtl_data_alloc(int32_t id, int64_t size, void*, int32_t kind) {
  void* result = nullptr;
  guarded("data_alloc", [&] {
    Device& device = device_at(id);
    if (kind != kAllocDefault && kind != kAllocDevice)
      throw Error("host and shared allocations are not available on a remote device");
    if (size < 0) throw Error("negative size");
    bool described;
    {
      std::lock_guard guard(plugin().lock);
      described = device.described;
    }
    if (!described) describe_memory(device, describe_device(id, kNoImage, 0, 0));
    const DataHandle handle = detail::enter_data_unfilled(nullptr, 0);
    std::unique_lock lock(plugin().lock);
    // Freed ranges keep their handles until reclaimed: reclaimed in batches,
    // so that a program mapping fresh data for every region does not
    // accumulate them (their tasks are long done by then: no wait).
    if (device.memory.freed_count() >= kReclaimBatch) reclaim_freed(device, lock);
    std::optional<uint64_t> begin = device.memory.take(static_cast<uint64_t>(size));
    while (!begin && device.memory.has_freed()) {
      reclaim_freed(device, lock);
      begin = device.memory.take(static_cast<uint64_t>(size));
    }
    if (!begin) {
      lock.unlock();
      release(handle);
      throw Error("out of device memory on " + device_name(id) + " for " + std::to_string(size) +
                  " bytes (TASKGRID_OFFLOAD_MEMORY)");
    }
    device.memory.add(*begin, static_cast<uint64_t>(size), handle);
    plugin().counters.allocations.fetch_add(1, std::memory_order_relaxed);
    result = reinterpret_cast<void*>(static_cast<uintptr_t>(*begin));
  });
  return result;
}

int32_t __tgt_rtl_data_delete(int32_t id, void* target, int32_t) {
  return guarded("data_delete", [&] {
    Device& device = device_at(id);
    std::optional<DeviceMemory::Allocation> allocation;
    {
      std::lock_guard guard(plugin().lock);
      allocation = device.memory.remove(address_of(target));
    }
    if (!allocation) throw Error("data_delete of an address that was not allocated");
    submit(offload_functions().release, {inout(allocation->handle)},
           on_rank(device.rank, "offload: free"),
           RangeArgs{allocation->begin, allocation->end - allocation->begin});
  });
}

int32_t __tgt_rtl_data_submit(int32_t id, void* target, void* host, int64_t size) {
  return guarded("data_submit", [&] {
    if (size <= 0) return;
    Device& device = device_at(id);
    const uint64_t address = address_of(target);
    const DataHandle handle = allocation_handle(device, id, address, "target address");
    {
      // Device addresses written into device memory: a kernel reaching this
      // allocation may follow them.
      std::lock_guard guard(plugin().lock);
      device.memory.note_pointers(address, host, static_cast<uint64_t>(size));
    }
    if (static_cast<size_t>(size) <= kInlineWriteBytes) {
      // Small (scalars, attached pointers): the bytes ride with the task.
      char packed[sizeof(AddressArgs) + kInlineWriteBytes];
      const AddressArgs args{address};
      std::memcpy(packed, &args, sizeof args);
      std::memcpy(packed + sizeof args, host, static_cast<size_t>(size));
      const DataAccess access = inout(handle);
      submit_packed(offload_functions().write_inline, &access, 1,
                    on_rank(device.rank, "offload: data to the device"), packed,
                    sizeof args + static_cast<size_t>(size));
    } else {
      const DataHandle bytes = enter_data(host, static_cast<size_t>(size));
      submit(offload_functions().write, {in(bytes), inout(handle)},
             on_rank(device.rank, "offload: data to the device"), AddressArgs{address});
      release(bytes);
    }
    count(plugin().counters.to_device, plugin().counters.to_device_bytes, size);
  });
}

int32_t __tgt_rtl_data_submit_async(int32_t id, void* target, void* host, int64_t size,
                                    __tgt_async_info*) {
  return __tgt_rtl_data_submit(id, target, host, size);
}

int32_t __tgt_rtl_data_retrieve(int32_t id, void* host, void* target, int64_t size) {
  return guarded("data_retrieve", [&] {
    if (size <= 0) return;
    Device& device = device_at(id);
    const uint64_t address = address_of(target);
    const DataHandle handle = allocation_handle(device, id, address, "target address");
    const DataHandle bytes = detail::enter_data_unfilled(host, static_cast<size_t>(size));
    submit(offload_functions().read, {out(bytes), inout(handle)},
           on_rank(device.rank, "offload: data from the device"), AddressArgs{address});
    exit_data(bytes);
    count(plugin().counters.from_device, plugin().counters.from_device_bytes, size);
  });
}

int32_t __tgt_rtl_data_retrieve_async(int32_t id, void* host, void* target, int64_t size,
                                      __tgt_async_info*) {
  return __tgt_rtl_data_retrieve(id, host, target, size);
}

int32_t __tgt_rtl_is_data_exchangable(int32_t source, int32_t destination) {
  const Plugin& p = plugin();
  return source >= 0 && destination >= 0 && source < p.devices && destination < p.devices;
}

int32_t __tgt_rtl_data_exchange(int32_t source_id, void* source, int32_t destination_id,
                                void* destination, int64_t size) {
  return guarded("data_exchange", [&] {
    if (size <= 0) return;
    Device& from = device_at(source_id);
    Device& to = device_at(destination_id);
    const uint64_t source_address = address_of(source);
    const uint64_t destination_address = address_of(destination);
    const DataHandle source_handle =
        allocation_handle(from, source_id, source_address, "source address");
    const DataHandle destination_handle =
        allocation_handle(to, destination_id, destination_address, "destination address");
    count(plugin().counters.between_devices, plugin().counters.between_devices_bytes, size);
    if (source_id == destination_id) {
      // One task on the device's rank (one access when both are in one allocation).
      const DataAccess accesses[2] = {inout(source_handle), inout(destination_handle)};
      const CopyArgs args{source_address, destination_address, static_cast<uint64_t>(size)};
      submit_packed(offload_functions().copy, accesses, source_handle == destination_handle ? 1 : 2,
                    on_rank(from.rank, "offload: copy on the device"), &args, sizeof args);
      return;
    }
    // Rank to rank: read on the source's rank, written on the destination's;
    // the bytes travel between them, not through rank 0.
    const DataHandle bytes = detail::enter_data_unfilled(nullptr, static_cast<size_t>(size));
    submit(offload_functions().read, {out(bytes), inout(source_handle)},
           on_rank(from.rank, "offload: data off the device"), AddressArgs{source_address});
    submit(offload_functions().write, {in(bytes), inout(destination_handle)},
           on_rank(to.rank, "offload: data onto the device"), AddressArgs{destination_address});
    release(bytes);
  });
}

int32_t __tgt_rtl_data_exchange_async(int32_t source_id, void* source, int32_t destination_id,
                                      void* destination, int64_t size, __tgt_async_info*) {
  return __tgt_rtl_data_exchange(source_id, source, destination_id, destination, size);
}

int32_t __tgt_rtl_launch_kernel(int32_t id, void* entry, void** arguments, ptrdiff_t* offsets,
                                KernelArgsTy* kernel_args, __tgt_async_info*) {
  return guarded("launch_kernel", [&] {
    Device& device = device_at(id);
    const auto* kernel = static_cast<const Kernel*>(entry);
    if (!kernel || kernel->device != id) throw Error("unknown kernel entry");
    const uint32_t count = kernel_args->NumArgs;
    std::vector<char> packed(sizeof(KernelHeader) + count * sizeof(uint64_t));
    const KernelHeader header{kernel->image, kernel->entry, count, 0};
    std::memcpy(packed.data(), &header, sizeof header);
    std::vector<DataAccess> accesses;
    std::vector<DataHandle> handles;
    {
      std::lock_guard guard(plugin().lock);
      bool unresolved = false;
      for (uint32_t i = 0; i < count; ++i) {
        // Forwarded exactly: the argument with its offset.
        const uint64_t value = address_of(arguments[i]) + static_cast<uint64_t>(offsets[i]);
        std::memcpy(packed.data() + sizeof header + i * sizeof(uint64_t), &value, sizeof value);
        // The access: the allocation the argument falls in, with everything
        // whose address was attached inside it.
        const bool found = device.memory.reachable(address_of(arguments[i]), handles) |
                           device.memory.reachable(value, handles);
        // A pointer near the device's memory but in none of its allocations:
        // libomptarget extrapolates the device address of an array only part
        // of which is present (a whole-array map inside `target data` of some
        // rows), and the kernel reaches the present part from there. Which
        // allocation that is cannot be told, so the kernel takes them all.
        if (!found && device.memory.near(value)) unresolved = true;
      }
      if (unresolved) {
        device.memory.all_handles(handles);
        plugin().counters.unresolved.fetch_add(1, std::memory_order_relaxed);
      }
      for (DataHandle global : device.globals)
        if (std::find(handles.begin(), handles.end(), global) == handles.end())
          handles.push_back(global);
    }
    for (DataHandle handle : handles) accesses.push_back(inout(handle));
    const bool nowait = (kernel_args->Flags & kKernelNoWait) != 0;
    DataHandle done;
    if (!nowait) {
      done = detail::enter_data_unfilled(nullptr, 0);
      accesses.push_back(out(done));
    }
    submit_packed(offload_functions().kernel, accesses.data(), accesses.size(),
                  on_rank(device.rank, kernel->task_name.c_str()), packed.data(), packed.size());
    plugin().counters.kernels.fetch_add(1, std::memory_order_relaxed);
    plugin().last_kernel[static_cast<size_t>(id)].store(kernel);
    if (!nowait) {
      wait(done);
      release(done);
    }
  });
}

int32_t __tgt_rtl_synchronize(int32_t, __tgt_async_info* async_info) {
  if (async_info) async_info->Queue = nullptr;
  return kOffloadSuccess;
}

int32_t __tgt_rtl_query_async(int32_t, __tgt_async_info* async_info) {
  if (async_info) async_info->Queue = nullptr;
  return kOffloadSuccess;
}

void __tgt_rtl_print_device_info(int32_t id) {
  std::printf("    TaskGrid device %d: MPI rank %d\n", id, id + 1);
}

}  // extern "C"
