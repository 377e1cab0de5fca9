#include "device/cuda_backend.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::device {
namespace {

// The few CUDA runtime entry points the backend calls, with their C
// signatures (handles are pointers; errors are ints, 0 is success).
using CudaError = int;
constexpr CudaError kSuccess = 0;
constexpr CudaError kNotReady = 600;
constexpr unsigned kStreamNonBlocking = 0x01;
constexpr unsigned kEventDisableTiming = 0x02;
constexpr int kMemcpyHostToDevice = 1;
constexpr int kMemcpyDeviceToHost = 2;
constexpr int kMemcpyDeviceToDevice = 3;

struct CudaRuntime {
  void* library = nullptr;
  CudaError (*get_device_count)(int*) = nullptr;
  CudaError (*set_device)(int) = nullptr;
  CudaError (*mem_get_info)(size_t*, size_t*) = nullptr;
  CudaError (*malloc)(void**, size_t) = nullptr;
  CudaError (*free)(void*) = nullptr;
  CudaError (*malloc_host)(void**, size_t) = nullptr;
  CudaError (*free_host)(void*) = nullptr;
  CudaError (*stream_create_with_flags)(void**, unsigned) = nullptr;
  CudaError (*stream_synchronize)(void*) = nullptr;
  CudaError (*stream_destroy)(void*) = nullptr;
  CudaError (*memcpy_async)(void*, const void*, size_t, int, void*) = nullptr;
  CudaError (*launch_host_func)(void*, void (*)(void*), void*) = nullptr;
  CudaError (*event_create_with_flags)(void**, unsigned) = nullptr;
  CudaError (*event_record)(void*, void*) = nullptr;
  CudaError (*event_query)(void*) = nullptr;
  CudaError (*event_destroy)(void*) = nullptr;
  const char* (*get_error_string)(CudaError) = nullptr;
  CudaError (*device_get_pci_bus_id)(char*, int, int) = nullptr;  // optional

  std::string error(CudaError code) const {
    const char* text = get_error_string ? get_error_string(code) : nullptr;
    return text ? std::string(text) + " (" + std::to_string(code) + ")"
                : "CUDA error " + std::to_string(code);
  }
};

// Loads libcudart and resolves every entry point; false with `why` otherwise.
bool load_runtime(CudaRuntime& cuda, std::string& why) {
  for (const char* name : {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                           "libcudart.so.11.0", "/usr/local/cuda/lib64/libcudart.so"}) {
    cuda.library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (cuda.library) break;
  }
  if (!cuda.library) {
    why = "the CUDA runtime (libcudart.so) is not installed or not on LD_LIBRARY_PATH";
    return false;
  }
  bool complete = true;
  auto resolve = [&](auto& entry, const char* symbol) {
    entry = reinterpret_cast<std::remove_reference_t<decltype(entry)>>(dlsym(cuda.library, symbol));
    if (!entry && complete) {
      why = std::string("libcudart has no ") + symbol;
      complete = false;
    }
  };
  resolve(cuda.get_device_count, "cudaGetDeviceCount");
  resolve(cuda.set_device, "cudaSetDevice");
  resolve(cuda.mem_get_info, "cudaMemGetInfo");
  resolve(cuda.malloc, "cudaMalloc");
  resolve(cuda.free, "cudaFree");
  resolve(cuda.malloc_host, "cudaMallocHost");
  resolve(cuda.free_host, "cudaFreeHost");
  resolve(cuda.stream_create_with_flags, "cudaStreamCreateWithFlags");
  resolve(cuda.stream_synchronize, "cudaStreamSynchronize");
  resolve(cuda.stream_destroy, "cudaStreamDestroy");
  resolve(cuda.memcpy_async, "cudaMemcpyAsync");
  resolve(cuda.launch_host_func, "cudaLaunchHostFunc");
  resolve(cuda.event_create_with_flags, "cudaEventCreateWithFlags");
  resolve(cuda.event_record, "cudaEventRecord");
  resolve(cuda.event_query, "cudaEventQuery");
  resolve(cuda.event_destroy, "cudaEventDestroy");
  resolve(cuda.get_error_string, "cudaGetErrorString");
  cuda.device_get_pci_bus_id = reinterpret_cast<decltype(cuda.device_get_pci_bus_id)>(
      dlsym(cuda.library, "cudaDeviceGetPCIBusId"));
  if (!complete) {
    dlclose(cuda.library);
    cuda.library = nullptr;
  }
  return complete;
}

struct CudaStream final : Stream {
  CudaStream(int device_index, void* cuda_stream) : Stream(device_index), handle(cuda_stream) {}
  void* handle;
};

struct CudaEvent final : Event {
  int device = 0;
  void* handle = nullptr;
};

class CudaBackend final : public Backend {
 public:
  CudaBackend(const CudaRuntime& cuda, std::vector<uint64_t> limits)
      : cuda_(cuda), limits_(std::move(limits)) {}
  ~CudaBackend() override {
    // The library stays loaded: CUDA's own exit handlers run after ours.
  }

  const char* name() const override { return "cuda"; }
  int devices() const override { return static_cast<int>(limits_.size()); }
  uint64_t memory_limit(int device) const override {
    check_device(device);
    return limits_[static_cast<size_t>(device)];
  }

