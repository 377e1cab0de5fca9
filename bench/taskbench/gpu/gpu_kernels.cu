// Task Bench's CUDA kernels (see gpu_kernels.h).
#include <cuda_runtime.h>

#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "core/gpu_shared.h"
#include "gpu/gpu_kernels.h"

namespace taskbench::gpu {

struct FailureRecord {
  unsigned long long failures;  // violations found (atomicAdd)
  int claimed;                  // 1 once the first violation below is written
  int kind;                     // 0: an input record, 1: the broadcast buffer
  int64_t graph, timestep, point;
  int64_t input, producer, record, records;  // kind 0
  int64_t found_timestep, found_point;       // kind 0
  int64_t offset;                            // kind 1: byte offset
};

namespace {

constexpr int kThreads = 256;
constexpr size_t kRecordBytes = 16;
// Inputs per contract launch: their pointers and producers travel as kernel
// parameters (well below the 4 KiB limit); more inputs take more launches.
constexpr int kInputsPerLaunch = 64;
// Blocks of one contract launch at most (the kernel strides over the rest).
constexpr unsigned kMaxContractBlocks = 1024;

// Read only when the result equals a value the arithmetic cannot produce (the
// chains stay in (-1, 0)), so the compiler must keep the loop but nothing is
// written in practice.
__device__ double g_result_sink;

std::string cuda_message(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

void check_launch(const char* what) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess)
    throw std::runtime_error(std::string(what) + " did not launch (" + cuda_message(error) + ")");
}

__global__ void __launch_bounds__(kThreads)
    compute_bound_kernel(int64_t lanes, int64_t iterations) {
  const int64_t lane = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (lane >= lanes) return;
  double x[kGpuChains];
#pragma unroll
  for (int c = 0; c < kGpuChains; ++c) x[c] = gpu_chain_start(lane, c);
  // Unrolled by 8: the loop's own instructions fit beside the FMAs.
  int64_t i = 0;
  for (; i + 8 <= iterations; i += 8) {
#pragma unroll
    for (int u = 0; u < 8; ++u) {
#pragma unroll
      for (int c = 0; c < kGpuChains; ++c) x[c] = fma(x[c], x[c], x[c]);
    }
  }
  for (; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < kGpuChains; ++c) x[c] = fma(x[c], x[c], x[c]);
  }
  double sum = 0.0;
#pragma unroll
  for (int c = 0; c < kGpuChains; ++c) sum += x[c];
  if (sum == 1.0) g_result_sink = sum;
}

struct ContractLaunch {
  int64_t graph, timestep, point;
  char* output;           // nullptr: not this launch's part
  int64_t records;        // per buffer: floor(output_bytes / 16)
  const char* broadcast;  // nullptr: not this launch's part
  int64_t broadcast_bytes;
  int num_inputs;
  int first_input;  // index of inputs[0] among the task's inputs
  const char* inputs[kInputsPerLaunch];
  int64_t producers[kInputsPerLaunch];
};

__device__ bool claim(FailureRecord* record) {
  atomicAdd(&record->failures, 1ULL);
  return atomicCAS(&record->claimed, 0, 1) == 0;
}

// Items: the input records (num_inputs * records), then the output records
// (records, when output), then the broadcast words and tail bytes.
__global__ void __launch_bounds__(kThreads)
    contract_kernel(const ContractLaunch task, FailureRecord* record) {
  const int64_t input_items = task.num_inputs * task.records;
  const int64_t output_items = task.output ? task.records : 0;
  const int64_t words = task.broadcast ? task.broadcast_bytes / 8 : 0;
  const int64_t tail = task.broadcast ? task.broadcast_bytes - words * 8 : 0;
  const int64_t items = input_items + output_items + words + tail;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t item = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; item < items;
       item += stride) {
    if (item < input_items) {
      const int k = static_cast<int>(item / task.records);
      const int64_t r = item % task.records;
      const auto* found = reinterpret_cast<const long long*>(task.inputs[k] + r * kRecordBytes);
      const int64_t found_timestep = found[0], found_point = found[1];
      if (found_timestep != task.timestep - 1 || found_point != task.producers[k]) {
        if (claim(record)) {
          record->kind = 0;
          record->input = task.first_input + k;
          record->producer = task.producers[k];
          record->record = r;
          record->records = task.records;
          record->found_timestep = found_timestep;
          record->found_point = found_point;
          record->graph = task.graph;
          record->timestep = task.timestep;
          record->point = task.point;
          __threadfence_system();
        }
      }
    } else if (item < input_items + output_items) {
      auto* out = reinterpret_cast<long long*>(task.output + (item - input_items) * kRecordBytes);
      out[0] = task.timestep;
      out[1] = task.point;
    } else {
      const int64_t b = item - input_items - output_items;
      bool good;
      int64_t offset;
      if (b < words) {
        offset = b * 8;
        good = *reinterpret_cast<const unsigned long long*>(task.broadcast + offset) ==
               broadcast_word(static_cast<uint64_t>(b));
      } else {
        offset = words * 8 + (b - words);
        good = static_cast<unsigned char>(task.broadcast[offset]) ==
               broadcast_tail_byte(static_cast<uint64_t>(offset));
      }
      if (!good && claim(record)) {
        record->kind = 1;
        record->offset = offset;
        record->graph = task.graph;
        record->timestep = task.timestep;
        record->point = task.point;
        __threadfence_system();
      }
    }
  }
}

struct RecordPool {
  std::mutex mutex;
  std::unordered_map<void*, FailureRecord*> host;
  std::unordered_map<FailureRecord*, FailureRecord*> device;  // host -> device pointer
};
RecordPool& pool() {
  static RecordPool* instance = new RecordPool;  // never destroyed: host work may still run
  return *instance;
}

