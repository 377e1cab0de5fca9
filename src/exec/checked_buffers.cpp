#include "exec/checked_buffers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <new>

#include "core/access_mode.h"

namespace taskgrid::exec {
namespace {

size_t page_bytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

size_t round_up(size_t value, size_t to) { return (value + to - 1) / to * to; }

// The zones' pattern, from each zone's first byte: a function of the
// position, so that a task writing one value over a run of bytes cannot
// leave it intact. Longer than any zone (a page and 320 bytes at most), and
// made once, so zones are filled and compared at memcpy's and memcmp's speed
// (a byte loop cost 13 us per task of Task Bench in checked mode).
const unsigned char* zone_pattern() {
  static const std::vector<unsigned char> pattern = [] {
    std::vector<unsigned char> bytes(2 * page_bytes());
    for (size_t k = 0; k < bytes.size(); ++k)
      bytes[k] = static_cast<unsigned char>(0xA5 ^ (k * 0x3B) ^ (k >> 8));
    return bytes;
  }();
  return pattern.data();
}

// The first byte of the zone [at, at + bytes) that is not the pattern
// (bytes: none).
size_t first_changed(const char* at, size_t bytes) {
  const unsigned char* pattern = zone_pattern();
  if (std::memcmp(at, pattern, bytes) == 0) return bytes;
  size_t i = 0;
  while (static_cast<unsigned char>(at[i]) == pattern[i]) ++i;
  return i;
}

}  // namespace

GuardedBuffer::GuardedBuffer(size_t bytes) : bytes_(bytes) {
  const size_t page = page_bytes();
  // Both zones at least kZoneBytes, whatever the 64-byte alignment takes.
  body_bytes_ = round_up(2 * kZoneBytes + bytes + 63, page);
  map_bytes_ = body_bytes_ + 2 * page;
  void* map = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw std::bad_alloc();
  map_ = static_cast<char*>(map);
  body_ = map_ + page;
  if (mprotect(map_, page, PROT_NONE) != 0 || mprotect(body_ + body_bytes_, page, PROT_NONE) != 0) {
    munmap(map_, map_bytes_);
    throw std::bad_alloc();
  }
  // The data ends kZoneBytes before the guard page (up to 63 more for the
  // alignment): a small overrun lands in the zone, a large one in the page.
  const auto end = reinterpret_cast<uintptr_t>(body_ + body_bytes_ - kZoneBytes);
  data_ = body_ + ((end - bytes) / 64 * 64 - reinterpret_cast<uintptr_t>(body_));
  std::memcpy(body_, zone_pattern(), static_cast<size_t>(data_ - body_));
  std::memcpy(data_ + bytes_, zone_pattern(),
              static_cast<size_t>(body_ + body_bytes_ - (data_ + bytes_)));
}

GuardedBuffer::~GuardedBuffer() { munmap(map_, map_bytes_); }

std::optional<int64_t> GuardedBuffer::first_corrupted() const {
  const auto front = static_cast<size_t>(data_ - body_);
  if (const size_t at = first_changed(body_, front); at < front)
    return static_cast<int64_t>(at) - static_cast<int64_t>(front);
  const char* end = data_ + bytes_;
  const auto back = static_cast<size_t>(body_ + body_bytes_ - end);
  if (const size_t at = first_changed(end, back); at < back)
    return static_cast<int64_t>(bytes_ + at);
  return std::nullopt;
}

std::optional<size_t> first_difference(const void* a, const void* b, size_t bytes) {
  if (std::memcmp(a, b, bytes) == 0) return std::nullopt;  // the common case, at memcmp's speed
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  size_t i = 0;
  while (x[i] == y[i]) ++i;
  return i;
}

std::string describe_corruption(size_t access, uint8_t mode, size_t bytes, int64_t offset) {
  const std::string which = " access " + std::to_string(access) + " (" +
                            core::access_mode_name(static_cast<AccessMode>(mode)) + ", " +
                            std::to_string(bytes) + " bytes) at offset ";
  if (offset < 0) return "wrote before the start of" + which + std::to_string(offset);
  return "wrote past the end of" + which + std::to_string(bytes) + "+" +
         std::to_string(static_cast<uint64_t>(offset) - bytes);
}

std::string describe_in_write(size_t access, size_t bytes, size_t offset) {
  return "wrote to access " + std::to_string(access) + " (in, " + std::to_string(bytes) +
         " bytes), which it may only read, first at offset " + std::to_string(offset);
}

std::unique_ptr<GuardedBuffer> CheckedBuffers::take(size_t bytes) {
  for (size_t i = idle_.size(); i-- > 0;) {
    if (idle_[i]->size() != bytes) continue;
    std::unique_ptr<GuardedBuffer> found = std::move(idle_[i]);
    idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
    return found;
  }
  return std::make_unique<GuardedBuffer>(bytes);
}

const Buffer* CheckedBuffers::copy_in(const Buffer* buffers, size_t count) {
  views_.resize(count);
  for (size_t i = 0; i < count; ++i) {
    in_use_.push_back(take(buffers[i].size));
    GuardedBuffer& copy = *in_use_.back();
    if (buffers[i].size) std::memcpy(copy.data(), buffers[i].data, buffers[i].size);
    views_[i] = {copy.data(), copy.size()};
  }
  return views_.data();
}

std::string CheckedBuffers::check_and_copy_back(const Buffer* buffers,
                                                const comm::wire::Access* accesses, size_t count) {
  std::string fault;
  for (size_t i = 0; i < count && fault.empty(); ++i) {
    const GuardedBuffer& copy = *in_use_[i];
    const uint8_t mode = accesses[i].mode;
    if (const std::optional<int64_t> corrupted = copy.first_corrupted()) {
      fault = describe_corruption(i, mode, copy.size(), *corrupted);
    } else if (mode == static_cast<uint8_t>(AccessMode::in)) {
      if (const std::optional<size_t> changed =
              first_difference(copy.data(), buffers[i].data, copy.size()))
        fault = describe_in_write(i, copy.size(), *changed);
    } else if (copy.size()) {
      std::memcpy(buffers[i].data, copy.data(), copy.size());
    }
  }
  // A copy with a corrupted zone is not kept (the job ends anyway).
  for (std::unique_ptr<GuardedBuffer>& copy : in_use_)
    if (fault.empty() && idle_.size() < kMaxIdle) idle_.push_back(std::move(copy));
  in_use_.clear();
  return fault;
}

}  // namespace taskgrid::exec
