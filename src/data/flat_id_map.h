// A map from non-zero 64-bit ids to pointers, for the engine's per-task
// lookups (versions by id): open addressing with linear probing in one flat
// array, so a lookup is a multiply, a shift and usually one probe, and an
// insert or erase allocates nothing until the table must grow. Erase shifts
// the following entries back instead of leaving tombstones, so a table that
// sees millions of inserts and erases at a steady size never degrades.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace taskgrid::data {

template <typename T>
class FlatIdMap {
 public:
  explicit FlatIdMap(size_t initial_capacity = 64) { rehash(round_up(initial_capacity)); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  T* find(uint64_t id) const {
    for (size_t i = home(id);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.id == id) return slot.value;
      if (slot.id == 0) return nullptr;
    }
  }
  // False (and no change) when `id` is already there. `id` must not be 0.
  bool insert(uint64_t id, T* value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) rehash(slots_.size() * 2);
    for (size_t i = home(id);; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.id == id) return false;
      if (slot.id == 0) {
        slot = {id, value};
        size_ += 1;
        return true;
      }
    }
  }
  bool erase(uint64_t id) {
    size_t i = home(id);
    while (slots_[i].id != id) {
      if (slots_[i].id == 0) return false;
      i = (i + 1) & mask_;
    }
    // Backward shift: move each following entry of the cluster into the hole
    // when its home does not lie (cyclically) between the hole and itself.
    for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (slots_[j].id == 0) break;
      const size_t wanted = home(slots_[j].id);
      const bool stays = i <= j ? (i < wanted && wanted <= j) : (i < wanted || wanted <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = {};
    size_ -= 1;
    return true;
  }
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const Slot& slot : slots_)
      if (slot.id) fn(slot.id, slot.value);
  }

 private:
  struct Slot {
    uint64_t id = 0;
    T* value = nullptr;
  };
  static size_t round_up(size_t n) {
    size_t capacity = 16;
    while (capacity < n) capacity *= 2;
    return capacity;
  }
  // Fibonacci hashing: consecutive ids (the planner numbers versions in
  // order) spread over the whole table.
  size_t home(uint64_t id) const {
    return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void rehash(size_t capacity) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) shift_ -= 1;
    size_ = 0;
    for (const Slot& slot : old)
      if (slot.id) insert(slot.id, slot.value);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t size_ = 0;
};

}  // namespace taskgrid::data
