// The data structures LLVM 16's offloading runtime (libomptarget) passes to
// a plugin, as its plugin interface defines them. Written from the interface's
// observed layout; only what the plugin reads or writes.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// One symbol of the offload entry table: a kernel (size 0) or a declare
// target global (size > 0). In a table the plugin returns, `addr` is the
// plugin's handle for the kernel or the global's device address.
struct __tgt_offload_entry {
  void* addr;
  char* name;
  size_t size;
  int32_t flags;
  int32_t reserved;
};

// A device image: its bytes (an ELF shared object for x86_64 targets) and
// the entries it defines.
struct __tgt_device_image {
  void* ImageStart;
  void* ImageEnd;
  __tgt_offload_entry* EntriesBegin;
  __tgt_offload_entry* EntriesEnd;
};

// All images of one program or library (register_lib).
struct __tgt_bin_desc {
  int32_t NumDeviceImages;
  __tgt_device_image* DeviceImages;
  __tgt_offload_entry* HostEntriesBegin;
  __tgt_offload_entry* HostEntriesEnd;
};

struct __tgt_target_table {
  __tgt_offload_entry* EntriesBegin;
  __tgt_offload_entry* EntriesEnd;
};

// A queue of asynchronous work. A plugin that leaves Queue null tells
// libomptarget that nothing is pending, so it never asks again.
struct __tgt_async_info {
  void* Queue;
};

// Arguments of launch_kernel, version 2 (LLVM 16).
struct KernelArgsTy {
  uint32_t Version;
  uint32_t NumArgs;
  void** ArgBasePtrs;
  void** ArgPtrs;
  int64_t* ArgSizes;
  int64_t* ArgTypes;
  void** ArgNames;
  void** ArgMappers;
  uint64_t Tripcount;
  uint64_t Flags;  // bit 0: nowait
  uint32_t NumTeams[3];
  uint32_t ThreadLimit[3];
  uint32_t DynCGroupMem;
};

}  // extern "C"

namespace taskgrid::offload {

constexpr int32_t kOffloadSuccess = 0;
constexpr int32_t kOffloadFail = ~0;
constexpr uint64_t kKernelNoWait = 1;
// data_alloc kinds: default and device memory are the device's; host and
// shared memory would have to be visible to rank 0, which a remote rank's
// memory is not.
constexpr int32_t kAllocDefault = 0;
constexpr int32_t kAllocDevice = 3;

}  // namespace taskgrid::offload
