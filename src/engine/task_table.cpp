#include "engine/task_table.h"

namespace taskgrid::runtime {

Task* TaskTable::acquire() {
  if (!free_.empty()) {
    Task* task = free_.back();
    free_.pop_back();
    return task;
  }
  storage_.push_back(std::make_unique<Task>());
  return storage_.back().get();
}

const char* TaskTable::intern(const char* name, size_t bytes) {
  return names_.emplace(name, bytes).first->c_str();
}

Task* TaskTable::pop_ready() {
  if (ready_head_ == ready_.size()) return nullptr;
  Task* task = ready_[ready_head_++];
  if (ready_head_ == ready_.size()) {
    ready_.clear();
    ready_head_ = 0;
  }
  return task;
}

}  // namespace taskgrid::runtime