FailureRecord* device_pointer(FailureRecord* record) {
  RecordPool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.device.at(record);
}

void launch_part(cudaStream_t stream, const ContractLaunch& part, FailureRecord* record) {
  const int64_t words = part.broadcast ? part.broadcast_bytes / 8 : 0;
  const int64_t tail = part.broadcast ? part.broadcast_bytes - words * 8 : 0;
  const int64_t items =
      part.num_inputs * part.records + (part.output ? part.records : 0) + words + tail;
  if (items == 0) return;
  const int64_t wanted = (items + kThreads - 1) / kThreads;
  const auto blocks =
      static_cast<unsigned>(wanted < kMaxContractBlocks ? wanted : kMaxContractBlocks);
  contract_kernel<<<blocks, kThreads, 0, stream>>>(part, record);
  check_launch("the Task Bench contract kernel");
}

}  // namespace

int device_count(std::string& error) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    error = cuda_message(status);
    return -1;
  }
  return count;
}

std::string set_device(int device) {
  const cudaError_t status = cudaSetDevice(device);
  if (status == cudaSuccess) return {};
  return "cudaSetDevice(" + std::to_string(device) + ") failed: " + cuda_message(status);
}

std::string create_stream(void*& stream) {
  cudaStream_t created = nullptr;
  const cudaError_t status = cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking);
  stream = created;
  if (status == cudaSuccess) return {};
  return "cudaStreamCreateWithFlags failed: " + cuda_message(status);
}

void destroy_stream(void* stream) {
  if (stream != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

std::string synchronize_stream(void* stream) {
  const cudaError_t status = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  if (status == cudaSuccess) return {};
  return "cudaStreamSynchronize failed (a kernel on the stream failed): " + cuda_message(status);
}

void launch_compute_bound(void* stream, int64_t lanes, int64_t iterations) {
  if (lanes <= 0) return;
  const int64_t blocks = (lanes + kThreads - 1) / kThreads;
  if (blocks > 0x7fffffff) throw std::runtime_error("gpu_compute_bound: too many lanes");
  compute_bound_kernel<<<static_cast<unsigned>(blocks), kThreads, 0,
                         static_cast<cudaStream_t>(stream)>>>(lanes, iterations);
  check_launch("the gpu_compute_bound kernel");
}

FailureRecord* failure_record(void* stream) {
  RecordPool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  FailureRecord*& mine = p.host[stream];
  if (mine == nullptr) {
    void* host = nullptr;
    cudaError_t status =
        cudaHostAlloc(&host, sizeof(FailureRecord), cudaHostAllocMapped | cudaHostAllocPortable);
    if (status != cudaSuccess)
      throw std::runtime_error("cudaHostAlloc of a failure record failed (" + cuda_message(status) +
                               ")");
    void* device = nullptr;
    status = cudaHostGetDevicePointer(&device, host, 0);
    if (status != cudaSuccess)
      throw std::runtime_error("cudaHostGetDevicePointer failed (" + cuda_message(status) + ")");
    mine = static_cast<FailureRecord*>(host);
    *mine = FailureRecord{};
    p.device[mine] = static_cast<FailureRecord*>(device);
  }
  return mine;
}

std::string take_failure(FailureRecord* record) {
  volatile FailureRecord* r = record;
  const unsigned long long failures = r->failures;
  if (failures == 0) return {};
  std::string where = "graph " + std::to_string(r->graph) + ", timestep " +
                      std::to_string(r->timestep) + ", point " + std::to_string(r->point) +
                      " (on the GPU)";
  std::string what;
  if (r->kind == 0) {
    what = ": input " + std::to_string(r->input) + " (from point " + std::to_string(r->producer) +
           ") record " + std::to_string(r->record) + " of " + std::to_string(r->records) +
           " holds (timestep " + std::to_string(r->found_timestep) + ", point " +
           std::to_string(r->found_point) + "), expected (timestep " +
           std::to_string(r->timestep - 1) + ", point " + std::to_string(r->producer) + ")";
  } else {
    what = ": broadcast buffer differs at byte " + std::to_string(r->offset);
  }
  const std::string count =
      "; " + std::to_string(failures) + " violation" + (failures == 1 ? "" : "s") + " in all";
  *record = FailureRecord{};
  return where + what + count;
}

void launch_contract(void* stream, const DeviceTask& task, FailureRecord* record) {
  const auto s = static_cast<cudaStream_t>(stream);
  FailureRecord* on_device = device_pointer(record);
  ContractLaunch part{};
  part.graph = task.graph;
  part.timestep = task.timestep;
  part.point = task.point;
  part.records = static_cast<int64_t>(task.output_bytes / kRecordBytes);
  // The first launch also writes the output and checks the broadcast buffer.
  part.output = task.output;
  part.broadcast = task.broadcast;
  part.broadcast_bytes = static_cast<int64_t>(task.broadcast ? task.broadcast_bytes : 0);
  size_t next = 0;
  do {
    const size_t count = task.num_inputs - next < static_cast<size_t>(kInputsPerLaunch)
                             ? task.num_inputs - next
                             : static_cast<size_t>(kInputsPerLaunch);
    part.first_input = static_cast<int>(next);
    part.num_inputs = static_cast<int>(count);
    for (size_t k = 0; k < count; ++k) {
      part.inputs[k] = task.inputs[next + k];
      part.producers[k] = task.producers[next + k];
    }
    launch_part(s, part, on_device);
    part.output = nullptr;
    part.broadcast = nullptr;
    part.broadcast_bytes = 0;
    next += count;
  } while (next < task.num_inputs);
}

}  // namespace taskbench::gpu
