#include "plan/planner.h"

#include <cstring>

#include "core/function_registry.h"
#include "data/buffer_pool.h"
#include "trace/task_graph.h"
#include "trace/trace.h"

namespace taskgrid::plan {
namespace {

// A rank's batch is flushed by the engine loop once it is this old, so a
// program that submits a little and then computes still gets its tasks run.
// Cluster mode delivers gathered broadcast readers after as long.
constexpr uint64_t kBatchMaxAgeNs = 100'000;

plan::AnalysisConfig analysis_config(const PlannerConfig& config) {
  return {.spmd = config.mode == PlannerMode::spmd,
          .rank = config.rank,
          .ranks = config.ranks,
          .threads_per_rank = config.threads_per_rank,
          .scheduler = config.scheduler,
          .latency_seconds = config.latency_seconds,
          .bandwidth_bytes_per_second = config.bandwidth_bytes_per_second,
          .devices = config.devices,
          .placement_stats = config.placement_stats};
}

plan::BroadcastConfig broadcast_config(const PlannerConfig& config) {
  return {.strategy = config.broadcast,
          .min_bytes = config.broadcast_min_bytes,
          .chunk = config.broadcast_chunk,
          .max_message = config.max_message,
          .latency_seconds = config.latency_seconds,
          .bandwidth_bytes_per_second = config.bandwidth_bytes_per_second,
          .rank = config.rank,
          .ranks = config.ranks,
          .spmd = config.mode == PlannerMode::spmd,
          .node_of_rank = config.node_of_rank};
}

}  // namespace

Planner::Planner(core::CommandSink& sink, const PlannerConfig& config)
    : sink_(sink),
      config_(config),
      mutex_(sink.blocking()),
      changed_(sink.blocking()),
      tags_(config.max_tag),
      // Commands for a rank are built only where they will run: every rank's
      // in cluster mode (on the head), only this rank's in spmd mode, so a
      // submission there costs the same whatever the job's size.
      batches_(sink, config.ranks, config.mode == PlannerMode::spmd ? config.rank : -1,
               config.batch_bytes),
      analysis_(analysis_config(config)),
      local_builder_(sink.local_task_builder()),
      broadcasts_(broadcast_config(config), batches_, tags_),
      window_open_(sink.blocking()) {
  // A rank that reaches a divergence check point first runs the engine's
  // loop until the others have (instead of polling MPI on a core the
  // engine needs): the thread model of block().
  if (config_.divergence)
    config_.divergence->set_waiter([this](const std::function<bool()>& done) {
      if (!sink_.drive_until(done)) sink_.wait_while_driven(done);
    });
}

Planner::~Planner() {
  if (config_.divergence) config_.divergence->set_waiter(nullptr);
}

const char* Planner::scheduler_name() const { return analysis_.scheduler_name(); }

std::string Planner::placement_report() {
  std::lock_guard lock(mutex_);
  return analysis_.placement_report();
}

void Planner::flush_for_tests() {
  std::lock_guard lock(mutex_);
  batches_.flush_all();
}

uint64_t Planner::in_flight_for_tests() {
  std::lock_guard lock(mutex_);
  return in_flight_.in_flight();
}

size_t Planner::in_flight_moved_aside_for_tests() {
  std::lock_guard lock(mutex_);
  return in_flight_.long_lived();
}

int Planner::owner(DataHandle handle) {
  std::lock_guard lock(mutex_);
  return analysis_.tracker().state(handle).owner;
}

int Planner::holder(DataHandle handle) {
  std::lock_guard lock(mutex_);
  return analysis_.tracker().state(handle).where.source();
}

DataHandle Planner::enter_data(void* host, size_t bytes, int owner, bool fill) {
  if (fill && !host && bytes > 0)
    throw Error("taskgrid::enter_data: null pointer with a non-zero size");
  if (owner >= config_.ranks)
    throw Error("taskgrid::enter_data: owner rank " + std::to_string(owner) +
                " is outside the job (" + std::to_string(config_.ranks) + " ranks)");
  std::lock_guard lock(mutex_);
  if (stopped_) throw Error("taskgrid::enter_data after finish()");
  // map(to:) copies now: the program may reuse its buffer afterwards. The
  // copy is made before the handle exists, so a size that cannot be
  // allocated leaves nothing half-registered.
  const int home = analysis_.next_home(owner);
  char* buffer = nullptr;
  if (batches_.emits_for(home)) {
    try {
      buffer = data::allocate_buffer(bytes);
    } catch (const std::bad_alloc&) {
      throw Error("taskgrid::enter_data: cannot allocate " + std::to_string(bytes) +
                  " bytes on rank " + std::to_string(config_.rank) + " (out of memory)");
    }
    if (fill && bytes) std::memcpy(buffer, host, bytes);
  }
  const plan::Analysis::Entered entered = analysis_.enter(host, bytes, owner);
  if (buffer)
    batches_.to(entered.home)
        .add(comm::wire::Kind::create, comm::wire::Create{entered.version, bytes, buffer});
  if (config_.divergence) config_.divergence->record_data(bytes, entered.owner);
  return entered.handle;
}

void Planner::submit(FunctionId function, const DataAccess* accesses, size_t count,
                     const TaskOptions& options, const void* args, size_t args_bytes,
                     size_t signature_bytes) {
  if (options.rank >= config_.ranks || options.rank < -1)
    throw Error("taskgrid::submit: rank hint " + std::to_string(options.rank) +
                " is outside the job (" + std::to_string(config_.ranks) + " ranks)");
  if (options.channel < -1 || options.channel >= config_.channels)
    throw Error("taskgrid::submit: channel " + std::to_string(options.channel) +
                " does not exist (TASKGRID_CHANNELS=" + std::to_string(config_.channels) + ")");
  if (options.device < TaskOptions::on_cpu)
    throw Error("taskgrid::submit: device hint " + std::to_string(options.device) +
                " is not a device (-1: any, -2: on a CPU)");
  // By-value arguments travel in every descriptor: large data belongs in handles.
  if (args_bytes - signature_bytes > max_task_args_bytes)
    throw Error("taskgrid::submit: " + std::to_string(args_bytes - signature_bytes) +
                " bytes of by-value arguments; the limit is taskgrid::max_task_args_bytes (" +
                std::to_string(max_task_args_bytes) + "; register large data with enter_data)");
  std::unique_lock lock(mutex_);
  if (stopped_) throw Error("taskgrid::submit after finish()");
  // Registered functions are never removed: the last one found stays valid.
  if (!last_function_ || function.value != last_function_id_) {
    last_function_ = detail::find_function(function);
    if (!last_function_)
      throw Error("taskgrid::submit: function id " + std::to_string(function.value) +
                  " is not registered");
    last_function_id_ = function.value;
  }
  const bool has_cpu = last_function_->function != nullptr;
  const bool has_device = last_function_->device_function != nullptr;
  if (options.device >= 0 && !has_device)
    throw Error(std::string("taskgrid::submit: device hint ") + std::to_string(options.device) +
                " for '" + last_function_->name +
                "', which has no device implementation (register_device_function)");
  if (options.device == TaskOptions::on_cpu && !has_cpu)
    throw Error(std::string("taskgrid::submit: device hint on_cpu for '") + last_function_->name +
                "', which has no CPU implementation");
  if (window_full()) wait_for_window(lock);
  const std::vector<graph::ResolvedAccess>& resolved = analysis_.resolve(accesses, count);
  if (config_.divergence)
    config_.divergence->record_task(function.value, accesses, count, options.rank, args,
                                    args_bytes);
  const uint64_t task_id = next_task_id_++;
  const int rank = analysis_.place(function.value, options, task_id, has_cpu, has_device);
  const int device = analysis_.placed_device();
  const bool local = batches_.emits_for(rank);

  // This rank's task command goes into its batch first; its accesses are
  // written as the inputs are routed (sends and broadcast joins go to other
  // ranks' batches, never to this one: the task's rank does not hold them).
  plan::CommandBuffer* batch = local ? &batches_.to(rank) : nullptr;
  size_t accesses_at = 0;
  // A task of this planner's own rank, where the sink builds those in place:
  // its accesses go straight into the engine's record.
  core::LocalTaskBuilder::Slot in_place{nullptr, nullptr};
  if (local) {
    // The in-flight table is keyed by a count of this planner's own tasks: in
    // spmd mode they are one in `ranks` of the task ids, and a table by task
    // id would be that sparse (see comm::wire::Task::completion_key).
    const uint64_t key = in_flight_.submitted() + 1;
    in_flight_.add(key, function.value, rank, options.channel >= 0, resolved.data(), count,
                   has_device && runs_on_device(device, rank));
    analysis_.count_in_flight();
    comm::wire::Task task{task_id,
                          function.value,
                          static_cast<uint32_t>(count),
                          static_cast<uint32_t>(args_bytes),
                          options.channel,
                          0,
                          options.priority,
                          key,
                          device,
                          static_cast<uint32_t>(signature_bytes)};
    if (local_builder_ && rank == config_.rank) {
      in_place = local_builder_->open(task, args, options.name);
    } else {
      task.name_bytes = static_cast<uint32_t>(options.name ? std::strlen(options.name) : 0);
      accesses_at = batch->add_task_without_accesses(task, args, options.name);
    }
  }
  for (size_t i = 0; i < count; ++i) {
    const graph::ResolvedAccess& r = resolved[i];
    int32_t source = -1;
    int32_t tag = 0;
    data::VersionInfo* info = analysis_.input(i);
    if (info && !info->holds(rank)) route_input(r, *info, rank, source, tag);
    if (!local) continue;
    const comm::wire::Access access{r.in_version,
                                    r.out_version,
                                    r.bytes,
                                    source,
                                    tag,
                                    static_cast<uint8_t>(r.mode),
                                    retires_own_input(r) ? comm::wire::kRetiresInput : uint8_t{0},
                                    {}};
    if (in_place.record) {
      in_place.accesses[i] = access;
    } else {
      batch->set_access(accesses_at, i, access);
    }
  }
  // In order with the commands routing its inputs went to other ranks' batches.
  if (in_place.record)
    batch->add(comm::wire::Kind::local_task, comm::wire::LocalTask{in_place.record});
  if (trace::graph_enabled())
    trace::record_task(task_id, options.name, function.value, rank, resolved.data(), count);
  // New versions exist from now on; the versions they replace get no new
  // readers, so every holder may drop them once its current uses are done.
  // The task's own rank holds each version it reads (routed there above):
  // where the task also writes that version's successor, its access says
  // so (kRetiresInput) instead of a retire command to that rank.
  const int folded = local ? rank : -1;
  analysis_.add_outputs(
      rank, [this, folded](const graph::ResolvedAccess& r, const data::VersionInfo& where) {
        retire(r.superseded, where, retires_own_input(r) ? folded : -1);
      });
  submissions_ += 1;
  if (!broadcasts_.empty()) broadcasts_.deliver_due(submissions_);
  batches_.end_of_submission();
  if (broadcasts_.has_communicators_to_create()) create_broadcast_comms(lock);
  if (config_.divergence && config_.divergence->due()) {
    lock.unlock();
    config_.divergence->check();
  }
  if (submissions_ % kHelpEvery == 0) {
    // The thread model: this thread runs a pass of the engine now and then,
    // with this rank's new commands in it (see CommandSink::help).
    if (!lock.owns_lock()) lock.lock();
    batches_.flush(config_.rank);
    lock.unlock();
    sink_.help();
  }
}

void Planner::route_input(const graph::ResolvedAccess& r, data::VersionInfo& info, int rank,
                          int32_t& source, int32_t& tag) {
  if (broadcasts_.detects(r.bytes)) {
    // Gather the reader ranks of this version: delivered together, as a
    // broadcast when tasks on two or more ranks read it.
    source = comm::wire::kSourceBroadcast;
    tag = broadcasts_.join(r.in_version, info, rank, submissions_);
  } else {
    // Order the transfer from a holder, preferably the producer; the
    // consumer's rank holds a replica from now on, so later readers there
    // take it from its store (one transfer per rank and version).
    source = info.source();
    tag = tags_.next();
    if (batches_.emits_for(source))
      batches_.to(source).add(comm::wire::Kind::send, comm::wire::Send{r.in_version, rank, tag});
  }
  info.holders.push_back(rank);
}

void Planner::retire(uint64_t version, const data::VersionInfo& where, int folded) {
  // Readers gathered for a broadcast get it before the holders may drop it.
  if (!broadcasts_.empty()) broadcasts_.deliver_through(version);
  for (int holder : where.holders)
    if (holder != folded && batches_.emits_for(holder))
      batches_.to(holder).add(comm::wire::Kind::retire, comm::wire::Retire{version});
}

void Planner::create_broadcast_comms(std::unique_lock<comm::FutexLock>& lock) {
  const auto todo = broadcasts_.take_communicators_to_create();
  // Blocking and collective among the members: never while holding the
  // planner lock, which the engine thread needs to report completions.
  lock.unlock();
  for (const auto& [members, tag] : todo) sink_.prepare_broadcast_group(members, tag);
  lock.lock();
}

void Planner::wait_until(std::unique_lock<comm::FutexLock>& lock,
                         const std::function<bool()>& done) {
  broadcasts_.deliver_all();
  batches_.flush_all();
  if (broadcasts_.has_communicators_to_create()) create_broadcast_comms(lock);
  if (config_.divergence) {
    // Collective: every rank reaches it at the same point of its sequence.
    lock.unlock();
    config_.divergence->check();
    lock.lock();
  }
  waiters_ += 1;
  block(lock, changed_, done);
  waiters_ -= 1;
}

void Planner::block(std::unique_lock<comm::FutexLock>& lock, comm::Condition& condition,
                    const std::function<bool()>& done) {
  if (done()) return;
  // The thread model: where the sink can be driven, this thread runs the
  // engine's loop itself while it waits (the engine thread sleeps), so one
  // thread per rank does the work instead of two taking turns on a core.
  lock.unlock();
  const bool driven = sink_.drive_until([&] {
    std::lock_guard relock(mutex_);
    return done();
  });
  lock.lock();
  if (!driven) condition.wait(lock, done);
}

bool Planner::window_full() const {
  // Never while readers are gathered for a broadcast (in spmd every rank
  // delivers them at the same point of its sequence, which a rank waiting
  // here would not reach) or while channel tasks are in flight (their peers
  // may be tasks this rank has not submitted yet).
  const bool full = (config_.window > 0 && in_flight_.in_flight() >= config_.window) ||
                    (config_.window_bytes > 0 && in_flight_.output_bytes() >= config_.window_bytes);
  return full && broadcasts_.empty() && in_flight_.communicating() == 0;
}

bool Planner::window_half_empty() const {
  return (config_.window == 0 || in_flight_.in_flight() <= config_.window / 2) &&
         (config_.window_bytes == 0 || in_flight_.output_bytes() <= config_.window_bytes / 2);
}

void Planner::wait_for_window(std::unique_lock<comm::FutexLock>& lock) {
  batches_.flush_all();  // the engines must have the tasks to finish them
  window_waiting_ = true;
  block(lock, window_open_, [this] { return window_half_empty(); });
  window_waiting_ = false;
}

void Planner::wait_all() {
  std::unique_lock lock(mutex_);
  wait_until(lock, [this] { return in_flight_.in_flight() == 0; });
}

void Planner::wait(DataHandle handle) {
  std::unique_lock lock(mutex_);
  graph::DependencyTracker& tracker = analysis_.tracker();
  tracker.state(handle);  // throws for unknown handles
  wait_until(lock, [&] { return tracker.state(handle).tasks_in_flight == 0; });
}

void Planner::fetch(DataHandle handle, int to) {
  if (to != kHome && to != kAllRanks && (to < 0 || to >= config_.ranks))
    throw Error("taskgrid::fetch: rank " + std::to_string(to) +
                " is not a rank of this job (0 to " + std::to_string(config_.ranks - 1) +
                ", or taskgrid::all_ranks)");
  if (!spmd() && to != kHome && to != 0)
    throw Error("taskgrid::fetch: to rank " + std::to_string(to) +
                " in cluster mode, where only rank 0 runs the program and has its buffers; "
                "fetch to a chosen rank is for spmd mode");
  std::unique_lock lock(mutex_);
  graph::DependencyTracker& tracker = analysis_.tracker();
  graph::HandleState& state = tracker.state(handle);
  const uint64_t version = state.current_version;
  const data::VersionInfo& info = plan::Analysis::entry_of(version, state);
  // In the sequence every spmd rank must submit alike: a rank that fetches
  // elsewhere would wait for a transfer nobody orders.
  if (config_.divergence) config_.divergence->record_fetch(handle.id, to);
  const int first = to == kAllRanks ? 0 : to == kHome ? (spmd() ? state.owner : 0) : to;
  const int last = to == kAllRanks ? config_.ranks - 1 : first;
  bool receives = false;
  for (int home = first; home <= last; ++home) {
    comm::wire::Fetch fetch{version, -1, 0, state.host, state.bytes};
    // No host buffer (a 0-byte handle entered with nullptr): nothing to bring
    // home, so no transfer may be ordered either (nobody would receive it).
    if (!info.holds(home) && state.host) {
      fetch.source = info.source();
      fetch.tag = tags_.next();
      if (batches_.emits_for(fetch.source))
        batches_.to(fetch.source)
            .add(comm::wire::Kind::send, comm::wire::Send{version, home, fetch.tag});
    }
    // spmd: each rank emits only its own receive; cluster: only rank 0's.
    if (batches_.emits_for(home) && state.host) {
      batches_.to(home).add(comm::wire::Kind::fetch, fetch);
      fetches_pending_.insert(version);
      receives = true;
    }
  }
  // By id, not by reference: the handle table may move while this waits.
  wait_until(lock, [&] {
    const graph::HandleState* now = tracker.any_state(handle.id);
    return (!now || now->tasks_in_flight == 0) &&
           (!receives || fetches_pending_.count(version) == 0);
  });
}

void Planner::release(DataHandle handle) {
  std::unique_lock lock(mutex_);
  graph::DependencyTracker& tracker = analysis_.tracker();
  graph::HandleState& state = tracker.state(handle);  // throws for unknown handles
  // Retired while its entry is still there: releasing may forget the state.
  retire(state.current_version, plan::Analysis::entry_of(state.current_version, state), -1);
  tracker.release(handle);
  if (broadcasts_.has_communicators_to_create()) create_broadcast_comms(lock);
}

void Planner::shutdown() {
  std::unique_lock lock(mutex_);
  wait_until(lock, [this] { return in_flight_.in_flight() == 0; });
  stopped_ = true;
  for (int r = 0; r < config_.ranks; ++r)
    if (batches_.emits_for(r)) batches_.to(r).add(comm::wire::Kind::shutdown, char{0});
  // This rank's own batch last: once its engine applies the shutdown it may
  // stop, and every other rank's batch must have been handed to it by then.
  batches_.flush_all_but_then(config_.rank);
}

void Planner::on_completed(const comm::wire::Completed* records, size_t count) {
  bool wake = false;
  bool window_opens = false;
  {
    std::lock_guard lock(mutex_);
    graph::DependencyTracker& tracker = analysis_.tracker();
    for (size_t i = 0; i < count; ++i) {
      plan::InFlightTasks::Done done;
      if (!in_flight_.complete(records[i].completion_key, done, [&](graph::HandleState* handle) {
            if (tracker.task_done(handle)) wake = true;
          }))
        continue;
      analysis_.task_completed(done.function, static_cast<double>(records[i].duration_ns) * 1e-9,
                               done.rank, done.on_device);
    }
    // Wake a waiting program only when what it waits for may have happened
    // (all tasks done, or some handle's tasks done): waking it per completion
    // costs two context switches per task.
    wake = waiters_ > 0 && (wake || in_flight_.in_flight() == 0);
    // A full window reopens at half: one wake-up per window/2 tasks, not per task.
    window_opens = window_waiting_ && window_half_empty();
  }
  if (wake) changed_.notify_all();
  if (window_opens) window_open_.notify_one();
}

void Planner::on_fetched(uint64_t version) {
  {
    std::lock_guard lock(mutex_);
    fetches_pending_.erase(version);
  }
  changed_.notify_all();
}

void Planner::on_poll() {
  // Never block the engine behind a submitting thread: try, else next time.
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  // Most passes have nothing aged to deliver: a clock read is a fifth of an
  // idle pass (measured with perf on the hop benchmark).
  if (!batches_.any_open() && (spmd() || broadcasts_.empty())) return;
  const uint64_t now_ns = trace::now_ns();
  // Cluster mode: the head may also deliver gathered readers once they have
  // waited as long as a batch may (never in spmd mode, where every rank must
  // deliver at the same point of the program).
  if (!spmd()) broadcasts_.deliver_if_older_than(now_ns, kBatchMaxAgeNs);
  batches_.flush_older_than(now_ns, kBatchMaxAgeNs);
}

}  // namespace taskgrid::plan
