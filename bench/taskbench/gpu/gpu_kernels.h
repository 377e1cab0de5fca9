// Task Bench on CUDA GPUs (built where CMake finds nvcc, TASKBENCH_HAVE_CUDA):
// the gpu_compute_bound kernel, the task contract as a device kernel, and the
// few CUDA runtime calls the systems need. Plain C++: no CUDA header needed to
// include it; a stream is a cudaStream_t passed as void*.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace taskbench::gpu {

// Number of CUDA devices of this process; -1 when the CUDA runtime fails, with
// `error` set to cudaGetDeviceCount's error ("name: description").
int device_count(std::string& error);

// The calls below that return a std::string return "" on success, else a
// message naming the CUDA call and its error.

// Makes `device` the calling thread's current device.
std::string set_device(int device);

// Creates a stream of the current device into `stream`; destroys one; waits
// for one (the error of a kernel that failed on it shows here).
std::string create_stream(void*& stream);
void destroy_stream(void* stream);
std::string synchronize_stream(void* stream);

// Launches gpu_compute_bound on `stream`: one thread per lane, kGpuChains FMA
// chains each, `iterations` iterations (core/gpu_shared.h). Asynchronous;
// throws std::runtime_error when the launch fails.
void launch_compute_bound(void* stream, int64_t lanes, int64_t iterations);

// Where a device contract records what it found, in pinned host memory mapped
// into the devices' address space (one per stream: tasks on one stream run one
// after the other, so the host reads it after the task's kernels and before
// the next task's).
struct FailureRecord;

// The record of `stream` (allocated on first use, never freed).
FailureRecord* failure_record(void* stream);

// "" when the contracts run since the last call found nothing, else a
// diagnostic naming the first violation (graph, timestep, point, input and
// record, expected and found) and how many there were. Resets the record.
// Only after the stream has passed the contract kernels (host work on it).
std::string take_failure(FailureRecord* record);

// One task's contract on the device (spec 7.2-7.3 with device buffers): checks
// every record of every input against (timestep - 1, producer) and the
// -broadcast buffer's content, writes the output's records. Inputs are device
// pointers of `output_bytes` bytes each (their sizes are the caller's check).
struct DeviceTask {
  int64_t graph;
  int64_t timestep;
  int64_t point;
  char* output;
  size_t output_bytes;
  const char* const* inputs;  // host array of num_inputs device pointers
  const int64_t* producers;   // host array of num_inputs points
  size_t num_inputs;
  const char* broadcast;  // device pointer, nullptr without -broadcast
  size_t broadcast_bytes;
};

// Launches the contract kernels of `task` on `stream` (asynchronous); the
// violations go to `record`. Throws std::runtime_error when a launch fails.
void launch_contract(void* stream, const DeviceTask& task, FailureRecord* record);

}  // namespace taskbench::gpu
