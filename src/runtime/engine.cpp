#include "runtime/engine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>

#include "exec/task_epilogue.h"
#include "runtime/transfer_cookie.h"
#include "trace/trace.h"

namespace taskgrid::runtime {
namespace {

std::atomic<comm::Transport*> abort_transport{nullptr};

// Completion records go to the head when this many accumulate or the oldest
// is this old. They are off the critical path (data moves peer to peer), so
// batching them costs the program nothing but a late wait_all by < 1 ms.
constexpr size_t kCompletionBatchBytes = 4096;
constexpr uint64_t kCompletionDelayNs = 200'000;

}  // namespace

void set_abort_transport(comm::Transport* transport) { abort_transport.store(transport); }

void fail_job(int rank, const std::string& message) {
  std::fprintf(stderr, "error: taskgrid: rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  // MPICH's launcher tears the job down on MPI_Abort and may drop output it
  // has not forwarded yet: give it a moment to carry the message out.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (comm::Transport* transport = abort_transport.load()) transport->abort_job(1);
  std::_Exit(1);
}

Engine::Engine(comm::Transport& transport, int threads, int head_rank,
               std::vector<MPI_Comm> channels, MPI_Comm collectives)
    : transport_(transport),
      head_rank_(head_rank),
      collectives_(collectives),
      channel_comms_(std::move(channels)),
      channel_queues_(channel_comms_.size()) {
  versions_.reserve(1024);
  if (threads > 1) {
    workers_ = std::make_unique<exec::WorkerPool<Task>>(
        threads - 1, [this](Task* task) { execute(task); }, [this] { wakeup_.notify(); });
  }
}

Engine::~Engine() {
  if (workers_) workers_->stop();
  for (auto& [id, version] : versions_)
    if (version->data) data::release_buffer(version->data);
  for (auto& [members, comm] : broadcast_comms_) MPI_Comm_free(&comm);
}

void Engine::post(int dest, std::vector<char>&& batch) {
  {
    std::lock_guard lock(posted_mutex_);
    posted_.emplace_back(dest, std::move(batch));
  }
  wakeup_.notify();
}

// ------------------------------------------------------------- commands ---

void Engine::apply_batch(const char* data, size_t bytes, int source) {
  wire::BatchReader reader(data, bytes);
  wire::Header header;
  const char* payload = nullptr;
  while (reader.next(header, payload)) {
    switch (header.kind) {
      case wire::Kind::task:
        apply_task(payload);
        break;
      case wire::Kind::send:
        apply_send(wire::read<wire::Send>(payload));
        break;
      case wire::Kind::retire:
        apply_retire(wire::read<wire::Retire>(payload).version);
        break;
      case wire::Kind::create:
        apply_create(wire::read<wire::Create>(payload));
        break;
      case wire::Kind::fetch:
        apply_fetch(wire::read<wire::Fetch>(payload));
        break;
      case wire::Kind::broadcast:
      case wire::Kind::route:
        apply_broadcast(payload, header.bytes, source, header.kind == wire::Kind::broadcast);
        break;
      case wire::Kind::mpi_broadcast:
        apply_mpi_broadcast(payload, header.bytes);
        break;
      case wire::Kind::shutdown:
        shutdown_requested_ = true;
        break;
      case wire::Kind::completed: {
        const size_t count = header.bytes / sizeof(wire::Completed);
        completed_remote_.resize(count);
        std::memcpy(completed_remote_.data(), payload, count * sizeof(wire::Completed));
        if (listener_) listener_->on_completed(completed_remote_.data(), count);
        break;
      }
      default:
        fail_job(rank(), "unknown command " + std::to_string(static_cast<int>(header.kind)) +
                             " from rank " + std::to_string(source));
    }
  }
  // Tasks made ready by this batch start only now, after the retirements in
  // it are known (that lets an inout task reuse its input buffer).
  dispatch_ready();
}

void Engine::apply_task(const char* payload) {
  const auto header = wire::read<wire::Task>(payload);
  Task* task;
  if (!free_tasks_.empty()) {
    task = free_tasks_.back();
    free_tasks_.pop_back();
  } else {
    task_storage_.push_back(std::make_unique<Task>());
    task = task_storage_.back().get();
  }
  task->id = header.task_id;
  task->function = detail::find_function(FunctionId{header.function});
  if (!task->function)
    fail_job(rank(), "task " + std::to_string(header.task_id) +
                         " names a function that is not registered on this rank (id " +
                         std::to_string(header.function) +
                         "); every rank must register the same functions");
  task->waiting = 0;
  const char* at = payload + sizeof header;
  task->accesses.resize(header.num_accesses);
  std::memcpy(task->accesses.data(), at, header.num_accesses * sizeof(wire::Access));
  at += header.num_accesses * sizeof(wire::Access);
  task->args.assign(at, at + header.args_bytes);
  at += header.args_bytes;
  task->name = header.name_bytes ? names_.emplace(at, header.name_bytes).first->c_str()
                                 : task->function->name;
  task->channel = header.channel;
  task->body_done = false;
  task->operations.clear();
  task->requests.clear();
  if (task->channel >= static_cast<int>(channel_comms_.size()))
    fail_job(rank(), "task '" + std::string(task->name) + "' uses channel " +
                         std::to_string(task->channel) + ", but this rank has " +
                         std::to_string(channel_comms_.size()));
  if (task->channel >= 0) channel_queues_[static_cast<size_t>(task->channel)].push_back(task);
  task->inputs.assign(header.num_accesses, nullptr);
  task->outputs.assign(header.num_accesses, nullptr);

  for (size_t i = 0; i < header.num_accesses; ++i) {
    const wire::Access& access = task->accesses[i];
    if (access.in_version) {
      Version* input = find(access.in_version);
      if (!input && access.source == wire::kSourceBroadcast) {
        // Arrives by a broadcast: the route (from whichever rank forwards it
        // here) may come before or after this task.
        input = expect_version(access.in_version, access.bytes);
      } else if (!input) {
        if (access.source < 0)
          fail_job(rank(), "task " + std::to_string(task->id) + " reads version " +
                               std::to_string(access.in_version) + ", which this rank never had");
        input = create_version(access.in_version, access.bytes);
        input->data = buffers_.get(access.bytes);
        transport_.receive_data(access.source, access.tag, input->data, access.bytes,
                                make_cookie(input, kReceive));
      }
      input->uses += 1;
      task->inputs[i] = input;
      if (!input->ready) {
        task->waiting += 1;
        input->waiters.push_back(task);
      }
    }
    if (access.out_version) {
      Version* output = create_version(access.out_version, access.bytes);
      output->uses = 1;  // the producer: kept until it has finished
      task->outputs[i] = output;
    }
  }
  if (task->waiting == 0) newly_ready_.push_back(task);
}

void Engine::apply_send(const wire::Send& send) {
  Version* version = find_or_fail(send.version, "send");
  version->uses += 1;
  if (version->ready) {
    send_version(version, send.dest, send.tag);
  } else {
    version->sends.push_back({send.dest, send.tag});
  }
}

void Engine::apply_retire(uint64_t id) {
  Version* version = find_or_fail(id, "retire");
  version->retired = true;
  version->uses += 1;  // balanced by release_use: frees it if nothing else holds it
  release_use(version);
}

void Engine::apply_create(const wire::Create& create) {
  Version* version = create_version(create.version, create.bytes);
  version->data = create.buffer;
  version_ready(version);
}

void Engine::apply_fetch(const wire::Fetch& fetch) {
  if (fetch.source >= 0) {
    fetch_storage_.push_back(std::make_unique<FetchReceive>(FetchReceive{fetch.version}));
    transport_.receive_data(fetch.source, fetch.tag, fetch.host, fetch.bytes,
                            make_cookie(fetch_storage_.back().get(), kFetch));
    return;
  }
  Version* version = find_or_fail(fetch.version, "fetch");
  version->uses += 1;
  if (version->ready) {
    copy_to_host(version, fetch);
  } else {
    version->fetches.push_back(fetch);
  }
}

// ------------------------------------------------------------- versions ---

Engine::Version* Engine::find(uint64_t id) {
  auto it = versions_.find(id);
  return it == versions_.end() ? nullptr : it->second;
}

Engine::Version* Engine::find_or_fail(uint64_t id, const char* why) {
  Version* version = find(id);
  if (!version)
    fail_job(rank(), std::string("protocol error: ") + why + " of version " + std::to_string(id) +
                         ", which this rank does not hold");
  return version;
}

Engine::Version* Engine::create_version(uint64_t id, size_t bytes) {
  Version* version;
  if (!free_versions_.empty()) {
    version = free_versions_.back();
    free_versions_.pop_back();
  } else {
    version_storage_.push_back(std::make_unique<Version>());
    version = version_storage_.back().get();
  }
  version->id = id;
  version->data = nullptr;
  version->bytes = bytes;
  version->ready = false;
  version->retired = false;
  version->uses = 0;
  version->broadcasts.clear();
  version->mpi_waiting = false;
  if (!versions_.emplace(id, version).second)
    fail_job(rank(), "protocol error: version " + std::to_string(id) + " created twice");
  return version;
}

void Engine::version_ready(Version* version) {
  version->ready = true;
  for (Task* task : version->waiters)
    if (--task->waiting == 0) newly_ready_.push_back(task);
  version->waiters.clear();
  for (const PendingSend& send : version->sends) send_version(version, send.dest, send.tag);
  version->sends.clear();
  for (const wire::Fetch& fetch : version->fetches) copy_to_host(version, fetch);
  version->fetches.clear();
  for (Broadcast* broadcast : version->broadcasts) advance_broadcast(broadcast);
  version->broadcasts.clear();
  if (version->mpi_waiting) {
    version->mpi_waiting = false;
    post_mpi_broadcasts();
  }
}

void Engine::release_use(Version* version) {
  if (--version->uses > 0 || !version->retired) return;
  // Retired and unused: no command can name it again on this rank.
  if (version->data) buffers_.put(version->data, version->bytes);
  versions_.erase(version->id);
  version->data = nullptr;
  free_versions_.push_back(version);
  stats_.versions_reclaimed += 1;
}

void Engine::send_version(Version* version, int dest, int tag) {
  transport_.send_data(dest, tag, version->data, version->bytes, make_cookie(version, kSend));
  stats_.data_messages_sent += 1;
  stats_.data_bytes_sent += version->bytes;
  if (trace::enabled()) {
    const uint64_t now = trace::now_ns();
    trace::span("comm", "send", now, now, version->id, dest, version->bytes);
  }
}

void Engine::copy_to_host(Version* version, const wire::Fetch& fetch) {
  std::memcpy(fetch.host, version->data, fetch.bytes);
  if (listener_) listener_->on_fetched(version->id);
  release_use(version);
}

// ---------------------------------------------------------------- tasks ---

void Engine::make_ready(Task* task) {
  // Output buffers are taken only now, so a long queue of planned tasks does
  // not hold memory. An inout task takes over its input's buffer when it is
  // the last user of a retired version; otherwise it works on a copy.
  task->buffers.resize(task->accesses.size());
  for (size_t i = 0; i < task->accesses.size(); ++i) {
    Version* input = task->inputs[i];
    Version* output = task->outputs[i];
    if (output) {
      if (input && input->uses == 1 && input->retired) {
        output->data = input->data;
        input->data = nullptr;
        stats_.inout_buffers_reused += 1;
      } else {
        output->data = buffers_.get(output->bytes);
        if (input) std::memcpy(output->data, input->data, output->bytes);
      }
      task->buffers[i] = {output->data, output->bytes};
    } else {
      task->buffers[i] = {input->data, input->bytes};
    }
  }
  running_ += 1;
  if (workers_) {
    workers_->push(task);
  } else {
    local_ready_.push_back(task);
  }
}

void Engine::dispatch_ready() {
  // make_ready may not append to newly_ready_, so a plain loop is safe.
  for (Task* task : newly_ready_) make_ready(task);
  newly_ready_.clear();
}

void Engine::execute(Task* task) {
  const bool timed = timing_ || trace::enabled();
  const uint64_t start = timed ? trace::now_ns() : 0;
  exec::TaskBinding binding{
      task->channel, rank(),
      task->channel >= 0 ? channel_comms_[static_cast<size_t>(task->channel)] : MPI_COMM_NULL,
      &task->operations};
  TaskContext context(task->buffers.data(), task->buffers.size(), task->args.data(),
                      task->args.size(), rank(), task->id, &binding);
  try {
    task->function->function(context);
    exec::run_task_epilogue();
  } catch (const std::exception& error) {
    fail_job(rank(), std::string("task '") + task->name + "' (id " + std::to_string(task->id) +
                         ") failed: " + error.what());
  } catch (...) {
    fail_job(rank(), std::string("task '") + task->name + "' (id " + std::to_string(task->id) +
                         ") failed with an unknown exception");
  }
  if (!timed) {
    task->duration_ns = 0;
    return;
  }
  const uint64_t end = trace::now_ns();
  task->duration_ns = end - start;
  if (trace::enabled()) trace::span("task", task->name, start, end, task->id);
}

void Engine::body_finished(Task* task) {
  if (task->channel < 0) {
    finish(task);
    return;
  }
  task->body_done = true;
  advance_channel(task->channel);
}

void Engine::advance_channel(int channel) {
  // Post in submission order: a task whose body ran early waits here for the
  // bodies of the channel's earlier tasks (never for their completion).
  std::deque<Task*>& queue = channel_queues_[static_cast<size_t>(channel)];
  while (!queue.empty() && queue.front()->body_done) {
    Task* task = queue.front();
    queue.pop_front();
    task->requests.resize(task->operations.size());
    for (size_t i = 0; i < task->operations.size(); ++i) {
      const int code = exec::post_operation(
          task->operations[i], channel_comms_[static_cast<size_t>(channel)], &task->requests[i]);
      if (code != MPI_SUCCESS)
        fail_job(rank(), "task '" + std::string(task->name) +
                             "': posting a task-aware operation failed (MPI error " +
                             std::to_string(code) + ")");
    }
    if (task->requests.empty()) {
      finish(task);
    } else {
      waiting_requests_.push_back(task);
    }
  }
}

bool Engine::poll_task_requests() {
  bool any = false;
  for (size_t i = 0; i < waiting_requests_.size();) {
    Task* task = waiting_requests_[i];
    int error = MPI_SUCCESS;
    if (!exec::requests_complete(task->requests, error)) {
      if (error != MPI_SUCCESS)
        fail_job(rank(), "task '" + std::string(task->name) +
                             "': a task-aware operation failed (MPI error " +
                             std::to_string(error) + ")");
      ++i;
      continue;
    }
    waiting_requests_[i] = waiting_requests_.back();
    waiting_requests_.pop_back();
    finish(task);
    any = true;
  }
  if (any) dispatch_ready();
  return any;
}

void Engine::finish(Task* task) {
  running_ -= 1;
  stats_.tasks_executed += 1;
  stats_.task_ns += task->duration_ns;
  for (size_t i = 0; i < task->accesses.size(); ++i) {
    if (Version* output = task->outputs[i]) {
      version_ready(output);
      release_use(output);
    }
    if (Version* input = task->inputs[i]) release_use(input);
  }
  const wire::Completed record{task->id, task->duration_ns};
  if (rank() == head_rank_) {
    completed_local_.push_back(record);
  } else {
    if (completed_batch_.empty()) completed_batch_since_ns_ = trace::now_ns();
    completed_batch_.add(wire::Kind::completed, record);
  }
  free_tasks_.push_back(task);
}

void Engine::transfer_done(uint64_t cookie) {
  switch (cookie_kind(cookie)) {
    case kReceive: {
      auto* version = cookie_object<Version>(cookie);
      stats_.data_messages_received += 1;
      stats_.data_bytes_received += version->bytes;
      version_ready(version);
      break;
    }
    case kSend:
      release_use(cookie_object<Version>(cookie));
      break;
    case kBroadcastChunk:
      broadcast_chunk_done(cookie_object<ChunkEvent>(cookie));
      break;
    case kFetch: {
      auto* fetch = cookie_object<FetchReceive>(cookie);
      if (listener_) listener_->on_fetched(fetch->version);
      for (auto it = fetch_storage_.begin(); it != fetch_storage_.end(); ++it) {
        if (it->get() == fetch) {
          fetch_storage_.erase(it);
          break;
        }
      }
      break;
    }
  }
}

// ----------------------------------------------------------------- loop ---

bool Engine::drain_posted() {
  {
    std::lock_guard lock(posted_mutex_);
    if (posted_.empty()) return false;
    posted_taken_.swap(posted_);
  }
  for (auto& [dest, batch] : posted_taken_) {
    if (dest == rank()) {
      apply_batch(batch.data(), batch.size(), dest);
    } else {
      stats_.control_messages_sent += 1;
      stats_.control_bytes_sent += batch.size();
      transport_.send_control(dest, std::move(batch));
    }
  }
  posted_taken_.clear();
  return true;
}

bool Engine::receive_control() {
  bool any = false;
  int source = -1;
  while (transport_.receive_control(source, control_in_)) {
    stats_.control_messages_received += 1;
    apply_batch(control_in_.data(), control_in_.size(), source);
    any = true;
  }
  return any;
}

bool Engine::collect_finished() {
  if (!workers_) return false;
  workers_->take_finished(finished_);
  if (finished_.empty()) return false;
  for (Task* task : finished_) body_finished(task);
  finished_.clear();
  dispatch_ready();
  return true;
}

bool Engine::poll_transfers() {
  if (!transport_.poll(transfers_done_)) return false;
  for (uint64_t cookie : transfers_done_) transfer_done(cookie);
  transfers_done_.clear();
  dispatch_ready();
  return true;
}

bool Engine::run_one_task_here() {
  Task* task = nullptr;
  if (workers_) {
    task = workers_->try_pop();
  } else if (local_ready_head_ < local_ready_.size()) {
    task = local_ready_[local_ready_head_++];
    if (local_ready_head_ == local_ready_.size()) {
      local_ready_.clear();
      local_ready_head_ = 0;
    }
  }
  if (!task) return false;
  execute(task);
  body_finished(task);
  dispatch_ready();
  return true;
}

void Engine::flush_completions(bool force) {
  if (!completed_local_.empty()) {
    if (listener_) listener_->on_completed(completed_local_.data(), completed_local_.size());
    completed_local_.clear();
  }
  if (completed_batch_.empty()) return;
  const bool due = force || completed_batch_.size() >= kCompletionBatchBytes ||
                   trace::now_ns() - completed_batch_since_ns_ >= kCompletionDelayNs;
  if (!due) return;
  stats_.control_messages_sent += 1;
  stats_.control_bytes_sent += completed_batch_.size();
  transport_.send_control(head_rank_, std::move(completed_batch_.bytes()));
  completed_batch_.bytes() = {};
}

bool Engine::quiescent() {
  {
    // Batches posted but not yet sent keep the engine running.
    std::lock_guard lock(posted_mutex_);
    if (!posted_.empty()) return false;
  }
  return running_ == 0 && local_ready_.empty() && waiting_requests_.empty() &&
         broadcasts_.empty() && mpi_queues_waiting() == 0 && mpi_active_.empty() &&
         transport_.pending() == 0 && completed_batch_.empty() && completed_local_.empty();
}

void Engine::run() {
  trace::name_thread("engine");
  for (;;) {
    bool active = drain_posted();
    active |= receive_control();
    active |= collect_finished();
    active |= poll_transfers();
    if (!waiting_requests_.empty()) active |= poll_task_requests();
    if (!mpi_active_.empty() || mpi_queues_waiting() > 0) active |= poll_mpi_broadcasts();
    active |= run_one_task_here();
    flush_completions(shutdown_requested_);
    if (listener_) listener_->on_poll();
    if (shutdown_requested_ && quiescent()) break;
    if (active) {
      backoff_.reset();
    } else {
      // Measured with Open MPI in shared memory (8 ranks on 16 cores, 256
      // MiB): one rank sending to seven in turn took 11.8 s sleeping between
      // polls and 1.5 s yielding.
      const bool copying =
          transport_.copying_bulk_data() ||
          std::any_of(mpi_active_.begin(), mpi_active_.end(),
                      [](const std::unique_ptr<MpiBroadcast>& b) { return b->copies_locally; });
      backoff_.idle(wakeup_, copying);
    }
  }
  if (workers_) workers_->stop();
}

}  // namespace taskgrid::runtime
