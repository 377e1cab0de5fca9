#include "device/emulated_backend.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::device {
namespace {

// Fresh device memory holds this, not zeros, so that a task reading a buffer
// nobody copied in sees garbage here too instead of passing by luck.
constexpr unsigned char kPoison = 0xa5;

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

std::string device_name(int device) { return "emulated device " + std::to_string(device); }

char* reserve(size_t bytes, int protection, int device) {
  void* range =
      mmap(nullptr, bytes, protection, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (range == MAP_FAILED)
    throw Error(device_name(device) + ": cannot reserve " + std::to_string(bytes) +
                " bytes of address space (" + std::strerror(errno) + ")");
  return static_cast<char*>(range);
}

struct Operation {
  enum class Kind : uint8_t { copy, host_function } kind = Kind::copy;
  char* to = nullptr;  // host views, resolved when enqueued
  const char* from = nullptr;
  size_t bytes = 0;
  void (*function)(void*) = nullptr;
  void* argument = nullptr;
};

struct EmulatedStream final : Stream {
  using Stream::Stream;
  std::mutex lock;
  std::condition_variable wake;
  std::deque<Operation> queue;  // under lock
  uint64_t enqueued = 0;        // under lock; operations are numbered from 1
  bool stopping = false;        // under lock
  std::atomic<uint64_t> completed{0};
  // The number of the first operation that failed (0: none), and why.
  std::atomic<uint64_t> failed_at{0};
  std::string failure;  // written before failed_at is set, never after
  std::thread thread;
};

struct EmulatedEvent final : Event {
  EmulatedStream* stream = nullptr;
  uint64_t target = 0;  // done once the stream completed this many operations
};

EmulatedStream& as_emulated(Stream* stream) {
  if (!stream) throw Error("emulated device: a null stream");
  return static_cast<EmulatedStream&>(*stream);
}

// The stream's thread: the "device" running its operations in order. After a
// failure it still counts the later ones as completed (skipped), so that
// whoever waits for the stream sees it drain and then the failure.
void run_stream(EmulatedStream& stream) {
  uint64_t number = 0;
  for (;;) {
    Operation operation;
    {
      std::unique_lock lock(stream.lock);
      stream.wake.wait(lock, [&] { return stream.stopping || !stream.queue.empty(); });
      if (stream.queue.empty()) return;  // stopping, and drained
      operation = stream.queue.front();
      stream.queue.pop_front();
    }
    number += 1;
    if (stream.failed_at.load(std::memory_order_relaxed) == 0) {
      try {
        if (operation.kind == Operation::Kind::copy) {
          if (operation.bytes) std::memmove(operation.to, operation.from, operation.bytes);
        } else {
          operation.function(operation.argument);
        }
      } catch (const std::exception& error) {
        stream.failure = error.what();
        stream.failed_at.store(number, std::memory_order_release);
      } catch (...) {
        stream.failure = "an exception that is not a std::exception";
        stream.failed_at.store(number, std::memory_order_release);
      }
    }
    stream.completed.store(number, std::memory_order_release);
  }
}

void enqueue(EmulatedStream& stream, const Operation& operation) {
  {
    std::lock_guard lock(stream.lock);
    if (stream.stopping) throw Error(device_name(stream.device) + ": stream used after destroy");
    stream.queue.push_back(operation);
    stream.enqueued += 1;
  }
  stream.wake.notify_one();
}

}  // namespace

struct EmulatedBackend::Memory {
  int device = 0;
  size_t limit = 0;             // what allocations may take
  size_t reserved = 0;          // the ranges' size: the limit in whole pages
  char* device_base = nullptr;  // no access: what the engine and tasks are given
  char* backing = nullptr;      // the bytes, at the same offsets
  mutable std::mutex lock;
  data::OffsetArena arena;  // guarded by lock

