// The device layer: what the engine needs of an accelerator, behind one
// interface so that every code path that moves data to, from and between
// devices runs the same on CUDA GPUs and on the emulated device:
//
//  - memory: allocate (nullptr when the device is full: the caller evicts and
//    retries) and release;
//  - streams: operations on one stream run in order, streams run
//    concurrently; copies and host functions are enqueued, never waited for;
//  - events: recorded on a stream, polled without blocking, so the engine's
//    one progress loop tests MPI requests and device work together.
//
// Backends: "cuda" (the CUDA runtime loaded at run time, device/cuda_backend.h:
// nothing needs CUDA to build or to run), "emulated" (memory the host cannot
// touch and streams on threads, device/emulated_backend.h), "none".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace taskgrid::device {

enum class CopyKind : uint8_t { host_to_device, device_to_host, device_to_device };

// Each backend derives its own; the engine sees only these.
struct Stream {
  explicit Stream(int device_index) : device(device_index) {}
  virtual ~Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  const int device;
};
struct Event {
  Event() = default;
  virtual ~Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const char* name() const = 0;
  virtual int devices() const = 0;
  // Bytes the engine may place on `device` (TASKGRID_DEVICE_MEMORY, else the
  // device's free memory when the backend was opened).
  virtual uint64_t memory_limit(int device) const = 0;

  // Device memory of at least `bytes`; nullptr when the device has no room
  // (within memory_limit()). Throws taskgrid::Error for a device that does
  // not exist.
  virtual void* allocate(int device, size_t bytes) = 0;
  virtual void release(int device, void* pointer) = 0;

  virtual Stream* create_stream(int device) = 0;
  // Waits for the stream's work, then frees it.
  virtual void destroy_stream(Stream* stream) = 0;
  // `from` and `to` must stay valid until an event recorded after the copy
  // is done. Host memory may be any memory (pinned memory is faster on CUDA).
  virtual void copy_async(Stream* stream, void* to, const void* from, size_t bytes,
                          CopyKind kind) = 0;
  // What a task's device implementation launches on (TaskContext::stream):
  // the cudaStream_t on CUDA, the stream itself on the emulated device.
  virtual void* native_stream(Stream* stream) = 0;
  // Runs `function(argument)` on a host thread once the stream's earlier
  // work is done; the stream's later work waits for it. The host functions of
  // different streams may run one at a time (CUDA runs them all on one
  // thread): one must never wait for work of another stream.
  virtual void host_function_async(Stream* stream, void (*function)(void*), void* argument) = 0;

  // Host memory copies to and from the devices are fastest with, for
  // staging (page-locked on CUDA; plain memory elsewhere). Throws
  // taskgrid::Error when none can be had.
  virtual void* allocate_staging(size_t bytes);
  virtual void release_staging(void* pointer);

  // Where an MPI library that reads device memory finds the bytes at device
  // address `pointer` (TASKGRID_GPU_AWARE_MPI): the address itself on CUDA;
  // on the emulated device its host view, standing in for such a library.
  virtual const void* message_address(const void* pointer) const { return pointer; }

  // Makes `device` the calling thread's current device, for a library that
  // works on the current one (NCCL); nothing where there is no such notion.
  virtual void make_current(int device) { (void)device; }
  // What tells this device apart from the other devices of this node (the
  // PCI bus id on CUDA): two ranks with the same identity share one device.
  // Unique per process on the emulated device.
  virtual std::string device_identity(int device) const;

  // Done once every operation enqueued on `stream` before it is done.
  virtual Event* record_event(Stream* stream) = 0;
  // Never blocks. Reports a failure of the stream's work (a copy, a kernel)
  // by throwing taskgrid::Error naming the device.
  virtual bool event_done(Event* event) = 0;
  virtual void destroy_event(Event* event) = 0;
};

enum class BackendKind : uint8_t { none, emulated, cuda, automatic };

// The choice of TASKGRID_DEVICE: "none", "emulated", "cuda" or "auto" (CUDA if
// a GPU is there, else none). Throws taskgrid::Error for another value.
// nullopt for a name that is no backend kind (TASKGRID_DEVICE's values).
std::optional<BackendKind> find_backend_kind(std::string_view name);
// Throws taskgrid::Error naming the kinds.
BackendKind parse_backend_kind(const std::string& value);
const char* backend_kind_name(BackendKind kind);

struct BackendSettings {
  BackendKind kind = BackendKind::automatic;
  int emulated_devices = 1;   // TASKGRID_EMULATED_DEVICES
  uint64_t memory_limit = 0;  // TASKGRID_DEVICE_MEMORY, per device (0: the device's)
};

// The backend `settings` ask for; nullptr for "none", and for "auto" without
// a usable GPU. Throws taskgrid::Error when "cuda" was asked for and cannot be
// had, saying why (no libcudart, no device, a driver error).
std::unique_ptr<Backend> open_backend(const BackendSettings& settings);

// What a TaskContext of a task running on a device points to.
struct TaskBinding {
  Backend* backend = nullptr;
  Stream* stream = nullptr;
  const char* task_name = nullptr;
};

}  // namespace taskgrid::device
