// The public API (include/taskgrid/taskgrid.hpp): process-wide runtime state,
// start-up (MPI, options, calibration, engine) and shutdown.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "comm/mpi_transport.h"
#include "runtime/divergence_check.h"
#include "runtime/engine.h"
#include "runtime/options.h"
#include "runtime/planner.h"
#include "trace/trace.h"

namespace taskgrid {

void* TaskContext::data(size_t index) const {
  if (index >= num_data_)
    throw Error("TaskContext::data(" + std::to_string(index) + "): the task has " +
                std::to_string(num_data_) + " data accesses");
  return buffers_[index].data;
}

size_t TaskContext::size(size_t index) const {
  if (index >= num_data_)
    throw Error("TaskContext::size(" + std::to_string(index) + "): the task has " +
                std::to_string(num_data_) + " data accesses");
  return buffers_[index].size;
}

namespace {

struct Runtime {
  runtime::RuntimeOptions options;
  bool initialized_mpi = false;
  std::unique_ptr<comm::MpiTransport> transport;
  std::unique_ptr<runtime::Engine> engine;
  std::vector<MPI_Comm> channels;
  MPI_Comm collectives = MPI_COMM_NULL;  // parent of the MPI broadcasts' communicators
  std::unique_ptr<runtime::DivergenceCheck> divergence;
  std::unique_ptr<runtime::Planner> planner;
  std::thread engine_thread;
};

Runtime* state = nullptr;
bool finished = false;

Runtime& running() {
  if (!state) throw Error("taskgrid: call taskgrid::start() first");
  return *state;
}

runtime::Planner& planner() {
  Runtime& rt = running();
  if (!rt.planner) throw Error("taskgrid: this rank serves the head; only rank 0 submits work");
  return *rt.planner;
}

// A rank that leaves before finish() would leave the others waiting forever.
// It says so and exits non-zero, which makes the launcher end the job. No
// MPI_Abort here: exit() may itself come from an MPI_Abort in progress.
void exit_guard() {
  if (!state || finished) return;
  std::fprintf(stderr,
               "error: taskgrid: rank %d: the process is exiting before taskgrid::finish() "
               "(exit() called, or main returned without finish())\n",
               state->transport ? state->transport->rank() : -1);
  std::fflush(stderr);
  std::_Exit(1);
}

// Latency from small messages, bandwidth from 1 MiB ones (ranks 0 and 1).
void ping_pong(MPI_Comm comm, int rank, runtime::PlannerConfig& config) {
  const int peer = 1 - rank;
  constexpr int kTag = 7;
  constexpr int kSmallRounds = 20, kLargeRounds = 4;
  constexpr size_t kLarge = size_t{1} << 20;
  std::vector<char> buffer(kLarge);
  auto rounds = [&](int count, int bytes) {
    const double start = MPI_Wtime();
    for (int i = 0; i < count; ++i) {
      if (rank == 0) {
        MPI_Send(buffer.data(), bytes, MPI_BYTE, peer, kTag, comm);
        MPI_Recv(buffer.data(), bytes, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buffer.data(), bytes, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), bytes, MPI_BYTE, peer, kTag, comm);
      }
    }
    return (MPI_Wtime() - start) / (2.0 * count);
  };
  rounds(2, 8);  // warm the connection
  const double latency = rounds(kSmallRounds, 8);
  const double large = rounds(kLargeRounds, static_cast<int>(kLarge));
  if (rank == 0) {
    config.latency_seconds = std::max(latency, 1e-7);
    config.bandwidth_bytes_per_second =
        static_cast<double>(kLarge) / std::max(large - latency, 1e-7);
  }
}

// The cost model's network figures, measured by ranks 0 and 1 and given to
// every rank (spmd planners must all choose the same broadcast plans).
void calibrate(MPI_Comm comm, int rank, runtime::PlannerConfig& config) {
  if (rank <= 1) ping_pong(comm, rank, config);
  double measured[2] = {config.latency_seconds, config.bandwidth_bytes_per_second};
  MPI_Bcast(measured, 2, MPI_DOUBLE, 0, comm);
  config.latency_seconds = measured[0];
  config.bandwidth_bytes_per_second = measured[1];
}

void print_stats(MPI_Comm comm, const runtime::EngineStats& stats, int rank, int size) {
  constexpr int kFields = sizeof(runtime::EngineStats) / sizeof(uint64_t);
  std::vector<uint64_t> all(static_cast<size_t>(kFields * size));
  MPI_Gather(&stats, kFields, MPI_UINT64_T, all.data(), kFields, MPI_UINT64_T, 0, comm);
  if (rank != 0) return;
  std::fprintf(
      stderr,
      "taskgrid stats: rank  tasks  task_ms  data_sent(msgs/bytes)  "
      "data_received(msgs/bytes)  control_sent(msgs/bytes)  control_received  reclaimed\n");
  for (int r = 0; r < size; ++r) {
    runtime::EngineStats s;
    std::memcpy(static_cast<void*>(&s), all.data() + r * kFields, sizeof s);
    std::fprintf(
        stderr,
        "taskgrid stats: %4d %6llu %8.3f %8llu/%-12llu %8llu/%-12llu %8llu/%-12llu %8llu %9llu\n",
        r, static_cast<unsigned long long>(s.tasks_executed), static_cast<double>(s.task_ns) * 1e-6,
        static_cast<unsigned long long>(s.data_messages_sent),
        static_cast<unsigned long long>(s.data_bytes_sent),
        static_cast<unsigned long long>(s.data_messages_received),
        static_cast<unsigned long long>(s.data_bytes_received),
        static_cast<unsigned long long>(s.control_messages_sent),
        static_cast<unsigned long long>(s.control_bytes_sent),
        static_cast<unsigned long long>(s.control_messages_received),
        static_cast<unsigned long long>(s.versions_reclaimed));
  }
  for (int r = 0; r < size; ++r) {
    runtime::EngineStats s;
    std::memcpy(static_cast<void*>(&s), all.data() + r * kFields, sizeof s);
    std::fprintf(stderr,
                 "taskgrid bcast stats: rank %d rooted %llu routes_received %llu chunks_sent %llu "
                 "chunks_received %llu mpi_bcasts %llu\n",
                 r, static_cast<unsigned long long>(s.broadcasts_rooted),
                 static_cast<unsigned long long>(s.broadcast_routes_received),
                 static_cast<unsigned long long>(s.broadcast_chunks_sent),
                 static_cast<unsigned long long>(s.broadcast_chunks_received),
                 static_cast<unsigned long long>(s.mpi_broadcasts));
  }
}

// MPI_Finalize with a deadline: a rank whose finalize hangs (seen with
// Debian's MPICH over TCP, after all the job's work is done) still exits,
// with the status the program chose, instead of holding the job forever.
void finalize_within(int seconds, int rank, int exit_status) {
  if (seconds > 0) {
    std::thread([seconds, rank, exit_status] {
      std::this_thread::sleep_for(std::chrono::seconds(seconds));
      std::fprintf(stderr,
                   "warning: taskgrid: rank %d: MPI_Finalize did not return within %d s "
                   "(TASKGRID_FINALIZE_TIMEOUT); exiting with status %d\n",
                   rank, seconds, exit_status);
      std::fflush(stderr);
      std::fflush(stdout);
      std::_Exit(exit_status);
    }).detach();
  }
  MPI_Finalize();
}

// Common end of every rank: statistics, trace, MPI. Returns the job's exit
// status, the largest of the ranks' (every rank exits with it): when
// MPI_Finalize hangs and ranks leave one by one, the launcher may report any
// rank's status, or end the job at the first exit.
int shut_down_rank(int exit_status) {
  Runtime& rt = *state;
  const MPI_Comm comm = rt.transport->communicator();
  MPI_Allreduce(MPI_IN_PLACE, &exit_status, 1, MPI_INT, MPI_MAX, comm);
  if (rt.options.stats)
    print_stats(comm, rt.engine->stats(), rt.transport->rank(), rt.transport->size());
  trace::write_job_trace(comm);
  rt.planner.reset();
  rt.divergence.reset();
  rt.engine.reset();
  for (MPI_Comm& channel : rt.channels) MPI_Comm_free(&channel);
  MPI_Comm_free(&rt.collectives);
  runtime::set_abort_transport(nullptr);
  const int rank = rt.transport->rank();
  rt.transport.reset();
  finished = true;
  // Rank 0 gives up first (the others a second later): the launcher may end
  // the job at the first exit, and rank 0's words are the ones a user reads.
  const int timeout = rt.options.finalize_timeout_seconds;
  if (rt.initialized_mpi)
    finalize_within(timeout > 0 && rank > 0 ? timeout + 1 : timeout, rank, exit_status);
  delete state;
  state = nullptr;
  return exit_status;
}

}  // namespace

