#include "engine/task_table.h"

namespace taskgrid::runtime {

Task* TaskTable::acquire() {
  // A new record gets room for a typical task at once: its vectors would
  // otherwise grow over its first uses (a window of 4096 records takes tens
  // of thousands of tasks to warm up that way). Larger tasks still grow them.
  return records_.acquire([](Task& task) {
    task.accesses.reserve(kTypicalAccesses);
    task.buffers.reserve(kTypicalAccesses);
    task.args.reserve(kTypicalArgBytes);
  });
}

const char* TaskTable::intern(const char* name, size_t bytes) {
  return names_.emplace(name, bytes).first->c_str();
}

}  // namespace taskgrid::runtime
