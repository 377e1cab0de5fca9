#include "data/buffer_pool.h"

#include <cstdint>
#include <new>

namespace taskgrid::data {

char* allocate_buffer(size_t bytes) {
  if (bytes > SIZE_MAX - 64) throw std::bad_alloc();
  void* memory = std::aligned_alloc(64, allocated_bytes(bytes));
  if (!memory) throw std::bad_alloc();
  return static_cast<char*>(memory);
}

void release_buffer(char* buffer) { std::free(buffer); }

BufferPool::~BufferPool() {
  for (auto& [size, buffers] : free_by_size_)
    for (char* buffer : buffers) release_buffer(buffer);
}

char* BufferPool::get(size_t bytes) {
  std::vector<char*>& idle = idle_of(bytes);
  if (!idle.empty()) {
    char* buffer = idle.back();
    idle.pop_back();
    cached_bytes_ -= allocated_bytes(bytes);
    return buffer;
  }
  return allocate_buffer(bytes);
}

void BufferPool::put(char* buffer, size_t bytes) {
  // What the block really holds (a 0-byte buffer still takes 64 bytes), so
  // the limit bounds memory even for a stream of tiny or empty buffers.
  const size_t held = allocated_bytes(bytes);
  std::vector<char*>& idle = idle_of(bytes);
  if (cached_bytes_ + held > kMaxCachedBytes || idle.size() >= kMaxIdlePerSize) {
    release_buffer(buffer);
    return;
  }
  idle.push_back(buffer);
  cached_bytes_ += held;
}

}  // namespace taskgrid::data
