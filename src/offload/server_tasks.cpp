#include "offload/server_tasks.h"

#include <ffi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace taskgrid::offload {

namespace {

// A device rank's state. The memory is set before the rank serves; images
// load before it serves (from the program) or while it does (sent to a
// server), so kernels look their entries up under the lock.
struct DeviceRank {
  std::mutex lock;
  LoadedImages images;                              // guarded by lock
  std::vector<std::vector<void*>> entry_addresses;  // per image, per entry; guarded by lock
  char* memory = nullptr;
  size_t memory_bytes = 0;
};

DeviceRank* device_rank = nullptr;

DeviceRank& this_device(const char* what) {
  if (!device_rank)
    throw Error(std::string("offload ") + what +
                ": this rank has no device state (it was not started as an OpenMP device)");
  return *device_rank;
}

void* at(uint64_t address) { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); }

// The entry addresses of image `index`, looked up by name (lock held).
void resolve(DeviceRank& device, size_t index, const std::vector<const char*>& names) {
  if (device.entry_addresses.size() <= index) device.entry_addresses.resize(index + 1);
  std::vector<void*>& addresses = device.entry_addresses[index];
  addresses.clear();
  for (const char* name : names) addresses.push_back(device.images.symbol(index, name));
}

// Fills describe's table for image `image` with `entries` entries (lock held).
void fill_table(DeviceRank& device, uint32_t image, uint32_t entries, uint64_t hash,
                TaskContext& ctx, size_t table_index) {
  auto* table = ctx.data_as<uint64_t>(table_index);
  table[0] = reinterpret_cast<uintptr_t>(device.memory);
  table[1] = device.memory_bytes;
  table[2] = 0;
  if (image == kNoImage) return;
  if (!device.images.has(image)) return;  // rank 0 sends it
  if (device.images.hash(image) != hash)
    throw Error("device image " + std::to_string(image) +
                " differs from rank 0's: every rank must run the same executable");
  const std::vector<void*>& addresses = device.entry_addresses.at(image);
  if (addresses.size() != entries ||
      ctx.size(table_index) != (kDescribeHeaderWords + entries) * sizeof(uint64_t))
    throw Error("device image " + std::to_string(image) + ": entry table mismatch");
  table[2] = 1;
  for (size_t i = 0; i < addresses.size(); ++i)
    table[kDescribeHeaderWords + i] = reinterpret_cast<uintptr_t>(addresses[i]);
}

void describe(TaskContext& ctx) {
  const auto args = ctx.arg<DescribeArgs>();
  DeviceRank& device = this_device("describe");
  std::lock_guard guard(device.lock);
  fill_table(device, args.image, args.entries, args.hash, ctx, 0);
}

void load(TaskContext& ctx) {
  const auto args = ctx.arg<LoadArgs>();
  DeviceRank& device = this_device("load");
  const auto* bytes = static_cast<const char*>(ctx.data(0));
  const size_t size = ctx.size(0);
  if (args.image_bytes > size) throw Error("the device image sent is truncated");
  std::vector<const char*> names;
  for (size_t at_byte = args.image_bytes; names.size() < args.entries; ++at_byte) {
    if (at_byte >= size) throw Error("the entry names sent are truncated");
    names.push_back(bytes + at_byte);
    at_byte += std::strlen(bytes + at_byte);
  }
  std::lock_guard guard(device.lock);
  device.images.load_sent(args.image, bytes, args.image_bytes);
  resolve(device, args.image, names);
  fill_table(device, args.image, args.entries, args.hash, ctx, 1);
}

void write(TaskContext& ctx) {
  const auto args = ctx.arg<AddressArgs>();
  if (ctx.size(0)) std::memcpy(at(args.address), ctx.data(0), ctx.size(0));
}

void write_inline(TaskContext& ctx) {
  const auto args = ctx.arg<AddressArgs>();
  const size_t bytes = ctx.args_size() - sizeof args;
  std::memcpy(at(args.address), static_cast<const char*>(ctx.args()) + sizeof args, bytes);
}

void read(TaskContext& ctx) {
  const auto args = ctx.arg<AddressArgs>();
  if (ctx.size(0)) std::memcpy(ctx.data(0), at(args.address), ctx.size(0));
}

