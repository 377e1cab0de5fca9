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

}  // namespace taskgrid::runtime