  void* allocate(int device, size_t bytes) override {
    use(device);
    void* pointer = nullptr;
    const CudaError code = cuda_.malloc(&pointer, bytes ? bytes : 1);
    if (code != kSuccess) return nullptr;  // out of memory: the caller evicts
    return pointer;
  }
  void release(int device, void* pointer) override {
    use(device);
    check(device, cuda_.free(pointer), "cudaFree");
  }

  void* allocate_staging(size_t bytes) override {
    void* pointer = nullptr;
    check(0, cuda_.malloc_host(&pointer, bytes ? bytes : 1), "cudaMallocHost");
    return pointer;
  }
  void release_staging(void* pointer) override {
    check(0, cuda_.free_host(pointer), "cudaFreeHost");
  }

  Stream* create_stream(int device) override {
    use(device);
    void* handle = nullptr;
    check(device, cuda_.stream_create_with_flags(&handle, kStreamNonBlocking),
          "cudaStreamCreateWithFlags");
    return new CudaStream(device, handle);
  }
  void destroy_stream(Stream* stream) override {
    auto* s = static_cast<CudaStream*>(stream);
    use(s->device);
    const CudaError synchronized = cuda_.stream_synchronize(s->handle);
    cuda_.stream_destroy(s->handle);
    const int device = s->device;
    delete s;
    check(device, synchronized, "cudaStreamSynchronize");
  }
  void copy_async(Stream* stream, void* to, const void* from, size_t bytes,
                  CopyKind kind) override {
    auto* s = static_cast<CudaStream*>(stream);
    const int direction = kind == CopyKind::host_to_device   ? kMemcpyHostToDevice
                          : kind == CopyKind::device_to_host ? kMemcpyDeviceToHost
                                                             : kMemcpyDeviceToDevice;
    use(s->device);
    check(s->device, cuda_.memcpy_async(to, from, bytes, direction, s->handle), "cudaMemcpyAsync");
  }
  void* native_stream(Stream* stream) override { return static_cast<CudaStream*>(stream)->handle; }
  void host_function_async(Stream* stream, void (*function)(void*), void* argument) override {
    auto* s = static_cast<CudaStream*>(stream);
    use(s->device);
    check(s->device, cuda_.launch_host_func(s->handle, function, argument), "cudaLaunchHostFunc");
  }

  Event* record_event(Stream* stream) override {
    auto* s = static_cast<CudaStream*>(stream);
    use(s->device);
    auto event = std::make_unique<CudaEvent>();
    event->device = s->device;
    check(s->device, cuda_.event_create_with_flags(&event->handle, kEventDisableTiming),
          "cudaEventCreateWithFlags");
    const CudaError recorded = cuda_.event_record(event->handle, s->handle);
    if (recorded != kSuccess) cuda_.event_destroy(event->handle);
    check(s->device, recorded, "cudaEventRecord");
    return event.release();
  }
  void make_current(int device) override { use(device); }
  std::string device_identity(int device) const override {
    check_device(device);
    char bus_id[64] = {};
    if (cuda_.device_get_pci_bus_id &&
        cuda_.device_get_pci_bus_id(bus_id, sizeof bus_id, device) == kSuccess)
      return std::string("cuda PCI ") + bus_id;
    // Without the bus id no two ranks can tell their GPUs apart: saying
    // "shared" keeps NCCL off (it refuses two ranks on one GPU).
    return "cuda (no PCI bus id)";
  }

  bool event_done(Event* event) override {
    auto* e = static_cast<CudaEvent*>(event);
    const CudaError code = cuda_.event_query(e->handle);
    if (code == kNotReady) return false;
    check(e->device, code, "the work before an event (cudaEventQuery)");
    return true;
  }
  void destroy_event(Event* event) override {
    auto* e = static_cast<CudaEvent*>(event);
    cuda_.event_destroy(e->handle);
    delete e;
  }

 private:
  void check_device(int device) const {
    if (device < 0 || device >= devices())
      throw Error("device " + std::to_string(device) + " does not exist (this rank has " +
                  std::to_string(devices()) + " CUDA devices)");
  }
  // CUDA's current device is per thread: set it before each call.
  void use(int device) const {
    check_device(device);
    check(device, cuda_.set_device(device), "cudaSetDevice");
  }
  void check(int device, CudaError code, const char* what) const {
    if (code != kSuccess)
      throw Error("CUDA device " + std::to_string(device) + ": " + what +
                  " failed: " + cuda_.error(code));
  }

  CudaRuntime cuda_;
  std::vector<uint64_t> limits_;
};

}  // namespace

std::unique_ptr<Backend> open_cuda_backend(uint64_t memory_limit, std::string& why) {
  CudaRuntime cuda;
  if (!load_runtime(cuda, why)) return nullptr;
  int count = 0;
  const CudaError counted = cuda.get_device_count(&count);
  if (counted != kSuccess || count <= 0) {
    why = counted != kSuccess
              ? "no usable CUDA device (cudaGetDeviceCount: " + cuda.error(counted) + ")"
              : "no CUDA device";
    return nullptr;
  }
  std::vector<uint64_t> limits;
  for (int d = 0; d < count; ++d) {
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    if (cuda.set_device(d) != kSuccess ||
        cuda.mem_get_info(&free_bytes, &total_bytes) != kSuccess) {
      why = "CUDA device " + std::to_string(d) + " cannot be opened";
      return nullptr;
    }
    limits.push_back(memory_limit ? std::min<uint64_t>(memory_limit, free_bytes) : free_bytes);
  }
  return std::make_unique<CudaBackend>(cuda, std::move(limits));
}

}  // namespace taskgrid::device
