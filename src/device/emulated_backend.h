// The emulated device: a device backend on the host, so that every device
// code path of the engine (residency, copies, eviction, staging, the stream
// pool) is tested on machines without a GPU.
//
// What makes it a faithful stand-in:
//  - Separate memory. A device address lies in a range reserved with no
//    access rights: host code that dereferences one faults at once, as it
//    would on a GPU. The bytes live in a second, host-readable range at the
//    same offset; copies and emulated kernels reach them through host_view().
//  - A memory limit per device: allocate() returns nullptr when it is full,
//    which is what drives eviction.
//  - Asynchrony. Each stream is a thread that runs its operations in order;
//    a copy or a kernel happens some time after it was enqueued, and an event
//    says when.
//  - Failures. An operation that throws fails its stream: later operations
//    on it are skipped and the next event_done() on it throws, naming the
//    device.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "data/offset_arena.h"
#include "device/backend.h"

namespace taskgrid::device {

class EmulatedBackend final : public Backend {
 public:
  // `devices` devices of `memory_limit` bytes each (0: kDefaultMemory).
  EmulatedBackend(int devices, uint64_t memory_limit);
  ~EmulatedBackend() override;
  EmulatedBackend(const EmulatedBackend&) = delete;
  EmulatedBackend& operator=(const EmulatedBackend&) = delete;

  static constexpr uint64_t kDefaultMemory = uint64_t{1} << 30;

  const char* name() const override { return "emulated"; }
  int devices() const override { return static_cast<int>(memories_.size()); }
  uint64_t memory_limit(int device) const override;
  void* allocate(int device, size_t bytes) override;
  void release(int device, void* pointer) override;
  Stream* create_stream(int device) override;
  void destroy_stream(Stream* stream) override;
  void copy_async(Stream* stream, void* to, const void* from, size_t bytes, CopyKind kind) override;
  void* native_stream(Stream* stream) override { return stream; }
  void host_function_async(Stream* stream, void (*function)(void*), void* argument) override;
  Event* record_event(Stream* stream) override;
  bool event_done(Event* event) override;
  void destroy_event(Event* event) override;
  const void* message_address(const void* pointer) const override { return host_view(pointer); }

  // Where the host reads and writes the bytes at device address `pointer`
  // (an emulated kernel's view of its arguments). Throws taskgrid::Error for
  // an address outside every allocation.
  char* host_view(const void* pointer) const;
  // The device whose memory `pointer` is in, or -1.
  int device_of(const void* pointer) const;
  uint64_t bytes_in_use(int device) const;

 private:
  struct Memory;
  Memory& memory(int device) const;
  // Checks that [pointer, pointer + bytes) lies in one allocation of a
  // device (a copy's device side); returns the host view of it.
  char* checked_view(const void* pointer, size_t bytes, const char* what) const;

  std::vector<std::unique_ptr<Memory>> memories_;
};

}  // namespace taskgrid::device