void start(int* argc, char*** argv) {
  if (state) throw Error("taskgrid::start: already started");
  if (finished) throw Error("taskgrid::start: the runtime cannot be restarted after finish()");
  auto rt = std::make_unique<Runtime>();
  rt->options = runtime::read_options_from_environment();  // throws before MPI on bad values

  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = 0;
  if (!initialized) {
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    rt->initialized_mpi = true;
  } else {
    MPI_Query_thread(&provided);
  }
  // Only the engine thread talks to MPI, but a failing task aborts from its
  // own thread; the program's MPI calls must not interleave with ours.
  if (provided < MPI_THREAD_SERIALIZED)
    throw Error("taskgrid::start: MPI provides thread level " + std::to_string(provided) +
                "; TaskGrid needs MPI_THREAD_MULTIPLE (initialise MPI with MPI_Init_thread)");

  rt->transport = std::make_unique<comm::MpiTransport>(MPI_COMM_WORLD, rt->options.chunk_bytes);
  comm::MpiTransport& transport = *rt->transport;
  const int rank = transport.rank();
  runtime::set_abort_transport(&transport);
  trace::configure(rank);

  const bool spmd = rt->options.mode == "spmd";
  runtime::PlannerConfig config;
  config.mode = spmd ? runtime::PlannerMode::spmd : runtime::PlannerMode::cluster;
  config.rank = rank;
  config.ranks = transport.size();
  config.max_tag = transport.max_tag();
  config.scheduler = rt->options.scheduler;
  config.threads_per_rank = rt->options.threads > 0
                                ? rt->options.threads
                                : runtime::default_threads(transport.communicator());
  if (config.ranks > 1) calibrate(transport.communicator(), rank, config);
  config.node_of_rank = transport.node_of_rank();

  // spmd: every rank plans for itself and is its own "head" for completions.
  // One communicator per task-aware channel (collective: every rank, here).
  for (int c = 0; c < rt->options.channels; ++c) {
    MPI_Comm channel;
    MPI_Comm_dup(transport.communicator(), &channel);
    // Errors come back as codes, so the engine can name the failing task.
    MPI_Comm_set_errhandler(channel, MPI_ERRORS_RETURN);
    rt->channels.push_back(channel);
  }
  config.channels = rt->options.channels;
  // cluster: the head plans every rank's tasks, so its window covers them all.
  config.window = rt->options.window * static_cast<uint64_t>(spmd ? 1 : config.ranks);
  config.broadcast = rt->options.broadcast;
  config.broadcast_min_bytes = rt->options.broadcast_min_bytes;
  config.broadcast_chunk = rt->options.broadcast_chunk;
  config.max_message = transport.max_chunk();
  MPI_Comm_dup(transport.communicator(), &rt->collectives);
  MPI_Comm_set_errhandler(rt->collectives, MPI_ERRORS_RETURN);
  rt->engine = std::make_unique<runtime::Engine>(transport, config.threads_per_rank,
                                                 spmd ? rank : 0, rt->channels, rt->collectives);
  rt->engine->set_engine_creates_comms(!spmd);
  if (spmd && rt->options.divergence_interval > 0) {
    rt->divergence = std::make_unique<runtime::DivergenceCheck>(transport.communicator(),
                                                                rt->options.divergence_interval);
    config.divergence = rt->divergence.get();
  }
  // Durations feed heft's cost model; every rank knows the scheduler (same environment).
  rt->engine->set_timing(!spmd && rt->options.scheduler == "heft");
  state = rt.release();
  static const bool guard_installed = [] { return std::atexit(exit_guard) == 0; }();
  (void)guard_installed;

  if (rank == 0 || spmd) {
    state->planner = std::make_unique<runtime::Planner>(*state->engine, config);
    state->engine->set_listener(state->planner.get());
    state->engine_thread = std::thread([] { state->engine->run(); });
    return;
  }
  // Cluster mode: this rank serves the head until it says stop.
  state->engine->run();
  std::exit(shut_down_rank(0));
}

