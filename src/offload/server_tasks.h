// What a device rank runs: the task functions the plugin submits (the same
// on every rank: registered before the runtime starts), the loaded images,
// and the device's memory.
//
// The images come from this rank's own copy of the executable (the program
// runs on every rank), or from rank 0 for a device server
// (taskgrid-offload-server, the MPMD form). A device's memory is one range of
// this rank's address space, reserved at start-up and handed out by the head (DeviceMemory): the
// addresses the head returns from data_alloc are real addresses here, so a kernel may follow a
// device pointer stored in device memory, as libomptarget's pointer
// attachment needs. Nothing in the range moves; the runtime orders every
// access to it through the allocation's data handle.
#pragma once

#include <cstddef>
#include <cstdint>

#include "offload/device_image.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::offload {

struct OffloadFunctions {
  FunctionId describe;      // out(table): the device's memory and an image's entry addresses
  FunctionId load;          // in(image), out(table): loads an image rank 0 sent, then describe
  FunctionId write;         // in(bytes), inout(allocation...): bytes to an address
  FunctionId write_inline;  // inout(allocation): the bytes after AddressArgs in the arguments
  FunctionId read;          // out(bytes), inout(allocation...): an address's bytes
  FunctionId copy;          // inout(allocation...): within the device
  FunctionId kernel;        // inout(allocation...): runs an entry of an image
  FunctionId release;       // inout(allocation): gives a freed range's pages back
};
// Registers them on first use; call it on every rank before start.
const OffloadFunctions& offload_functions();

// Task arguments (copied by value).
struct DescribeArgs {
  uint32_t image;
  uint32_t entries;
  uint64_t hash;
};
// describe's table: [memory base, memory bytes, whether the image is loaded
// here (0: send it), address of each entry (0: missing)].
constexpr size_t kDescribeHeaderWords = 3;
// load's arguments; its data is the image's bytes, then each entry's name
// with a terminating NUL.
struct LoadArgs {
  uint32_t image;
  uint32_t entries;
  uint64_t hash;
  uint64_t image_bytes;
};
// DescribeArgs::image for the memory alone (omp_target_alloc before any kernel).
constexpr uint32_t kNoImage = UINT32_MAX;
struct AddressArgs {
  uint64_t address;
};
// A transfer to a device up to this size travels in its task's arguments
// (one message with the task), not as data of its own.
constexpr size_t kInlineWriteBytes = 4096;
struct CopyArgs {
  uint64_t source;
  uint64_t destination;
  uint64_t bytes;
};
struct RangeArgs {
  uint64_t address;
  uint64_t bytes;
};
// Followed by `arguments` 64-bit values: each kernel argument with its
// offset applied.
struct KernelHeader {
  uint32_t image;
  uint32_t entry;
  uint32_t arguments;
  uint32_t reserved;
};

// Reserves the device memory (TASKGRID_OFFLOAD_MEMORY bytes, default: the
// node's memory) and loads the images of `desc` (nullptr: none yet, a device
// server). Throws std::runtime_error.
void prepare_device_rank(const __tgt_bin_desc* desc);

}  // namespace taskgrid::offload
