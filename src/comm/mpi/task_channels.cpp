// exec::TaskChannels over MPI: a communicator per channel, the requests of
// posted operations.
#include "comm/mpi/task_channels.h"

#include <mpi.h>

#include <deque>
#include <string>

#include "comm/mpi/task_comm_ops.h"
#include "exec/task_channels.h"

namespace taskgrid::exec {

using comm::mpi::CommOperation;
using comm::mpi::post_operation;
using comm::mpi::requests_complete;
using comm::mpi::TaskBinding;

namespace {

// MPI's words for an error code, with the code.
std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  return std::string(text, static_cast<size_t>(length)) + " (MPI error " + std::to_string(code) +
         ")";
}

}  // namespace

struct ChannelTask {
  void* owner = nullptr;
  const char* name = nullptr;
  int channel = -1;
  bool body_done = false;
  std::vector<CommOperation> operations;  // recorded by the body
  std::vector<MPI_Request> requests;      // posted in channel order
  TaskBinding binding;
};

struct TaskChannels::State {
  int rank = 0;
  Fail fail = nullptr;
  std::vector<MPI_Comm> communicators;
  std::vector<std::deque<ChannelTask*>> queues;  // submission order, until posted
  std::vector<ChannelTask*> waiting;             // posted, requests in flight
  std::vector<std::unique_ptr<ChannelTask>> storage;
  std::vector<ChannelTask*> free;
};

void* binding_without_channel() {
  static TaskBinding none{-1, -1, MPI_COMM_NULL, nullptr};
  return &none;
}

TaskChannels::TaskChannels(std::unique_ptr<State> state) : state_(std::move(state)) {}

TaskChannels::~TaskChannels() {
  for (MPI_Comm& channel : state_->communicators) MPI_Comm_free(&channel);
}

int TaskChannels::count() const { return static_cast<int>(state_->communicators.size()); }
bool TaskChannels::idle() const { return state_->waiting.empty(); }
void* TaskChannels::binding(ChannelTask* task) { return &task->binding; }

ChannelTask* TaskChannels::enqueue(int channel, void* owner, const char* name) {
  State& s = *state_;
  if (channel < 0 || channel >= count())
    s.fail(s.rank, "task '" + std::string(name) + "' uses channel " + std::to_string(channel) +
                       ", but this rank has " + std::to_string(count()));
  ChannelTask* task;
  if (!s.free.empty()) {
    task = s.free.back();
    s.free.pop_back();
  } else {
    s.storage.push_back(std::make_unique<ChannelTask>());
    task = s.storage.back().get();
  }
  task->owner = owner;
  task->name = name;
  task->channel = channel;
  task->body_done = false;
  task->operations.clear();
  task->requests.clear();
  task->binding = {channel, s.rank, s.communicators[static_cast<size_t>(channel)],
                   &task->operations};
  s.queues[static_cast<size_t>(channel)].push_back(task);
  return task;
}

void TaskChannels::body_finished(ChannelTask* task, std::vector<void*>& complete) {
  task->body_done = true;
  advance(task->channel, complete);
}

void TaskChannels::advance(int channel, std::vector<void*>& complete) {
  State& s = *state_;
  std::deque<ChannelTask*>& queue = s.queues[static_cast<size_t>(channel)];
  while (!queue.empty() && queue.front()->body_done) {
    ChannelTask* task = queue.front();
    queue.pop_front();
    task->requests.resize(task->operations.size());
    for (size_t i = 0; i < task->operations.size(); ++i) {
      const int code = post_operation(
          task->operations[i], s.communicators[static_cast<size_t>(channel)], &task->requests[i]);
      if (code != MPI_SUCCESS)
        s.fail(s.rank, "task '" + std::string(task->name) +
                           "': posting a task-aware operation failed: " + mpi_error_text(code));
    }
    if (task->requests.empty()) {
      retire(task, complete);
    } else {
      s.waiting.push_back(task);
    }
  }
}

bool TaskChannels::poll(std::vector<void*>& complete) {
  State& s = *state_;
  bool any = false;
  for (size_t i = 0; i < s.waiting.size();) {
    ChannelTask* task = s.waiting[i];
    int error = MPI_SUCCESS;
    if (!requests_complete(task->requests, error)) {
      if (error != MPI_SUCCESS)
        s.fail(s.rank, "task '" + std::string(task->name) +
                           "': a task-aware operation failed: " + mpi_error_text(error));
      ++i;
      continue;
    }
    s.waiting[i] = s.waiting.back();
    s.waiting.pop_back();
    retire(task, complete);
    any = true;
  }
  return any;
}

void TaskChannels::retire(ChannelTask* task, std::vector<void*>& complete) {
  complete.push_back(task->owner);
  state_->free.push_back(task);
}

}  // namespace taskgrid::exec

namespace taskgrid::comm::mpi {

std::unique_ptr<exec::TaskChannels> make_task_channels(MPI_Comm parent, int channels, int rank,
                                                       exec::TaskChannels::Fail fail) {
  auto state = std::make_unique<exec::TaskChannels::State>();
  state->rank = rank;
  state->fail = fail;
  state->queues.resize(static_cast<size_t>(channels));
  for (int c = 0; c < channels; ++c) {
    MPI_Comm channel;
    MPI_Comm_dup(parent, &channel);
    // Errors come back as codes, so the failing task can be named.
    MPI_Comm_set_errhandler(channel, MPI_ERRORS_RETURN);
    state->communicators.push_back(channel);
  }
  return std::make_unique<exec::TaskChannels>(std::move(state));
}

}  // namespace taskgrid::comm::mpi
