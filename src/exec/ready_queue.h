// The queue of tasks ready to run: FIFO, except that a task with a non-zero
// `priority` (TaskOptions::priority) goes before the lower ones (FIFO among
// equals). Tasks of priority 0 take the plain FIFO path, so a program that
// never sets a priority pays one branch per push and one per pop; the others
// go into a heap ordered by (priority, arrival).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace taskgrid::exec {

// `Task` has an `int priority` member.
template <typename Task>
class ReadyQueue {
 public:
  void push(Task* task) {
    if (task->priority == 0) {
      fifo_.push_back(task);
      return;
    }
    prioritized_.push_back({task->priority, next_sequence_++, task});
    std::push_heap(prioritized_.begin(), prioritized_.end(), RunsLater{});
  }
  // The next task to run; nullptr when empty.
  Task* pop() {
    if (prioritized_.empty()) return pop_fifo();
    // A negative priority yields to the priority-0 tasks of the FIFO.
    if (prioritized_.front().priority < 0 && fifo_head_ < fifo_.size()) return pop_fifo();
    std::pop_heap(prioritized_.begin(), prioritized_.end(), RunsLater{});
    Task* task = prioritized_.back().task;
    prioritized_.pop_back();
    return task;
  }
  bool empty() const { return fifo_head_ == fifo_.size() && prioritized_.empty(); }
  size_t size() const { return fifo_.size() - fifo_head_ + prioritized_.size(); }

 private:
  struct Entry {
    int priority;
    uint64_t sequence;  // arrival order, for FIFO among equal priorities
    Task* task;
  };
  // The heap's order: true when `a` runs after `b`.
  struct RunsLater {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.priority != b.priority ? a.priority < b.priority : a.sequence > b.sequence;
    }
  };

  Task* pop_fifo() {
    if (fifo_head_ == fifo_.size()) return nullptr;
    Task* task = fifo_[fifo_head_++];
    if (fifo_head_ == fifo_.size()) {
      fifo_.clear();
      fifo_head_ = 0;
    } else if (fifo_head_ >= kCompactAt && 2 * fifo_head_ >= fifo_.size()) {
      // A queue that never drains must not grow without bound: drop the
      // popped front (at most as many moves as pops since the last time).
      fifo_.erase(fifo_.begin(), fifo_.begin() + static_cast<std::ptrdiff_t>(fifo_head_));
      fifo_head_ = 0;
    }
    return task;
  }

  static constexpr size_t kCompactAt = 1024;
  std::vector<Task*> fifo_;
  size_t fifo_head_ = 0;  // fifo_[fifo_head_..] are queued
  std::vector<Entry> prioritized_;
  uint64_t next_sequence_ = 0;
};

}  // namespace taskgrid::exec
