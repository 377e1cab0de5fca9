#include "engine/in_place_tasks.h"

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace taskgrid::engine {

core::LocalTaskBuilder::Slot InPlaceTasks::open(const comm::wire::Task& task, const void* args,
                                                const char* name) {
  if (!records_.has_free()) {
    std::lock_guard lock(lock_);
    records_.release_all(handed_over_);
  }
  Task* record = records_.acquire([this](Task& fresh) {
    TaskTable::reserve_typical(fresh);
    fresh.in_place = true;
    made_ += 1;
  });
  if (!fill_task(*record, task, args, name, name ? std::strlen(name) : 0, functions_, names_)) {
    records_.release(record);
    throw std::logic_error("taskgrid: task " + std::to_string(task.task_id) +
                           " names function id " + std::to_string(task.function) +
                           ", which is not registered");
  }
  record->accesses.resize(task.num_accesses);
  return {record, record->accesses.data()};
}

void InPlaceTasks::hand_over() {
  if (returned_.empty()) return;
  std::lock_guard lock(lock_);
  handed_over_.insert(handed_over_.end(), returned_.begin(), returned_.end());
  returned_.clear();
}

}  // namespace taskgrid::engine
