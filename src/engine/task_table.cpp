#include "engine/task_table.h"

namespace taskgrid::engine {

void TaskTable::reserve_typical(Task& task) {
  // A new record gets room for a typical task at once: its vectors would
  // otherwise grow over its first uses (a window of 4096 records takes tens
  // of thousands of tasks to warm up that way). Larger tasks still grow them.
  task.accesses.reserve(kTypicalAccesses);
  task.linked.reserve(kTypicalAccesses);
  task.buffers.reserve(kTypicalAccesses);
  task.args.reserve(kTypicalArgBytes);
}

Task* TaskTable::acquire() { return records_.acquire(reserve_typical); }

const char* TaskNames::intern_other(const char* name, size_t bytes) {
  const std::string_view key(name, bytes);
  auto found = names_.find(key);
  if (found == names_.end()) found = names_.emplace(key).first;
  last_ = found->c_str();
  last_bytes_ = bytes;
  return last_;
}

bool fill_task(Task& task, const comm::wire::Task& header, const void* args, const char* name,
               size_t name_bytes, FunctionCache& functions, TaskNames& names) {
  task.function = functions.find(header.function);
  if (!task.function) return false;
  task.id = header.task_id;
  task.completion_key = header.completion_key;
  task.waiting = 0;
  const char* arg_bytes = static_cast<const char*>(args);
  task.args.assign(arg_bytes, arg_bytes + header.args_bytes);
  task.signature_bytes = header.signature_bytes;
  task.name = name_bytes ? names.intern(name, name_bytes) : task.function->name;
  task.channel = header.channel;
  task.priority = header.priority;
  task.device = header.device;
  task.channel_task = nullptr;
  return true;
}

TaskContext make_context(const Task& task, const detail::TaskContextAccess::Buffer* buffers,
                         size_t num_data, int rank, void* binding) {
  const size_t args_size = task.args.size() - task.signature_bytes;
  TaskContext context = detail::TaskContextAccess::make(buffers, num_data, task.args.data(),
                                                        args_size, rank, task.id, binding);
  if (task.signature_bytes)
    detail::TaskContextAccess::set_signature(context, task.args.data() + args_size,
                                             task.signature_bytes);
  return context;
}

std::string describe(const Task& task) {
  return "task '" + std::string(task.name) + "' (id " + std::to_string(task.id) + ")";
}

}  // namespace taskgrid::engine
