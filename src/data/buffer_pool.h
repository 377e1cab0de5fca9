// Data buffers recycled by exact size: Task Bench and most stencils write
// same-sized versions over and over, so steady state allocates nothing.
// Owned by one thread (the engine's).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <unordered_map>
#include <vector>

namespace taskgrid::data {

// 64-byte aligned, never null (even for 0 bytes); free with release_buffer.
char* allocate_buffer(size_t bytes);
// The bytes allocate_buffer really takes for `bytes` (64-byte blocks, at least one).
inline size_t allocated_bytes(size_t bytes) {
  const size_t rounded = (bytes + 63) / 64 * 64;
  return rounded == 0 ? 64 : rounded;
}
void release_buffer(char* buffer);

class BufferPool {
 public:
  ~BufferPool();
  char* get(size_t bytes);
  void put(char* buffer, size_t bytes);
  // Bytes held by idle buffers (whole blocks, see allocated_bytes).
  size_t cached_bytes() const { return cached_bytes_; }

 private:
  // Keep at most this much idle memory; beyond it buffers go back to the OS.
  static constexpr size_t kMaxCachedBytes = size_t{256} << 20;
  // And at most this many of one size: buffers allocated elsewhere (enter_data
  // copies on the program's thread) come back here, and a program that keeps
  // entering small handles would otherwise fill the cache with them.
  static constexpr size_t kMaxIdlePerSize = 4096;
  // The idle buffers of one size, and the last size asked for: steady state
  // asks for one size over and over, and a hit skips the hash lookup
  // (unordered_map elements stay where they are when it rehashes).
  std::vector<char*>& idle_of(size_t bytes) {
    if (bytes != last_size_ || !last_idle_) {
      last_idle_ = &free_by_size_[bytes];
      last_size_ = bytes;
    }
    return *last_idle_;
  }
  std::unordered_map<size_t, std::vector<char*>> free_by_size_;
  size_t last_size_ = 0;
  std::vector<char*>* last_idle_ = nullptr;
  size_t cached_bytes_ = 0;
};

}  // namespace taskgrid::data
