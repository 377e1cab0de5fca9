// The engine's tasks: decoded from `task` commands into recycled Task
// records (their vectors keep their capacity, so steady state allocates
// nothing), the tasks ready to run on this thread when there are no
// workers, and the count of tasks started but not finished.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "comm/wire.h"
#include "core/function_registry.h"
#include "core/task_context_access.h"
#include "data/record_pool.h"
#include "exec/ready_queue.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::exec {
struct ChannelTask;
}

namespace taskgrid::engine {

struct Version;

struct Task {
  uint64_t id = 0;
  uint64_t completion_key = 0;  // comm::wire::Task::completion_key
  const detail::RegisteredFunction* function = nullptr;
  uint32_t waiting = 0;  // inputs not yet present
  // Per access: what the command says (contiguous: a planner in this
  // process writes them in place, see InPlaceTasks), and the versions it
  // reads and writes (nullptr when it does not).
  std::vector<comm::wire::Access> accesses;
  struct Linked {
    Version* input;
    Version* output;
  };
  std::vector<Linked> linked;
  std::vector<detail::TaskContextAccess::Buffer> buffers;  // what the body sees
  std::vector<char> args;      // ends with the arguments' types in checked mode
  const char* name = nullptr;  // interned: the option's name or the function's
  int channel = -1;
  int priority = 0;              // TaskOptions::priority (exec::ReadyQueue)
  int device = -1;               // comm::wire::Task::device (-1: any device, -2: on a CPU)
  uint32_t signature_bytes = 0;  // comm::wire::Task::signature_bytes (in padding here)
  exec::ChannelTask* channel_task = nullptr;  // task-aware communication state
  uint64_t duration_ns = 0;
  bool in_place = false;          // built by InPlaceTasks, which takes it back
  Task* next_finished = nullptr;  // exec::WorkerPool's stack of finished tasks
};

// The context a task's body sees, on these buffers.
// In checked mode its arguments end with their types: the context gets
// them apart.
TaskContext make_context(const Task& task, const detail::TaskContextAccess::Buffer* buffers,
                         size_t num_data, int rank, void* binding = nullptr);

// "task 'name' (id N)": how error messages name a task.
std::string describe(const Task& task);

// The function of the last task filled, remembered: registered functions
// are never removed, and consecutive tasks mostly run the same one.
class FunctionCache {
 public:
  const detail::RegisteredFunction* find(uint32_t id) {
    if (id != id_ || !function_) {
      function_ = detail::find_function(FunctionId{id});
      id_ = id;
    }
    return function_;
  }

 private:
  uint32_t id_ = 0;
  const detail::RegisteredFunction* function_ = nullptr;
};

// Stable copies of task names (names repeat: one copy each). Tasks come in
// runs of one name, so the last one is compared first; a name seen before is
// found without building a string (no allocation per named task).
class TaskNames {
 public:
  const char* intern(const char* name, size_t bytes) {
    if (last_ && bytes == last_bytes_ && std::memcmp(last_, name, bytes) == 0) return last_;
    return intern_other(name, bytes);
  }

 private:
  const char* intern_other(const char* name, size_t bytes);
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };
  std::unordered_set<std::string, Hash, std::equal_to<>> names_;
  const char* last_ = nullptr;  // a copy in names_ (their addresses never change)
  size_t last_bytes_ = 0;
};

// Fills `task` with what a task command says, except its accesses:
// `header`'s fields, a copy of its arguments, its name (name_bytes 0: the
// function's). False, leaving the record unfinished, when `header.function`
// is not registered in this process.
bool fill_task(Task& task, const comm::wire::Task& header, const void* args, const char* name,
               size_t name_bytes, FunctionCache& functions, TaskNames& names);

class TaskTable {
 public:
  // A task record to fill (recycled when one is free).
  Task* acquire();
  // What a new record has room for (about 300 bytes).
  static constexpr size_t kTypicalAccesses = 4;
  static constexpr size_t kTypicalArgBytes = 64;
  void release(Task* task) { records_.release(task); }
  // Gives a new record room for a typical task at once (see acquire).
  static void reserve_typical(Task& task);
  FunctionCache& functions() { return functions_; }
  TaskNames& names() { return names_; }

  // Ready tasks run by the engine thread itself (no workers), highest
  // priority first, FIFO among equals.
  void push_ready(Task* task) { ready_.push(task); }
  Task* pop_ready() { return ready_.pop(); }
  bool has_ready() const { return !ready_.empty(); }

  void started() { running_ += 1; }
  void finished() { running_ -= 1; }
  bool idle() const { return running_ == 0 && !has_ready(); }

 private:
  data::RecordPool<Task> records_;
  exec::ReadyQueue<Task> ready_;
  size_t running_ = 0;  // made ready, not yet finished
  FunctionCache functions_;
  TaskNames names_;
};

}  // namespace taskgrid::engine
