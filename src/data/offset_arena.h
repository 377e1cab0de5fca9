// Offsets within a range of memory the caller owns: first fit over a list of
// free blocks (adjacent free blocks merge), growing a high-water mark when none
// fits. No memory is touched: the arena only hands out offsets.
//
// Used by the PGAS segment (its symmetric arena is the same on every rank:
// every rank makes the same calls in the same order, so the same call returns
// the same offset everywhere, which makes a remote address "base + offset")
// and by the emulated device's memory (device/emulated_backend.h).
#pragma once

#include <cstddef>
#include <map>
#include <optional>

namespace taskgrid::data {

class OffsetArena {
 public:
  static constexpr size_t kAlignment = 64;  // a cache line: no false sharing between blocks

  // A block of at least `bytes` (0 counts as 1) ending at or below `ceiling`,
  // or nothing when none fits.
  std::optional<size_t> allocate(size_t bytes, size_t ceiling);
  // Returns the block at `offset`; false when no block starts there.
  bool release(size_t offset);
  // The size a request of `bytes` really takes.
  static size_t rounded(size_t bytes);

  // End of the highest block in use (blocks freed at the top lower it).
  size_t high_water() const { return high_water_; }
  size_t bytes_in_use() const { return in_use_; }
  size_t blocks_in_use() const { return used_.size(); }
  // The size of the block at `offset` (0 when none starts there).
  size_t block_size(size_t offset) const;
  struct Block {
    size_t offset;
    size_t bytes;
  };
  // The block in use that `offset` falls in, if any.
  std::optional<Block> block_containing(size_t offset) const;

 private:
  std::map<size_t, size_t> free_;  // offset -> size, all below high_water_
  std::map<size_t, size_t> used_;  // offset -> size
  size_t high_water_ = 0;
  size_t in_use_ = 0;
};

}  // namespace taskgrid::data
