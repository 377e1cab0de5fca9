#include "offload/device_memory.h"

#include <algorithm>
#include <cstring>

namespace taskgrid::offload {

void DeviceMemory::set_range(uint64_t base, uint64_t bytes) {
  base_ = (base + kAlignment - 1) / kAlignment * kAlignment;
  limit_ = base + bytes;
  next_ = base_;
}

std::optional<uint64_t> DeviceMemory::take(uint64_t bytes) {
  const uint64_t size =
      std::max<uint64_t>(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < size) continue;
    const uint64_t begin = it->first;
    const uint64_t left = it->second - size;
    free_.erase(it);
    if (left) free_.emplace(begin + size, left);
    return begin;
  }
  if (limit_ - next_ < size || next_ > limit_) return std::nullopt;
  const uint64_t begin = next_;
  next_ += size;
  return begin;
}

void DeviceMemory::add(uint64_t begin, uint64_t bytes, DataHandle handle) {
  const uint64_t end = begin + std::max<uint64_t>(bytes, 1);
  live_[begin] = Allocation{begin, end, handle, {}};
  if (begin < base_ || begin >= limit_) {  // a global of an image
    globals_low_ = std::min(globals_low_, begin);
    globals_high_ = std::max(globals_high_, end);
  }
}

DeviceMemory::Allocation* DeviceMemory::find_mutable(uint64_t address) {
  auto it = live_.upper_bound(address);
  if (it == live_.begin()) return nullptr;
  --it;
  return address < it->second.end ? &it->second : nullptr;
}

const DeviceMemory::Allocation* DeviceMemory::find(uint64_t address) const {
  return const_cast<DeviceMemory*>(this)->find_mutable(address);
}

std::optional<DeviceMemory::Allocation> DeviceMemory::remove(uint64_t begin) {
  auto it = live_.find(begin);
  if (it == live_.end()) return std::nullopt;
  Allocation allocation = std::move(it->second);
  live_.erase(it);
  if (begin >= base_ && begin < limit_) {
    const uint64_t size = std::max<uint64_t>(
        kAlignment, (allocation.end - begin + kAlignment - 1) / kAlignment * kAlignment);
    freed_.push_back({begin, size, allocation.handle});
  }
  return allocation;
}

std::vector<DeviceMemory::Freed> DeviceMemory::take_freed() {
  std::vector<Freed> freed;
  freed.swap(freed_);
  return freed;
}

void DeviceMemory::reuse(uint64_t begin, uint64_t bytes) {
  auto [it, inserted] = free_.emplace(begin, bytes);
  if (!inserted) return;
  // Coalesce with the neighbours, so that a large allocation finds room.
  if (it != free_.begin()) {
    auto before = std::prev(it);
    if (before->first + before->second == it->first) {
      before->second += it->second;
      free_.erase(it);
      it = before;
    }
  }
  auto after = std::next(it);
  if (after != free_.end() && it->first + it->second == after->first) {
    it->second += after->second;
    free_.erase(after);
  }
  // The last range before the never-used part joins it.
  if (it->first + it->second == next_) {
    next_ = it->first;
    free_.erase(it);
  }
}

void DeviceMemory::note_pointers(uint64_t address, const void* bytes, uint64_t size) {
  Allocation* holder = find_mutable(address);
  if (!holder) return;
  const auto* data = static_cast<const unsigned char*>(bytes);
  // Words aligned on the device (where a pointer stored by the program is).
  for (uint64_t offset = (8 - address % 8) % 8; offset + 8 <= size; offset += 8) {
    uint64_t value;
    std::memcpy(&value, data + offset, sizeof value);
    // Cheap range checks first: most words are data.
    const bool in_memory = value >= base_ && value < limit_;
    const bool in_globals = value >= globals_low_ && value < globals_high_;
    if (!in_memory && !in_globals) continue;
    const Allocation* target = find(value);
    if (!target || target == holder) continue;
    if (std::find(holder->points_to.begin(), holder->points_to.end(), target->begin) ==
        holder->points_to.end())
      holder->points_to.push_back(target->begin);
  }
}

bool DeviceMemory::near(uint64_t address) const {
  if (!limit_) return false;
  const uint64_t span = limit_ - base_;
  const uint64_t low = base_ > span ? base_ - span : 0;
  const uint64_t high = UINT64_MAX - limit_ > span ? limit_ + span : UINT64_MAX;
  return address >= low && address < high;
}

void DeviceMemory::all_handles(std::vector<DataHandle>& out) const {
  for (const auto& [begin, allocation] : live_)
    if (std::find(out.begin(), out.end(), allocation.handle) == out.end())
      out.push_back(allocation.handle);
}

bool DeviceMemory::reachable(uint64_t address, std::vector<DataHandle>& out) const {
  const Allocation* start = find(address);
  if (!start) return false;
  std::vector<const Allocation*> pending{start};
  while (!pending.empty()) {
    const Allocation* allocation = pending.back();
    pending.pop_back();
    if (std::find(out.begin(), out.end(), allocation->handle) != out.end()) continue;
    out.push_back(allocation->handle);
    for (uint64_t begin : allocation->points_to) {
      auto it = live_.find(begin);
      if (it != live_.end()) pending.push_back(&it->second);
    }
  }
  return true;
}

}  // namespace taskgrid::offload