void copy(TaskContext& ctx) {
  const auto args = ctx.arg<CopyArgs>();
  std::memmove(at(args.destination), at(args.source), args.bytes);
}

void run_kernel(TaskContext& ctx) {
  const auto header = ctx.arg<KernelHeader>();
  DeviceRank& device = this_device("kernel");
  void* function = nullptr;
  {
    std::lock_guard guard(device.lock);
    if (header.image >= device.entry_addresses.size() ||
        header.entry >= device.entry_addresses[header.image].size())
      throw Error("kernel entry " + std::to_string(header.entry) + " of image " +
                  std::to_string(header.image) + " is not loaded on this rank");
    function = device.entry_addresses[header.image][header.entry];
  }
  if (!function) throw Error("the kernel's symbol is missing from the device image");
  const size_t count = header.arguments;
  if (ctx.args_size() != sizeof header + count * sizeof(uint64_t))
    throw Error("kernel arguments are truncated");
  // The outlined region takes each argument as one pointer-sized value; libffi
  // makes a call with any number of them.
  std::vector<void*> values(count);
  std::memcpy(values.data(), static_cast<const char*>(ctx.args()) + sizeof header,
              count * sizeof(void*));
  std::vector<ffi_type*> types(count, &ffi_type_pointer);
  std::vector<void*> slots(count);
  for (size_t i = 0; i < count; ++i) slots[i] = &values[i];
  ffi_cif cif;
  if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, static_cast<unsigned>(count), &ffi_type_void,
                   types.data()) != FFI_OK)
    throw Error("libffi cannot prepare a call with " + std::to_string(count) + " arguments");
  ffi_call(&cif, FFI_FN(function), nullptr, slots.data());
}

// The pages wholly inside a freed range go back to the system; the range is
// handed out again only after this task (the head's quarantine).
void release_range(TaskContext& ctx) {
  const auto args = ctx.arg<RangeArgs>();
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t begin = (args.address + page - 1) / page * page;
  const uint64_t end = (args.address + args.bytes) / page * page;
  if (end > begin) madvise(at(begin), end - begin, MADV_DONTNEED);
}

size_t device_memory_bytes() {
  if (const char* text = std::getenv("TASKGRID_OFFLOAD_MEMORY")) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long bytes = std::strtoull(text, &end, 10);
    if (errno || end == text || *end || bytes == 0)
      throw std::runtime_error(std::string("TASKGRID_OFFLOAD_MEMORY=") + text +
                               ": expected a number of bytes > 0");
    return static_cast<size_t>(bytes);
  }
  return static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

const OffloadFunctions& offload_functions() {
  static const OffloadFunctions functions{
      register_function("taskgrid.offload.describe", describe),
      register_function("taskgrid.offload.load", load),
      register_function("taskgrid.offload.write", write),
      register_function("taskgrid.offload.write_inline", write_inline),
      register_function("taskgrid.offload.read", read),
      register_function("taskgrid.offload.copy", copy),
      register_function("taskgrid.offload.kernel", run_kernel),
      register_function("taskgrid.offload.release", release_range)};
  return functions;
}

void prepare_device_rank(const __tgt_bin_desc* desc) {
  auto device = std::make_unique<DeviceRank>();
  if (desc) {
    device->images.load(*desc);
    for (int32_t i = 0; i < desc->NumDeviceImages; ++i) {
      const __tgt_device_image& image = desc->DeviceImages[i];
      std::vector<const char*> names;
      for (const __tgt_offload_entry* entry = image.EntriesBegin; entry != image.EntriesEnd;
           ++entry)
        names.push_back(entry->name);
      resolve(*device, static_cast<size_t>(i), names);
    }
  }
  // Reserved, not committed: pages are taken when first written.
  device->memory_bytes = device_memory_bytes();
  void* memory = mmap(nullptr, device->memory_bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED)
    throw std::runtime_error("cannot reserve " + std::to_string(device->memory_bytes) +
                             " bytes of device memory: " + std::strerror(errno) +
                             " (set TASKGRID_OFFLOAD_MEMORY lower)");
  device->memory = static_cast<char*>(memory);
  device_rank = device.release();
}

}  // namespace taskgrid::offload
