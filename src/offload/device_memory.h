// The head's view of one OpenMP device's memory: which ranges are allocated
// (each with the data handle through which the runtime orders its accesses),
// which are free, and which device pointers are stored inside which
// allocation. Not thread-safe: the plugin holds its lock around every call.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::offload {

class DeviceMemory {
 public:
  struct Allocation {
    uint64_t begin;
    uint64_t end;
    DataHandle handle;
    // Begin addresses of the allocations whose address was written into this
    // one (libomptarget's pointer attachment): a kernel reaching this
    // allocation may follow them.
    std::vector<uint64_t> points_to;
  };
  // A freed range whose last accesses may still be running: it is handed out
  // again only once they are done.
  struct Freed {
    uint64_t begin;
    uint64_t bytes;
    DataHandle handle;
  };

  // The device's reserved range (from its rank, at start-up).
  void set_range(uint64_t base, uint64_t bytes);
  bool has_range() const { return limit_ > 0; }

  // A free range of `bytes` (rounded up to kAlignment), or nothing when none
  // fits; the caller then waits for freed ranges and calls again.
  std::optional<uint64_t> take(uint64_t bytes);
  // Registers an allocation (or a global of a loaded image) with its handle.
  void add(uint64_t begin, uint64_t bytes, DataHandle handle);
  // The allocation containing `address`, or nullptr.
  const Allocation* find(uint64_t address) const;
  // Forgets the allocation starting at `begin`; its range goes to quarantine
  // (globals are never removed). Returns it, or nothing for an unknown address.
  std::optional<Allocation> remove(uint64_t begin);
  bool has_freed() const { return !freed_.empty(); }
  size_t freed_count() const { return freed_.size(); }
  std::vector<Freed> take_freed();
  void reuse(uint64_t begin, uint64_t bytes);
  // `bytes` were written at `address`: each aligned 64-bit word in them that
  // is the address of an allocation (libomptarget's pointer attachment, a
  // table of omp_get_mapped_ptr results) makes the allocation holding
  // `address` point to that one.
  void note_pointers(uint64_t address, const void* bytes, uint64_t size);
  // The handles of the allocation containing `address` and of everything it
  // points to, transitively, appended to `out` unless already there; false
  // when no allocation contains `address`.
  bool reachable(uint64_t address, std::vector<DataHandle>& out) const;
  // Whether `address` lies within the device memory's size of its range
  // (where an extrapolated device address of a partly present array falls).
  bool near(uint64_t address) const;
  // Every allocation's handle, appended unless already there.
  void all_handles(std::vector<DataHandle>& out) const;

  static constexpr uint64_t kAlignment = 64;

 private:
  Allocation* find_mutable(uint64_t address);

  uint64_t base_ = 0;
  uint64_t limit_ = 0;
  uint64_t next_ = 0;                  // the first never-used address
  uint64_t globals_low_ = UINT64_MAX;  // the span of the images' globals
  uint64_t globals_high_ = 0;
  std::map<uint64_t, uint64_t> free_;    // begin -> bytes, coalesced
  std::map<uint64_t, Allocation> live_;  // begin -> allocation
  std::vector<Freed> freed_;
};

}  // namespace taskgrid::offload
