// Task-aware communication channels, the engine's part that owns them: one
// communicator per channel, the channel's tasks in submission order, and the
// MPI requests of tasks whose operations are posted. A body only records its
// operations (task_comm_ops.h); once it returns they are posted in channel
// order (a body that returned early waits for the bodies of the channel's
// earlier tasks, never for their completion) and the task completes when its
// requests do. This is the one engine part that holds MPI objects (its
// requests are the user's own operations); they stay in task_channels.cpp,
// so the engine's headers do not include <mpi.h>.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace taskgrid::exec {

// One task on a channel (defined in task_channels.cpp).
struct ChannelTask;

// The binding of a task without a channel: task-aware calls in it are
// refused with a message that says so.
void* binding_without_channel();

class TaskChannels {
 public:
  // Ends the job with a message (names the rank); does not return.
  using Fail = void (*)(int rank, const std::string& message);
  struct State;
  explicit TaskChannels(std::unique_ptr<State> state);
  ~TaskChannels();
  TaskChannels(const TaskChannels&) = delete;
  TaskChannels& operator=(const TaskChannels&) = delete;

  int count() const;
  // A task on `channel` was applied (submission order on this rank). `owner`
  // is the engine's task record, handed back when the task completes.
  ChannelTask* enqueue(int channel, void* owner, const char* name);
  // What the running body reaches through detail::TaskContextAccess::binding().
  void* binding(ChannelTask* task);
  // The body returned: post what is now in order. Appends the owners of the
  // tasks that completed (no operations) to `complete`.
  void body_finished(ChannelTask* task, std::vector<void*>& complete);
  // Tests posted requests; appends the owners of completed tasks.
  bool poll(std::vector<void*>& complete);
  bool idle() const;

 private:
  void advance(int channel, std::vector<void*>& complete);
  void retire(ChannelTask* task, std::vector<void*>& complete);

  std::unique_ptr<State> state_;
};

}  // namespace taskgrid::exec
