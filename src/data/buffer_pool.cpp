#include "data/buffer_pool.h"

#include <new>

namespace taskgrid::data {

char* allocate_buffer(size_t bytes) {
  const size_t rounded = (bytes + 63) / 64 * 64;
  void* memory = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (!memory) throw std::bad_alloc();
  return static_cast<char*>(memory);
}

void release_buffer(char* buffer) { std::free(buffer); }

BufferPool::~BufferPool() {
  for (auto& [size, buffers] : free_by_size_)
    for (char* buffer : buffers) release_buffer(buffer);
}

char* BufferPool::get(size_t bytes) {
  auto it = free_by_size_.find(bytes);
  if (it != free_by_size_.end() && !it->second.empty()) {
    char* buffer = it->second.back();
    it->second.pop_back();
    cached_bytes_ -= bytes;
    return buffer;
  }
  return allocate_buffer(bytes);
}

void BufferPool::put(char* buffer, size_t bytes) {
  if (cached_bytes_ + bytes > kMaxCachedBytes) {
    release_buffer(buffer);
    return;
  }
  free_by_size_[bytes].push_back(buffer);
  cached_bytes_ += bytes;
}

}  // namespace taskgrid::data
