// A bounded queue of pointers for any number of producers and consumers,
// without a lock: the hand-off of ready tasks from the thread that drives the
// engine to the workers (exec/worker_pool.h). Each slot carries a sequence
// number that says whose turn it is (a producer's for lap n when it equals
// the position, a consumer's when it is one past it), so a push and a pop
// each take one compare-and-swap on their own counter and touch one slot;
// producers and consumers contend only among themselves. The scheme is
// Dmitry Vyukov's bounded MPMC queue. FIFO; full and empty are reported,
// never waited on (the pool keeps what does not fit under its lock).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace taskgrid::exec {

template <typename T>
class TaskRing {
 public:
  // `capacity` is rounded up to a power of two.
  explicit TaskRing(size_t capacity) {
    size_t size = 2;
    while (size < capacity) size *= 2;
    mask_ = size - 1;
    slots_ = std::make_unique<Slot[]>(size);
    for (size_t i = 0; i < size; ++i) slots_[i].sequence.store(i, std::memory_order_relaxed);
  }
  TaskRing(const TaskRing&) = delete;
  TaskRing& operator=(const TaskRing&) = delete;

  size_t capacity() const { return mask_ + 1; }

  // False when full.
  bool try_push(T* item) {
    size_t position = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Slot& slot = slots_[position & mask_];
      const size_t sequence = slot.sequence.load(std::memory_order_acquire);
      const auto lag = static_cast<std::ptrdiff_t>(sequence - position);
      if (lag == 0) {
        if (tail_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) {
          slot.item = item;
          slot.sequence.store(position + 1, std::memory_order_release);
          return true;
        }
      } else if (lag < 0) {
        return false;  // the slot still holds the item of the lap before
      } else {
        position = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  // nullptr when empty.
  T* try_pop() {
    size_t position = head_.load(std::memory_order_relaxed);
    for (;;) {
      Slot& slot = slots_[position & mask_];
      const size_t sequence = slot.sequence.load(std::memory_order_acquire);
      const auto lag = static_cast<std::ptrdiff_t>(sequence - (position + 1));
      if (lag == 0) {
        if (head_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) {
          T* item = slot.item;
          slot.sequence.store(position + mask_ + 1, std::memory_order_release);
          return item;
        }
      } else if (lag < 0) {
        return nullptr;  // not yet filled
      } else {
        position = head_.load(std::memory_order_relaxed);
      }
    }
  }

  // How many are queued, give or take the pushes and pops under way.
  size_t approximate_size() const {
    const size_t tail = tail_.load(std::memory_order_relaxed);
    const size_t head = head_.load(std::memory_order_relaxed);
    return tail > head ? tail - head : 0;
  }

 private:
  static constexpr size_t kLine = 64;  // the two counters on lines of their own
  struct Slot {
    std::atomic<size_t> sequence{0};
    T* item = nullptr;
  };
  alignas(kLine) std::atomic<size_t> tail_{0};
  alignas(kLine) std::atomic<size_t> head_{0};
  alignas(kLine) std::unique_ptr<Slot[]> slots_;
  size_t mask_ = 0;
};

}  // namespace taskgrid::exec
