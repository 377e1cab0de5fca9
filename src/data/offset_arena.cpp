#include "data/offset_arena.h"

#include <cstdint>
#include <iterator>

namespace taskgrid::data {

size_t OffsetArena::rounded(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes > SIZE_MAX - kAlignment) return SIZE_MAX;
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

std::optional<size_t> OffsetArena::allocate(size_t bytes, size_t ceiling) {
  const size_t size = rounded(bytes);
  if (size == SIZE_MAX) return std::nullopt;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < size) continue;
    const size_t offset = it->first;
    const size_t left = it->second - size;
    free_.erase(it);
    if (left > 0) free_.emplace(offset + size, left);
    used_.emplace(offset, size);
    in_use_ += size;
    return offset;
  }
  // Grow: start in the free block that touches the top, if any.
  size_t start = high_water_;
  if (!free_.empty()) {
    auto last = std::prev(free_.end());
    if (last->first + last->second == high_water_) start = last->first;
  }
  if (start > ceiling || ceiling - start < size) return std::nullopt;
  if (start != high_water_) free_.erase(start);
  used_.emplace(start, size);
  in_use_ += size;
  high_water_ = start + size;
  return start;
}

bool OffsetArena::release(size_t offset) {
  auto it = used_.find(offset);
  if (it == used_.end()) return false;
  size_t start = offset;
  size_t size = it->second;
  in_use_ -= size;
  used_.erase(it);
  // Merge with the free neighbours on both sides.
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == start) {
      start = previous->first;
      size += previous->second;
      free_.erase(previous);
    }
  }
  if (start + size == high_water_) {
    high_water_ = start;  // the top shrinks: the other arena may grow into it
  } else {
    free_.emplace(start, size);
  }
  return true;
}

size_t OffsetArena::block_size(size_t offset) const {
  auto it = used_.find(offset);
  return it == used_.end() ? 0 : it->second;
}

std::optional<OffsetArena::Block> OffsetArena::block_containing(size_t offset) const {
  auto it = used_.upper_bound(offset);
  if (it == used_.begin()) return std::nullopt;
  --it;
  if (offset - it->first >= it->second) return std::nullopt;
  return Block{it->first, it->second};
}

}  // namespace taskgrid::data
