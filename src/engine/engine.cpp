#include "engine/engine.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "core/failure.h"
#include "core/task_context_access.h"
#include "engine/transfer_cookie.h"
#include "exec/checked_buffers.h"
#include "exec/running_task.h"
#include "exec/task_channels.h"
#include "exec/task_epilogue.h"
#include "trace/trace.h"

namespace taskgrid::engine {
namespace {

// A pass of the loop runs ready tasks until this many ran or this much time
// went by, then polls the network again: polling after every task cost about
// 1,300 instructions per task (two MPI probes, a test, a lock), while a long
// stretch without polling would delay the data other ranks wait for.
// The pass's length is looked at after the 2nd, 4th, 8th and 16th task
// (reading the clock after each cost ~30 instructions per task), timed from
// the start of the second: a pass of one task, the usual case on a chain
// between ranks, reads no clock, and a pass stops within twice kPassNs of
// the end of its first task. Where tasks are timed anyway (placement,
// tracing), their durations add up to the pass's length, the first's
// included, and the loop reads no clock of its own.
constexpr int kTasksPerPass = 32;
constexpr uint64_t kPassNs = 20'000;

// Set while this thread holds an engine's drive lock: a task body run by a
// driving program thread that calls into the runtime again must not try to
// take the lock it holds.
thread_local bool driving_here = false;

struct DrivingHere {
  DrivingHere() { driving_here = true; }
  ~DrivingHere() { driving_here = false; }
};

// How long this worker's last task ran (set and read on the worker's thread).
thread_local uint64_t worker_task_ns = 0;

}  // namespace

Engine::Engine(comm::Transport& transport, int threads, int head_rank,
               std::unique_ptr<exec::TaskChannels> channels)
    : transport_(transport),
      trees_(transport, versions_, *this, stats_),
      groups_(transport, versions_, *this, stats_),
      channels_(std::move(channels)),
      completions_(transport, head_rank, stats_),
      in_place_(transport.blocking()),
      posted_mutex_(transport.blocking()),
      drive_mutex_(transport.blocking()),
      wakeup_(transport.blocking(), transport.doorbell()) {
  if (transport.oversubscribed()) completions_.set_delay_ns(CompletionBatcher::kSharedNodeDelayNs);
  if (threads > 1) {
    workers_ = std::make_unique<exec::WorkerPool<Task>>(
        threads - 1,
        [this](Task* task) {
          const uint64_t start = transport_.now_ns();
          execute(task);
          worker_task_ns = transport_.now_ns() - start;
          note_task_length(worker_task_ns);
        },
        [this] { worker_finished(); },
        [this](std::function<void()> body) { return transport_.start_thread(std::move(body)); },
        transport_.blocking(), threads <= transport.cores_per_rank() ? kWorkerSpinNs : 0);
  }
}

Engine::Engine(comm::Transport& transport, int threads, int head_rank)
    : Engine(transport, threads, head_rank, nullptr) {}

Engine::~Engine() {
  if (workers_) workers_->stop();
}

void Engine::fail(const std::string& message) { core::fail_job(rank(), message); }

void Engine::set_devices(std::unique_ptr<device::Backend> backend, int max_streams,
                         bool direct_sends) {
  devices_ = std::make_unique<DeviceTasks>(std::move(backend), max_streams, direct_sends,
                                           transport_, versions_, stats_,
                                           [this](const std::string& message) { fail(message); });
}

std::vector<char> Engine::post(int dest, std::vector<char>&& batch) {
  std::vector<char> spare;
  {
    std::lock_guard lock(posted_mutex_);
    posted_.emplace_back(dest, std::move(batch));
    has_posted_.store(true, std::memory_order_release);
    if (!spare_batches_.empty()) {
      spare = std::move(spare_batches_.back());
      spare_batches_.pop_back();
    }
  }
  wakeup_.notify();
  return spare;
}

// ------------------------------------------------------------- versions ---

Version* Engine::find_or_fail(uint64_t id, const char* why) {
  Version* version = versions_.find(id);
  if (!version)
    protocol_error(std::string(why) + " of version " + std::to_string(id) +
                   ", which this rank does not hold");
  return version;
}

Version* Engine::create_or_fail(uint64_t id, size_t bytes) {
  Version* version = versions_.create(id, bytes);
  if (!version) protocol_error("version " + std::to_string(id) + " created twice");
  return version;
}

void Engine::version_ready(Version* version) {
  version->ready = true;
  // Waiters may add waiters to other versions, never to this one (it is
  // present now), so the list is stable while it is walked.
  for (const VersionWaiter& waiter : version->waiters) {
    switch (waiter.kind) {
      case VersionWaiter::Kind::task: {
        auto* task = static_cast<Task*>(waiter.object);
        if (--task->waiting == 0) newly_ready_.push_back(task);
        break;
      }
      case VersionWaiter::Kind::send:
        send_version(version, waiter.dest, waiter.tag);
        break;
      case VersionWaiter::Kind::fetch:
        copy_to_host(version, drop_fetch(static_cast<comm::wire::Fetch*>(waiter.object)));
        break;
      case VersionWaiter::Kind::tree_broadcast:
        trees_.version_present(waiter.object);
        break;
      case VersionWaiter::Kind::group_broadcast:
        groups_.post();
        break;
    }
  }
  version->waiters.clear();
}

void Engine::version_on_device(Version* version) {
  version->on_device = true;
  size_t kept = 0;
  for (const VersionWaiter& waiter : version->waiters) {
    if (waiter.kind == VersionWaiter::Kind::task &&
        DeviceTasks::takes(*static_cast<Task*>(waiter.object))) {
      auto* task = static_cast<Task*>(waiter.object);
      if (--task->waiting == 0) newly_ready_.push_back(task);
    } else if (waiter.kind == VersionWaiter::Kind::send) {
      send_from_device(version, waiter.dest, waiter.tag);
    } else {
      version->waiters[kept++] = waiter;
    }
  }
  version->waiters.resize(kept);
  if (kept > 0) devices_->write_back(version);
}

void Engine::wait_on_host(Version* version, const VersionWaiter& waiter) {
  version->waiters.push_back(waiter);
  if (version->on_device) devices_->write_back(version);  // nothing if ready or under way
}

comm::wire::Fetch* Engine::keep_fetch(const comm::wire::Fetch& fetch) {
  fetches_.push_back(std::make_unique<comm::wire::Fetch>(fetch));
  return fetches_.back().get();
}

comm::wire::Fetch Engine::drop_fetch(const comm::wire::Fetch* fetch) {
  auto it =
      std::find_if(fetches_.begin(), fetches_.end(),
                   [&](const std::unique_ptr<comm::wire::Fetch>& f) { return f.get() == fetch; });
  const comm::wire::Fetch copy = **it;
  fetches_.erase(it);
  return copy;
}

void Engine::send_version(Version* version, int dest, int tag) {
  transport_.send_data(dest, tag, version->data, version->bytes, make_cookie(version, kSend));
  count_send(version, dest);
}

void Engine::send_from_device(Version* version, int dest, int tag) {
  devices_->send(version, dest, tag);
  count_send(version, dest);
}

void Engine::count_send(const Version* version, int dest) {
  stats_.data_messages_sent += 1;
  stats_.data_bytes_sent += version->bytes;
  if (trace::enabled()) {
    const uint64_t now = trace::now_ns();
    trace::span("comm", "send", now, now, version->id, dest, version->bytes);
  }
}

void Engine::copy_to_host(Version* version, const comm::wire::Fetch& fetch) {
  if (fetch.bytes) std::memcpy(fetch.host, version->data, fetch.bytes);
  if (listener_) listener_->on_fetched(version->id);
  release_use(version);
}

// ---------------------------------------------------------------- tasks ---

void Engine::make_ready(Task* task) {
  // Output buffers are taken only now, so a long queue of planned tasks does
  // not hold memory. An inout task takes over its input's buffer when it is
  // the last user of a retired version; otherwise it works on a copy.
  // A device task fills its outputs on the device (DeviceTasks::launch copies
  // an inout's input there): their host buffers are only where they are
  // written back to, and need no copy now. An input only on a device keeps
  // its host buffer, which its write-back needs.
  const bool on_device = devices_ && DeviceTasks::takes(*task);
  const size_t count = task->linked.size();
  task->buffers.resize(count);
  for (size_t i = 0; i < count; ++i) {
    Version* input = task->linked[i].input;
    Version* output = task->linked[i].output;
    if (output) {
      if (input && input->uses == 1 && input->retired && input->ready) {
        output->data = input->data;
        input->data = nullptr;
        stats_.inout_buffers_reused += 1;
      } else {
        versions_.give_buffer(output);
        if (input && output->bytes && !on_device)
          std::memcpy(output->data, input->data, output->bytes);
      }
      task->buffers[i] = {output->data, output->bytes};
    } else {
      task->buffers[i] = {input->data, input->bytes};
    }
  }
  tasks_.started();
  if (on_device) {
    devices_->start(task);
    return;
  }
  if (!devices_ && (task->device >= 0 || !task->function->function)) [[unlikely]]
    refuse_without_device(*task);
  // With workers, one short task at a time stays with this thread, which
  // runs it in its next pass (run_ready_tasks): a chain of short tasks, the
  // cross-rank critical path among them, then never changes threads. The
  // others go to the workers, so a wide step still runs in parallel.
  if (!workers_ || (keep_short_tasks_ && task->priority == 0 && !tasks_.has_ready() &&
                    tasks_short_.load(std::memory_order_relaxed))) {
    tasks_.push_ready(task);
  } else {
    workers_->push(task);
  }
}

void Engine::note_task_length(uint64_t ns) {
  const bool short_task = ns < kKeepShortTaskNs;
  if (tasks_short_.load(std::memory_order_relaxed) != short_task)
    tasks_short_.store(short_task, std::memory_order_relaxed);
}

void Engine::refuse_without_device(const Task& task) {
  // Without devices: a task that needs one ends the job here, where it is routed.
  fail(describe(task) +
       (task.device >= 0 ? " asks for device " + std::to_string(task.device) + ", and"
                         : " has only a device implementation, and") +
       " this rank has no device (TASKGRID_DEVICE)");
}

void Engine::dispatch_ready() {
  // make_ready may not append to newly_ready_, so a plain loop is safe.
  for (Task* task : newly_ready_) make_ready(task);
  newly_ready_.clear();
}

void* Engine::binding(const Task* task) {
  return task->channel_task ? channels_->binding(task->channel_task)
                            : exec::binding_without_channel();
}

// Inline in execute(): a call per task otherwise (execute_checked calls it too).
[[gnu::always_inline]] inline void Engine::run_body(Task* task, TaskContext& context,
                                                    uint64_t start) {
  // Crash messages, the task deadline and the API's refusals see it.
  const exec::RunningTaskMark running(task->id, task->name, start);
  try {
    task->function->function(context);
    exec::run_task_epilogue();
  } catch (const std::exception& error) {
    core::fail_job(rank(), describe(*task) + " failed: " + error.what());
  } catch (...) {
    core::fail_job(rank(), describe(*task) + " failed with an unknown exception");
  }
}

bool Engine::tasks_timed() const { return timing_ || trace::enabled(); }

void Engine::execute(Task* task) {
  const bool timed = tasks_timed();
  const uint64_t start = timed ? trace::now_ns() : 0;
  if (checked_) [[unlikely]] {
    execute_checked(task, start);
  } else {
    TaskContext context = detail::TaskContextAccess::make(
        task->buffers.data(), task->buffers.size(), task->args.data(), task->args.size(), rank(),
        task->id, binding(task));
    run_body(task, context, start);
  }
  if (!timed) {
    task->duration_ns = 0;
    return;
  }
  const uint64_t end = trace::now_ns();
  task->duration_ns = end - start;
  if (trace::enabled()) trace::span("task", task->name, start, end, task->id);
}

// Out of line: checked mode's copies stay out of execute()'s path.
[[gnu::noinline]] void Engine::execute_checked(Task* task, uint64_t start) {
  // Per thread: workers run tasks at once, each on its own copies.
  thread_local exec::CheckedBuffers copies;
  const size_t count = task->buffers.size();
  TaskContext context = make_context(*task, copies.copy_in(task->buffers.data(), count), count,
                                     rank(), binding(task));
  run_body(task, context, start);
  const std::string fault =
      copies.check_and_copy_back(task->buffers.data(), task->accesses.data(), count);
  if (!fault.empty())
    fail("checked mode: task '" + std::string(task->name) + "' (id " + std::to_string(task->id) +
         ", rank " + std::to_string(rank()) + ") " + fault);
}

void Engine::body_finished(Task* task) {
  if (!task->channel_task) {
    finish(task);
    return;
  }
  // Task-aware communication: its operations are posted in channel order and
  // it finishes once they complete.
  channels_->body_finished(task->channel_task, channel_done_);
  finish_channel_tasks();
}

void Engine::finish_channel_tasks() {
  for (void* owner : channel_done_) {
    auto* task = static_cast<Task*>(owner);
    task->channel_task = nullptr;
    finish(task);
  }
  channel_done_.clear();
}

void Engine::finish(Task* task) {
  tasks_.finished();
  stats_.tasks_executed += 1;
  stats_.task_ns += task->duration_ns;
  // Where make_ready routed it: a device task's outputs are on its device.
  const bool on_device = devices_ && DeviceTasks::takes(*task);
  for (const Task::Linked& access : task->linked) {
    if (Version* output = access.output) {
      if (on_device) [[unlikely]] {
        version_on_device(output);
      } else {
        version_ready(output);
      }
      release_use(output);
    }
    if (Version* input = access.input) release_use(input);
  }
  completions_.add({task->id, task->duration_ns, task->completion_key});
  if (task->in_place) {
    in_place_.give_back(task);
  } else {
    tasks_.release(task);
  }
}

void Engine::transfer_done(uint64_t cookie) {
  switch (cookie_kind(cookie)) {
    case kReceive: {
      auto* version = cookie_object<Version>(cookie);
      stats_.data_messages_received += 1;
      stats_.data_bytes_received += version->bytes;
      if (trace::enabled()) trace::receive_done(trace::Arrival::receive, version->id);
      version_ready(version);
      break;
    }
    case kSend:
      release_use(cookie_object<Version>(cookie));
      break;
    case kTreeChunk:
      trees_.chunk_done(cookie);
      break;
    case kGroupChunk:
      groups_.chunk_done(cookie);
      break;
    case kDevicePiece:
    case kDeviceSend:
      if (Version* version = devices_->sent(cookie)) release_use(version);
      break;
    case kFetch: {
      const comm::wire::Fetch fetch = drop_fetch(cookie_object<comm::wire::Fetch>(cookie));
      if (trace::enabled()) trace::receive_done(trace::Arrival::fetch, fetch.version);
      if (listener_) listener_->on_fetched(fetch.version);
      break;
    }
    default:
      fail("internal error: a transfer cookie of unknown kind");
  }
}

// ----------------------------------------------------------------- loop ---

bool Engine::drain_posted() {
  if (!has_posted_.load(std::memory_order_acquire)) return false;
  // The planner that posted will build more tasks: the records finished
  // since the last drain are its to reuse.
  in_place_.hand_over();
  {
    std::lock_guard lock(posted_mutex_);
    posted_taken_.swap(posted_);
    has_posted_.store(false, std::memory_order_relaxed);
    for (auto& applied : applied_batches_)
      if (spare_batches_.size() < kSpareBatches) spare_batches_.push_back(std::move(applied));
  }
  applied_batches_.clear();
  for (auto& [dest, batch] : posted_taken_) {
    if (dest == rank()) {
      apply_batch(batch.data(), batch.size(), dest);
      if (applied_batches_.size() < kSpareBatches) {
        batch.clear();
        applied_batches_.push_back(std::move(batch));
      }
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

bool Engine::poll_devices() {
  if (!devices_ || !devices_->poll(finished_on_devices_, written_back_)) return false;
  for (Version* version : written_back_) {
    // Written back twice, the second copy would land in a buffer that CPU
    // tasks may be reading by then.
    if (version->writing_back)
      fail("internal error: version " + std::to_string(version->id) +
           " is written back again as soon as it was");
    version_ready(version);
    release_use(version);  // the write-back's
  }
  written_back_.clear();
  for (Task* task : finished_on_devices_) body_finished(task);
  finished_on_devices_.clear();
  dispatch_ready();
  return true;
}

bool Engine::poll_transfers() {
  bool any = transport_.poll(transfers_done_);
  for (uint64_t cookie : transfers_done_) transfer_done(cookie);
  transfers_done_.clear();
  if (channels_ && !channels_->idle() && channels_->poll(channel_done_)) {
    finish_channel_tasks();
    any = true;
  }
  if (groups_.waiting_for_groups()) groups_.post();
  if (any) dispatch_ready();
  return any;
}

bool Engine::run_ready_tasks() {
  const bool timed = tasks_timed();
  uint64_t started_ns = 0;
  uint64_t tasks_ns = 0;  // the durations of this pass's tasks, where timed
  // While transfers are pending, a task a waiting worker can run is left to
  // it: this thread, inside a task, would take no data in meanwhile.
  const bool awaiting_data = workers_ && transport_.pending() > 0;
  for (int ran = 0; ran < kTasksPerPass; ++ran) {
    // A task kept here (make_ready) first: it is short, and it is this
    // thread's to run.
    Task* task = tasks_.pop_ready();
    const bool kept = workers_ && task;
    if (!task && workers_) task = workers_->try_pop(awaiting_data);
    if (!task) return ran > 0;
    if (ran == 1 && !timed) started_ns = transport_.now_ns();
    if (kept) {
      // Measured, so that tasks grown long go back to the workers.
      const uint64_t start = transport_.now_ns();
      execute(task);
      note_task_length(transport_.now_ns() - start);
    } else if (workers_) {
      execute_released(task);
    } else {
      execute(task);
    }
    tasks_ns += task->duration_ns;
    body_finished(task);
    dispatch_ready();
    // A power of two, tested by hand: std::has_single_bit is a libgcc call
    // (__popcountdi2) per task where the CPU's popcnt is not assumed.
    const int done = ran + 1;
    if ((done & (done - 1)) == 0) {
      const bool long_pass =
          timed ? tasks_ns >= kPassNs : done > 1 && transport_.now_ns() - started_ns >= kPassNs;
      if (long_pass) return true;
    }
  }
  return true;
}

void Engine::execute_released(Task* task) {
  // The caller's guard holds the drive lock: it is taken again before this
  // returns, or unwinds (std::bad_alloc from a checked task's copies).
  struct Released {
    comm::FutexLock& lock;
    std::atomic<int>& drivers_in_tasks;
    Released(comm::FutexLock& l, std::atomic<int>& in_tasks) : lock(l), drivers_in_tasks(in_tasks) {
      drivers_in_tasks.fetch_add(1, std::memory_order_acq_rel);
      lock.unlock();
    }
    ~Released() {
      lock.lock();
      drivers_in_tasks.fetch_sub(1, std::memory_order_acq_rel);
    }
  } released(drive_mutex_, drivers_in_tasks_);
  execute(task);
}

void Engine::worker_finished() {
  wakeup_.notify();
  // Only after a long task, whose cost this pass does not add to, and only
  // while every driver may be inside a task of its own: else one is about to
  // collect this task anyway.
  if (worker_task_ns < kPassNs || drivers_in_tasks_.load(std::memory_order_acquire) == 0) return;
  std::unique_lock drive(drive_mutex_, std::try_to_lock);
  if (!drive.owns_lock()) return;
  DrivingHere mark;
  progress(false);  // back to its own loop for the next task
}

bool Engine::progress(bool run_tasks) {
  keep_short_tasks_ = run_tasks;  // a pass that runs no tasks keeps none (make_ready)
  bool active = drain_posted();
  active |= receive_control();
  active |= collect_finished();
  active |= poll_devices();
  active |= poll_transfers();
  if (run_tasks) active |= run_ready_tasks();
  // Completions wait to fill a batch unless nothing here can add to it
  // before new commands come: then the head, which may be waiting for them
  // (a fetch, a wait), gets them now rather than after the batch's delay.
  completions_.flush(listener_, shutdown_requested_ || (completions_.has_batch() && settled()));
  if (listener_) listener_->on_poll();
  return active;
}

bool Engine::settled() {
  // Batches posted but not yet sent keep the engine running.
  if (has_posted_.load(std::memory_order_acquire)) return false;
  return tasks_.idle() && trees_.idle() && groups_.idle() && (!channels_ || channels_->idle()) &&
         (!devices_ || devices_->idle()) && transport_.pending() == 0;
}

bool Engine::quiescent() { return settled() && completions_.idle(); }

void Engine::help() {
  if (!program_drives_ || driving_here) return;
  program_seen_ns_.store(transport_.now_ns(), std::memory_order_relaxed);
  std::unique_lock drive(drive_mutex_, std::try_to_lock);
  if (!drive.owns_lock()) return;
  DrivingHere mark;
  progress();
}

bool Engine::drive_until(const std::function<bool()>& done) {
  if (!program_drives_ || driving_here) return false;
  helpers_.fetch_add(1);
  comm::IdleBackoff backoff;
  while (!done()) {
    bool active;
    {
      std::lock_guard drive(drive_mutex_);
      DrivingHere mark;
      active = progress();
    }
    if (active) {
      backoff.reset();
    } else if (!done()) {
      transport_.idle(backoff, wakeup_, transport_.copying_bulk_data());
    }
  }
  program_seen_ns_.store(transport_.now_ns(), std::memory_order_relaxed);
  helpers_.fetch_sub(1);
  return true;
}

void Engine::wait_while_driven(const std::function<bool()>& done) {
  // Another thread makes the progress; this one only looks, sleeping 1 µs,
  // then twice as long each time up to 64 µs (a divergence check's
  // all-reduce, every 1,024 submissions, is late by at most that).
  static constexpr uint64_t kFirstPauseNs = 1'000;
  static constexpr uint64_t kLongestPauseNs = 64'000;
  for (uint64_t pause_ns = kFirstPauseNs; !done();
       pause_ns = std::min(pause_ns * 2, kLongestPauseNs))
    transport_.sleep_ns(pause_ns);
}

void Engine::run() {
  trace::name_thread("engine");
  for (;;) {
    const uint64_t program_seen = program_seen_ns_.load(std::memory_order_relaxed);
    const uint64_t since_program =
        program_seen == kProgramNeverSeen ? kProgramGraceNs : transport_.now_ns() - program_seen;
    if (helpers_.load() > 0 || since_program < kProgramGraceNs) {
      // A program thread drives the loop, or did a moment ago and is likely
      // back soon: sleep, and look again in at most a millisecond.
      transport_.sleep_ns(helpers_.load() > 0 ? kProgramGraceNs : kProgramGraceNs - since_program);
      backoff_.reset();
      continue;
    }
    bool active;
    bool stop;
    {
      std::lock_guard drive(drive_mutex_);
      DrivingHere mark;
      active = progress();
      stop = shutdown_requested_ && quiescent();
    }
    if (stop) break;
    if (active) {
      backoff_.reset();
    } else {
      // Measured with Open MPI in shared memory (8 ranks on 16 cores, 256
      // MiB): one rank sending to seven in turn took 11.8 s sleeping between
      // polls and 1.5 s yielding.
      transport_.idle(backoff_, wakeup_, transport_.copying_bulk_data());
    }
  }
  if (workers_) workers_->stop();
}

}  // namespace taskgrid::engine
