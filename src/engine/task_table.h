// The engine's tasks: decoded from `task` commands into recycled Task
// records (their vectors keep their capacity, so steady state allocates
// nothing), the tasks ready to run on this thread when there are no
// workers, and the count of tasks started but not finished.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "comm/wire.h"
#include "data/record_pool.h"
#include "engine/task_context_access.h"
#include "exec/ready_queue.h"
#include "runtime/function_registry.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::exec {
struct ChannelTask;
}

namespace taskgrid::runtime {

struct Version;

struct Task {
  uint64_t id = 0;
  uint64_t completion_key = 0;  // wire::Task::completion_key
  const detail::RegisteredFunction* function = nullptr;
  uint32_t waiting = 0;  // inputs not yet present
  // Per access: what the command says, and the versions it reads and
  // writes (nullptr when it does not). One record per access, so decoding,
  // readying and finishing a task walk one array.
  struct Access {
    wire::Access wire;
    Version* input;
    Version* output;
  };
  std::vector<Access> accesses;
  std::vector<detail::TaskContextAccess::Buffer> buffers;  // what the body sees
  std::vector<char> args;
  const char* name = nullptr;  // interned: the option's name or the function's
  int channel = -1;
  int priority = 0;                           // TaskOptions::priority (exec::ReadyQueue)
  exec::ChannelTask* channel_task = nullptr;  // task-aware communication state
  uint64_t duration_ns = 0;
};

class TaskTable {
 public:
  // A task record to fill (recycled when one is free).
  Task* acquire();
  // What a new record has room for (about 300 bytes).
  static constexpr size_t kTypicalAccesses = 4;
  static constexpr size_t kTypicalArgBytes = 64;
  void release(Task* task) { records_.release(task); }
  // A stable copy of a task name (names repeat: one copy each).
  const char* intern(const char* name, size_t bytes);

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
  std::unordered_set<std::string> names_;
};

}  // namespace taskgrid::runtime
