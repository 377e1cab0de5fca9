// The engine's commands (comm/wire.h): checking a batch from another
// process, then applying each command in order. A part of Engine (engine.h)
// kept in its own file so that the loop (engine.cpp) stays readable.
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "comm/wire_check.h"
#include "core/function_registry.h"
#include "engine/engine.h"
#include "engine/transfer_cookie.h"
#include "exec/task_channels.h"
#include "trace/trace.h"

namespace taskgrid::engine {

void Engine::apply_batch(const char* data, size_t bytes, int source) {
  // Nothing of a batch from another process is applied before all of it was
  // checked: a command that lies about a length must not be read, let alone
  // half applied. A batch this rank's own planner posted (source == this
  // rank) never crossed a process boundary and is trusted like the rest of
  // the process's memory: checking it cost ~175 instructions per task, the
  // whole of spmd mode's traffic.
  if (source != rank()) {
    const comm::wire::Peer peer{rank(), transport_.size(), completions_.head_rank(), source};
    if (const comm::wire::Rejection bad = comm::wire::check_batch(data, bytes, peer))
      fail(comm::wire::describe(bad.kind, source, bad.reason));
  }
  comm::wire::BatchReader reader(data, bytes);
  comm::wire::Header header;
  const char* payload = nullptr;
  applying_source_ = source;
  try {
    while (reader.next(header, payload)) {
      applying_kind_ = header.kind;
      switch (header.kind) {
        case comm::wire::Kind::task:
          apply_task(payload);
          break;
        case comm::wire::Kind::local_task:
          stats_.tasks_built_in_place += 1;
          link_task(static_cast<Task*>(comm::wire::read<comm::wire::LocalTask>(payload).record));
          break;
        case comm::wire::Kind::send:
          apply_send(comm::wire::read<comm::wire::Send>(payload));
          break;
        case comm::wire::Kind::retire:
          apply_retire(comm::wire::read<comm::wire::Retire>(payload).version);
          break;
        case comm::wire::Kind::create:
          apply_create(comm::wire::read<comm::wire::Create>(payload));
          break;
        case comm::wire::Kind::fetch:
          apply_fetch(comm::wire::read<comm::wire::Fetch>(payload));
          break;
        case comm::wire::Kind::broadcast:
        case comm::wire::Kind::route:
          trees_.apply(payload, source, header.kind == comm::wire::Kind::broadcast);
          break;
        case comm::wire::Kind::mpi_broadcast:
          groups_.apply(payload, source);
          break;
        case comm::wire::Kind::shutdown:
          shutdown_requested_ = true;
          break;
        case comm::wire::Kind::completed: {
          const size_t count = header.bytes / sizeof(comm::wire::Completed);
          completed_remote_.resize(count);
          std::memcpy(completed_remote_.data(), payload, count * sizeof(comm::wire::Completed));
          if (listener_) listener_->on_completed(completed_remote_.data(), count);
          break;
        }
      }
    }
  } catch (const std::exception& error) {
    // A buffer a command asks for may not exist (bad_alloc), a transport may
    // refuse a transfer: either ends the job here, saying which command.
    fail("applying " + comm::wire::command_name(static_cast<uint8_t>(applying_kind_), source) +
         ": " + error.what());
  }
  // Tasks made ready by this batch start only now, after the retirements in
  // it are known (that lets an inout task reuse its input buffer).
  dispatch_ready();
}

void Engine::protocol_error(const std::string& reason) {
  fail(
      comm::wire::describe(static_cast<uint8_t>(applying_kind_), applying_source_, reason.c_str()));
}

void Engine::apply_task(const char* payload) {
  // check_batch verified that the accesses, arguments and name fill the payload.
  const comm::wire::TaskView view = comm::wire::read_task(payload);
  const comm::wire::Task& header = view.task;
  Task* task = tasks_.acquire();
  if (!fill_task(*task, header, view.args, view.name, header.name_bytes, tasks_.functions(),
                 tasks_.names())) {
    tasks_.release(task);
    fail("task " + std::to_string(header.task_id) +
         " names a function that is not registered on this rank (id " +
         std::to_string(header.function) + "); every rank must register the same functions");
  }
  const size_t count = header.num_accesses;
  task->accesses.resize(count);
  // The batch is a byte stream: its records need not be aligned.
  if (count) std::memcpy(task->accesses.data(), view.accesses, count * sizeof(comm::wire::Access));
  link_task(task);
}

void Engine::link_task(Task* task) {
  // fill_task left channel_task null.
  if (task->channel >= 0) {
    if (!channels_)
      fail("task '" + std::string(task->name) + "' uses channel " + std::to_string(task->channel) +
           ", but this rank has 0");
    task->channel_task = channels_->enqueue(task->channel, task, task->name);
  }
  const size_t count = task->accesses.size();
  task->linked.resize(count);
  const comm::wire::Access* accesses = task->accesses.data();
  Task::Linked* linked = task->linked.data();
  for (size_t i = 0; i < count; ++i) {
    Task::Linked& slot = linked[i];
    slot.input = nullptr;
    slot.output = nullptr;
    const comm::wire::Access& access = accesses[i];
    if (access.in_version) {
      Version* input = versions_.find(access.in_version);
      if (!input && access.source == comm::wire::kSourceBroadcast) {
        // Arrives by a broadcast: the route (from whichever rank forwards it
        // here) may come before or after this task.
        input = versions_.expect(access.in_version, access.bytes);
      } else if (!input) {
        if (access.source < 0)
          fail("task " + std::to_string(task->id) + " reads version " +
               std::to_string(access.in_version) + ", which this rank never had");
        input = create_or_fail(access.in_version, access.bytes);
        versions_.give_buffer(input);
        transport_.receive_data(access.source, access.tag, input->data, access.bytes,
                                make_cookie(input, kReceive));
        if (trace::enabled())
          trace::receive_posted(trace::Arrival::receive, input->id, access.source, access.bytes);
      }
      // The task's buffer is the access's size; an input of another size
      // would be over-read (copied into the output, or handed to the task).
      if (input->bytes != access.bytes)
        protocol_error("task " + std::to_string(task->id) + " reads version " +
                       std::to_string(access.in_version) + " as " + std::to_string(access.bytes) +
                       " bytes, it has " + std::to_string(input->bytes));
      input->uses += 1;
      // The planner's retirement of the input, folded into this access: the
      // task's use keeps it until the task is done with it.
      if (access.flags & comm::wire::kRetiresInput) input->retired = true;
      slot.input = input;
      if (!input->ready) {
        if (!input->on_device) [[likely]] {
          task->waiting += 1;
          input->waiters.push_back({VersionWaiter::Kind::task, 0, 0, task});
        } else if (!DeviceTasks::takes(*task)) {
          // Only on a device, where a device task reads it as it is.
          task->waiting += 1;
          wait_on_host(input, {VersionWaiter::Kind::task, 0, 0, task});
        }
      }
    }
    if (access.out_version) {
      Version* output = create_or_fail(access.out_version, access.bytes);
      output->uses = 1;  // the producer: kept until it has finished
      slot.output = output;
    }
  }
  if (task->waiting == 0) newly_ready_.push_back(task);
}

void Engine::apply_send(const comm::wire::Send& send) {
  Version* version = find_or_fail(send.version, "send");
  version->uses += 1;
  if (version->ready) {
    send_version(version, send.dest, send.tag);
  } else if (version->on_device) {
    send_from_device(version, send.dest, send.tag);
  } else {
    version->waiters.push_back({VersionWaiter::Kind::send, send.dest, send.tag, nullptr});
  }
}

void Engine::apply_retire(uint64_t id) {
  Version* version = find_or_fail(id, "retire");
  version->retired = true;
  version->uses += 1;  // balanced by release_use: frees it if nothing else holds it
  release_use(version);
}

void Engine::apply_create(const comm::wire::Create& create) {
  Version* version = create_or_fail(create.version, create.bytes);
  versions_.give_buffer(version, create.buffer);
  version_ready(version);
}

void Engine::apply_fetch(const comm::wire::Fetch& fetch) {
  if (fetch.source >= 0) {
    transport_.receive_data(fetch.source, fetch.tag, fetch.host, fetch.bytes,
                            make_cookie(keep_fetch(fetch), kFetch));
    if (trace::enabled())
      trace::receive_posted(trace::Arrival::fetch, fetch.version, fetch.source, fetch.bytes);
    return;
  }
  Version* version = find_or_fail(fetch.version, "fetch");
  // copy_to_host copies fetch.bytes out of the version's buffer.
  if (version->bytes != fetch.bytes)
    protocol_error("a fetch of " + std::to_string(fetch.bytes) + " bytes of version " +
                   std::to_string(fetch.version) + ", which has " + std::to_string(version->bytes));
  version->uses += 1;
  if (version->ready) {
    copy_to_host(version, fetch);
  } else {
    wait_on_host(version, {VersionWaiter::Kind::fetch, 0, 0, keep_fetch(fetch)});
  }
}

}  // namespace taskgrid::engine