int finish(int exit_status) {
  Runtime& rt = running();
  if (rt.planner) rt.planner->shutdown();
  if (rt.engine_thread.joinable()) rt.engine_thread.join();
  return shut_down_rank(exit_status);
}

int rank() { return running().transport->rank(); }
int num_ranks() { return running().transport->size(); }
bool is_running() { return state != nullptr; }

DataHandle enter_data(void* host, size_t bytes) { return planner().enter_data(host, bytes, -1); }
DataHandle enter_data(void* host, size_t bytes, int owner) {
  if (owner < 0)
    throw Error("taskgrid::enter_data: owner rank " + std::to_string(owner) + " is negative");
  return planner().enter_data(host, bytes, owner);
}
int owner(DataHandle h) { return planner().owner(h); }
bool is_spmd() { return running().options.mode == "spmd"; }
void fetch(DataHandle h) { planner().fetch(h); }
void exit_data(DataHandle h) {
  planner().fetch(h);
  planner().release(h);
}
void release(DataHandle h) { planner().release(h); }

void submit_packed(FunctionId fn, std::initializer_list<DataAccess> accesses,
                   const TaskOptions& options, const void* args, size_t args_size) {
  planner().submit(fn, accesses.begin(), accesses.size(), options, args, args_size);
}
void submit_packed(FunctionId fn, const DataAccess* accesses, size_t num_accesses,
                   const TaskOptions& options, const void* args, size_t args_size) {
  planner().submit(fn, accesses, num_accesses, options, args, args_size);
}

void wait_all() { planner().wait_all(); }
void wait(DataHandle h) { planner().wait(h); }

}  // namespace taskgrid
