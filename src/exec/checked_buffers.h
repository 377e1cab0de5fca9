// Checked mode (TASKGRID_CHECK=1): a task runs on runtime-owned copies of
// its buffers, each between two guard zones of a known byte pattern and,
// beyond them, a page the task may not touch (PROT_NONE):
//
//   [no access: page][zone: >= 256 B][data, 64-byte aligned][zone: 256-319 B][no access: page]
//
// When the task ends, a changed zone byte is a write before the start or
// past the end (named with its offset); a write past a zone faults inside
// the task and the crash handler names it. An `in` copy is compared with the
// version it was copied from (a write to it names the first changed byte);
// out and inout copies are copied back. Copies are kept per thread by size
// and reused: their zones are intact whenever a check passed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/wire.h"
#include "core/task_context_access.h"

namespace taskgrid::exec {

using Buffer = detail::TaskContextAccess::Buffer;

// One guarded copy (see above). Not copyable: it owns its mapping.
class GuardedBuffer {
 public:
  static constexpr size_t kZoneBytes = 256;

  explicit GuardedBuffer(size_t bytes);  // throws std::bad_alloc when it cannot map
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  char* data() const { return data_; }
  size_t size() const { return bytes_; }
  // The first byte of either zone that is not the pattern, as an offset
  // from data() (negative: before the start; size() or more: past the end).
  std::optional<int64_t> first_corrupted() const;

 private:
  char* map_ = nullptr;  // the whole mapping, guard pages included
  size_t map_bytes_ = 0;
  char* body_ = nullptr;  // between the guard pages: zones and data
  size_t body_bytes_ = 0;
  char* data_ = nullptr;
  size_t bytes_ = 0;
};

// Where two buffers of `bytes` first differ; nullopt when they are equal.
std::optional<size_t> first_difference(const void* a, const void* b, size_t bytes);

// "wrote past the end of access 0 (inout, 4096 bytes) at offset 4096+8":
// what a task did to a buffer, in checked mode's words.
std::string describe_corruption(size_t access, uint8_t mode, size_t bytes, int64_t offset);
std::string describe_in_write(size_t access, size_t bytes, size_t offset);

// A thread's guarded copies for the task it runs.
class CheckedBuffers {
 public:
  // Copies the task's buffers in, whatever their modes (an out copy then
  // holds what the task would see unchecked), and returns the copies the
  // task works on.
  const Buffer* copy_in(const Buffer* buffers, size_t count);
  // After the task: "" when every zone and `in` buffer is intact (out and
  // inout copies are then copied back into `buffers`); otherwise the first
  // fault found (describe_corruption, describe_in_write).
  std::string check_and_copy_back(const Buffer* buffers, const comm::wire::Access* accesses,
                                  size_t count);

 private:
  // At most this many idle copies kept per thread.
  static constexpr size_t kMaxIdle = 64;
  std::unique_ptr<GuardedBuffer> take(size_t bytes);
  std::vector<std::unique_ptr<GuardedBuffer>> in_use_;
  std::vector<Buffer> views_;
  std::vector<std::unique_ptr<GuardedBuffer>> idle_;
};

}  // namespace taskgrid::exec
