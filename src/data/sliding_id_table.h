// SlidingIdTable: a map from ids handed out in increasing order (task,
// version and handle ids) to values, for the planner's per-task lookups.
//
// Entries live in a ring of slots indexed by id modulo its capacity, which
// covers the ids [base, base + capacity); the base advances as the oldest
// entries leave, so a lookup, an insert and an erase are an index and a
// compare, and nothing is allocated while the live ids fit the ring.
//
// Memory stays bounded when an old id stays alive while new ids run far
// ahead (a version never superseded, a handle never released): the ring
// grows freely up to `free_capacity` slots and beyond that only while at
// least a quarter of it is live; otherwise the oldest entries move to a side
// hash map (the stragglers, nodes from a pool) and the base jumps ahead.
// Each entry moves at most once, so the cost stays amortised O(1); the ring
// never exceeds max(free_capacity, 8 x the most entries live at once),
// however far the ids run.
//
// Not thread-safe. Pointers to values stay valid until the next insert or
// erase. An erased entry's value stays in its slot until the slot is reused
// (or the ring moves it): T should hold no resource that must go at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "data/node_pool.h"

namespace taskgrid::data {

template <typename T>
class SlidingIdTable {
 public:
  static constexpr uint64_t kEmpty = ~uint64_t{0};

  // `what` names the ids in error messages ("version 7 added twice").
  explicit SlidingIdTable(const char* what = "id", size_t free_capacity = 4096,
                          size_t initial_capacity = 64)
      : what_(what), free_capacity_(round_up(free_capacity)) {
    slots_.resize(round_up(initial_capacity < free_capacity_ ? initial_capacity : free_capacity_));
    mask_ = slots_.size() - 1;
  }

  size_t size() const { return ring_live_ + stragglers_.size(); }
  bool empty() const { return size() == 0; }
  // For tests and statistics: ring slots, and entries moved out of the ring.
  size_t capacity() const { return slots_.size(); }
  size_t stragglers() const { return stragglers_.size(); }

  T* find(uint64_t id) {
    Slot& slot = slots_[id & mask_];
    if (slot.id == id && id != kEmpty) return &slot.value;
    return id < base_ && !stragglers_.empty() ? find_straggler(id) : nullptr;
  }
  const T* find(uint64_t id) const { return const_cast<SlidingIdTable*>(this)->find(id); }

  // Inserts `id`, which must not be present (std::logic_error otherwise) nor
  // be kEmpty. Ids below the oldest live one are accepted (they go straight
  // to the stragglers), but the table is meant for increasing ids.
  T& insert(uint64_t id, T value) { return claim(id) = std::move(value); }

  // Inserts `id` like insert() and returns its value for the caller to fill:
  // it may still hold an erased entry's content (erase() leaves it there, so
  // that nothing is destroyed and rebuilt per entry), so the caller sets
  // every field.
  T& claim(uint64_t id) {
    if (id >= base_ && id - base_ < slots_.size()) {
      Slot& slot = slots_[id & mask_];
      if (slot.id != kEmpty) duplicate(id);
      return occupy(slot, id);
    }
    return claim_slow(id);
  }

  // False when `id` is not present. The slot keeps the value (see claim()).
  bool erase(uint64_t id) {
    Slot& slot = slots_[id & mask_];
    if (slot.id == id && id != kEmpty) {
      slot.id = kEmpty;
      ring_live_ -= 1;
      if (id == base_) advance_base();
      return true;
    }
    return id < base_ && stragglers_.erase(id) > 0;
  }

  // Visits every entry (ring first, in slot order; then the stragglers).
  template <typename Fn>
  void for_each(Fn&& fn) {
    for (Slot& slot : slots_)
      if (slot.id != kEmpty) fn(slot.id, slot.value);
    for (auto& [id, value] : stragglers_) fn(id, value);
  }

 private:
  struct Slot {
    uint64_t id = kEmpty;
    T value{};
  };

  static size_t round_up(size_t n) {
    size_t capacity = 16;
    while (capacity < n) capacity *= 2;
    return capacity;
  }

  T& occupy(Slot& slot, uint64_t id) {
    // The first entry of an empty ring is its oldest: the base starts there
    // (not at 0, nor where the last entry left it), or erasing that entry
    // would not move the base, and the ring would have to cover every id
    // from the stale base on: it grew to 16,384 slots for 2,048 tasks in
    // flight, then moved live ones to the stragglers.
    if (ring_live_ == 0) base_ = id;
    slot.id = id;
    ring_live_ += 1;
    if (id >= end_) end_ = id + 1;
    return slot.value;
  }

  [[noreturn]] void duplicate(uint64_t id) const {
    throw std::logic_error(std::string(what_) + " " + std::to_string(id) + " added twice");
  }

  T* find_straggler(uint64_t id) {
    auto it = stragglers_.find(id);
    return it == stragglers_.end() ? nullptr : &it->second;
  }

  T& claim_slow(uint64_t id) {
    if (id == kEmpty) throw std::logic_error(std::string(what_) + " id out of range");
    if (id < base_) {
      auto [it, inserted] = stragglers_.try_emplace(id);
      if (!inserted) duplicate(id);
      return it->second;
    }
    while (id - base_ >= slots_.size()) {
      if (ring_live_ == 0) {
        base_ = id;  // nothing to keep: the ring starts over at `id`
        break;
      }
      // Grow while the ring is small or at least a quarter live; else move
      // its oldest entries out, leaving half of it free ahead of `id`.
      const size_t doubled = slots_.size() * 2;
      if (doubled <= free_capacity_ || ring_live_ * 4 >= slots_.size())
        grow(doubled);
      else
        evict_below(id + 1 - slots_.size() / 2);
    }
    return occupy(slots_[id & mask_], id);
  }

  void grow(size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    for (Slot& slot : old)
      if (slot.id != kEmpty) slots_[slot.id & mask_] = std::move(slot);
  }

  // Moves the ring's entries below `new_base` to the stragglers: the ring
  // then has room up to new_base + capacity.
  void evict_below(uint64_t new_base) {
    if (new_base - base_ >= slots_.size()) {
      for (Slot& slot : slots_) evict_if_below(slot, new_base);
    } else {
      for (uint64_t id = base_; id < new_base; ++id) evict_if_below(slots_[id & mask_], new_base);
    }
    base_ = new_base;
    advance_base();
  }

  void evict_if_below(Slot& slot, uint64_t new_base) {
    if (slot.id == kEmpty || slot.id >= new_base) return;
    stragglers_.emplace(slot.id, std::move(slot.value));
    slot.id = kEmpty;
    ring_live_ -= 1;
  }

  // Moves the base to the oldest live entry of the ring (or past the newest
  // id when the ring is empty): each id is passed over once.
  void advance_base() {
    if (ring_live_ == 0) {
      if (base_ < end_) base_ = end_;
      return;
    }
    while (slots_[base_ & mask_].id != base_) ++base_;
  }

  const char* what_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  const size_t free_capacity_;
  uint64_t base_ = 0;  // no ring entry has a smaller id
  uint64_t end_ = 0;   // one past the largest id the ring has held
  size_t ring_live_ = 0;
  data::NodePool pool_;  // the stragglers' nodes: no heap allocation per move
  std::pmr::unordered_map<uint64_t, T> stragglers_{&pool_};
};

}  // namespace taskgrid::data