  bool holds(const void* pointer) const {
    const char* p = static_cast<const char*>(pointer);
    return p >= device_base && p < device_base + reserved;
  }
};

EmulatedBackend::EmulatedBackend(int devices, uint64_t memory_limit) {
  if (devices < 1 || devices > 64)
    throw Error("emulated devices: " + std::to_string(devices) + " asked for; 1 to 64 exist");
  const size_t page = page_size();
  const uint64_t limit = memory_limit ? memory_limit : kDefaultMemory;
  const size_t bytes = static_cast<size_t>((limit + page - 1) / page * page);
  for (int d = 0; d < devices; ++d) {
    auto memory = std::make_unique<Memory>();
    memory->device = d;
    memory->limit = static_cast<size_t>(limit);
    memory->reserved = bytes;
    memory->device_base = reserve(bytes, PROT_NONE, d);
    memory->backing = reserve(bytes, PROT_READ | PROT_WRITE, d);
    memories_.push_back(std::move(memory));
  }
}

EmulatedBackend::~EmulatedBackend() {
  for (auto& memory : memories_) {
    munmap(memory->device_base, memory->reserved);
    munmap(memory->backing, memory->reserved);
  }
}

EmulatedBackend::Memory& EmulatedBackend::memory(int device) const {
  if (device < 0 || device >= devices())
    throw Error("device " + std::to_string(device) + " does not exist (the emulated backend has " +
                std::to_string(devices()) + ")");
  return *memories_[static_cast<size_t>(device)];
}

uint64_t EmulatedBackend::memory_limit(int device) const { return memory(device).limit; }

uint64_t EmulatedBackend::bytes_in_use(int device) const {
  Memory& m = memory(device);
  std::lock_guard lock(m.lock);
  return m.arena.bytes_in_use();
}

void* EmulatedBackend::allocate(int device, size_t bytes) {
  Memory& m = memory(device);
  size_t offset = 0;
  size_t size = 0;
  {
    std::lock_guard lock(m.lock);
    const auto found = m.arena.allocate(bytes, m.limit);
    if (!found) return nullptr;  // full: the caller evicts
    offset = *found;
    size = m.arena.block_size(offset);
  }
  std::memset(m.backing + offset, kPoison, size);
  return m.device_base + offset;
}

void EmulatedBackend::release(int device, void* pointer) {
  Memory& m = memory(device);
  if (!m.holds(pointer))
    throw Error(device_name(device) + ": release of an address that is not its memory");
  const size_t offset = static_cast<size_t>(static_cast<char*>(pointer) - m.device_base);
  size_t size = 0;
  {
    std::lock_guard lock(m.lock);
    size = m.arena.block_size(offset);
    if (!m.arena.release(offset))
      throw Error(device_name(device) + ": release of an address that was not allocated");
  }
  // Give whole pages of a large block back to the system (a device's
  // released memory is not the host's to keep).
  const size_t page = page_size();
  const size_t first = (offset + page - 1) / page * page;
  const size_t end = (offset + size) / page * page;
  if (end > first && end - first >= 16 * page)
    madvise(m.backing + first, end - first, MADV_DONTNEED);
}

int EmulatedBackend::device_of(const void* pointer) const {
  for (const auto& memory : memories_)
    if (memory->holds(pointer)) return memory->device;
  return -1;
}

char* EmulatedBackend::checked_view(const void* pointer, size_t bytes, const char* what) const {
  const int device = device_of(pointer);
  if (device < 0)
    throw Error(std::string("emulated device: the ") + what + " of a copy is not device memory");
  Memory& m = *memories_[static_cast<size_t>(device)];
  const size_t offset = static_cast<size_t>(static_cast<const char*>(pointer) - m.device_base);
  std::lock_guard lock(m.lock);
  const auto block = m.arena.block_containing(offset);
  if (!block || bytes > block->bytes - (offset - block->offset))
    throw Error(device_name(device) + ": the " + what + " of a copy of " + std::to_string(bytes) +
                " bytes is not within one allocation");
  return m.backing + offset;
}

char* EmulatedBackend::host_view(const void* pointer) const {
  return checked_view(pointer, 0, "address");
}

Stream* EmulatedBackend::create_stream(int device) {
  memory(device);  // throws for a device that does not exist
  auto stream = std::make_unique<EmulatedStream>(device);
  EmulatedStream* raw = stream.get();
  raw->thread = std::thread([raw] { run_stream(*raw); });
  return stream.release();
}

void EmulatedBackend::destroy_stream(Stream* stream) {
  EmulatedStream& s = as_emulated(stream);
  {
    std::lock_guard lock(s.lock);
    s.stopping = true;
  }
  s.wake.notify_one();
  s.thread.join();
  delete &s;
}

void EmulatedBackend::copy_async(Stream* stream, void* to, const void* from, size_t bytes,
                                 CopyKind kind) {
  EmulatedStream& s = as_emulated(stream);
  Operation operation;
  operation.bytes = bytes;
  const bool to_device = kind != CopyKind::device_to_host;
  const bool from_device = kind != CopyKind::host_to_device;
  if (!to_device && device_of(to) >= 0)
    throw Error(device_name(s.device) + ": a device-to-host copy into device memory");
  if (!from_device && device_of(from) >= 0)
    throw Error(device_name(s.device) + ": a host-to-device copy from device memory");
  operation.to = to_device ? checked_view(to, bytes, "destination") : static_cast<char*>(to);
  operation.from =
      from_device ? checked_view(from, bytes, "source") : static_cast<const char*>(from);
  enqueue(s, operation);
}

void EmulatedBackend::host_function_async(Stream* stream, void (*function)(void*), void* argument) {
  EmulatedStream& s = as_emulated(stream);
  if (!function) throw Error(device_name(s.device) + ": a null host function");
  Operation operation;
  operation.kind = Operation::Kind::host_function;
  operation.function = function;
  operation.argument = argument;
  enqueue(s, operation);
}

Event* EmulatedBackend::record_event(Stream* stream) {
  EmulatedStream& s = as_emulated(stream);
  auto event = std::make_unique<EmulatedEvent>();
  event->stream = &s;
  std::lock_guard lock(s.lock);
  event->target = s.enqueued;
  return event.release();
}

bool EmulatedBackend::event_done(Event* event) {
  const EmulatedEvent& e = static_cast<const EmulatedEvent&>(*event);
  EmulatedStream& s = *e.stream;
  const uint64_t completed = s.completed.load(std::memory_order_acquire);
  const uint64_t failed_at = s.failed_at.load(std::memory_order_acquire);
  if (failed_at != 0 && failed_at <= e.target && completed >= failed_at)
    throw Error(device_name(s.device) + ": an operation on its stream failed: " + s.failure);
  return completed >= e.target;
}

void EmulatedBackend::destroy_event(Event* event) { delete static_cast<EmulatedEvent*>(event); }

}  // namespace taskgrid::device
