// taskbench-taskgrid_spmd: Task Bench on TaskGrid's spmd mode.
//
// Launched like the MPI baseline (mpiexec -n P taskbench-taskgrid_spmd
// <flags>); it sets TASKGRID_MODE=spmd itself. Every rank runs main: it
// parses argv after taskgrid::start() (only rank 0 prints), registers the
// same handles and submits the same tasks, timestep-major across graphs.
//
// Handles (see taskgrid_common.h): two per point, one per timestep parity,
// each owned by the block owner of its point (rank r owns points
// [r*W/P, (r+1)*W/P - 1], as in the MPI baseline). Task (g, t, p) reads the
// parity (t-1)%2 handles of its effective inputs in enumeration order (then
// the -broadcast handle, owned by rank 0) and writes the parity t%2 handle
// of p. It carries no rank hint: spmd's owner-computes rule runs it on the
// owner of the handle it writes, i.e. where the MPI baseline runs it. Each
// rank keeps only its own tasks; the runtime moves outputs peer to peer.
//
// Timing (spec 8.4): one untimed warm-up pass, then one timed pass, each
// bracketed by MPI_Barrier + MPI_Wtime around the submission of all tasks
// and taskgrid::wait_all() (this rank's tasks). With -broadcast, each pass
// starts with a task on rank 0 that republishes the buffer, so it is moved
// to the other ranks inside the timed region, like the baseline's MPI_Bcast.
// Execution counts are per-rank atomics, reduced to rank 0.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

#include "core/options.h"
#include "core/report.h"
#include "core/task_contract.h"
#include "core/task_graph.h"
#include "taskgrid/taskgrid.hpp"
#include "taskgrid_common.h"

namespace {

using namespace taskbench;

// Read by the task function (tg::config()); lives until the process ends.
BenchConfig g_config;

void check_mpi(int code, const char* call) {
  if (code != MPI_SUCCESS) fatal(std::string(call) + " failed");
}
#define CHECK_MPI(call) check_mpi((call), #call)

// Ranks of this job on this node (for the default thread count).
int ranks_on_node(MPI_Comm comm) {
  MPI_Comm node;
  CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int size = 1;
  CHECK_MPI(MPI_Comm_size(node, &size));
  CHECK_MPI(MPI_Comm_free(&node));
  return size;
}

class Driver {
 public:
  Driver(const BenchConfig& config, const tg::Functions& functions, int rank, int ranks)
      : config_(config), functions_(functions) {
    // The initial content of a point's handles is never read (timestep 0
    // has no inputs), so every rank passes the same zeroed buffer.
    int64_t max_output = 1;
    for (const TaskGraph& g : config_.graphs) max_output = std::max(max_output, g.output_bytes);
    zeros_.assign(static_cast<size_t>(max_output), 0);
    handles_.resize(config_.graphs.size());
    size_t max_accesses = 0;
    for (size_t i = 0; i < config_.graphs.size(); ++i) {
      const TaskGraph& g = config_.graphs[i];
      for (std::vector<taskgrid::DataHandle>& parity : handles_[i].parity) {
        parity.reserve(static_cast<size_t>(g.max_width));
        for (int64_t p = 0; p < g.max_width; ++p)
          parity.push_back(taskgrid::enter_data(zeros_.data(), static_cast<size_t>(g.output_bytes),
                                                tg::block_owner(p, g.max_width, ranks)));
      }
      max_accesses = std::max(max_accesses, static_cast<size_t>(g.max_dependencies()) + 2);
      max_steps_ = std::max(max_steps_, g.timesteps);
    }
    accesses_.reserve(max_accesses);
    producers_.reserve(max_accesses);

    // -broadcast: the content starts on rank 0, its owner; the others' host
    // buffer is never read, so they pass a one-byte placeholder.
    const size_t broadcast_bytes = static_cast<size_t>(config_.broadcast_bytes);
    if (broadcast_bytes != 0) {
      broadcast_host_.assign(rank == 0 ? broadcast_bytes : 1, 0);
      if (rank == 0) fill_broadcast(broadcast_host_.data(), broadcast_bytes);
      broadcast_ = taskgrid::enter_data(broadcast_host_.data(), broadcast_bytes, 0);
    }
  }

  // Submits every task of every graph (the same sequence on every rank).
  void submit_pass() {
    if (broadcast_) {
      taskgrid::TaskOptions on_root;
      on_root.rank = 0;
      taskgrid::submit(functions_.republish, {taskgrid::inout(broadcast_)}, on_root);
    }
    const taskgrid::TaskOptions owner_computes;
    for (int64_t t = 0; t < max_steps_; ++t) {
      for (size_t i = 0; i < config_.graphs.size(); ++i) {
        const TaskGraph& g = config_.graphs[i];
        if (t >= g.timesteps) continue;
        const int64_t offset = g.offset_at(t);
        const int64_t end = offset + g.width_at(t);
        for (int64_t p = offset; p < end; ++p) {
          tg::task_accesses(g, handles_[i], broadcast_, t, p, producers_, accesses_);
          const tg::TaskKey key{static_cast<int64_t>(i), t, p};
          taskgrid::submit_packed(functions_.task, accesses_.data(), accesses_.size(),
                                  owner_computes, &key, sizeof key);
        }
      }
    }
  }

  // Forgets every handle (every rank, before taskgrid::finish()).
  void release() {
    for (tg::GraphHandles& graph : handles_)
      for (std::vector<taskgrid::DataHandle>& parity : graph.parity)
        for (taskgrid::DataHandle h : parity) taskgrid::release(h);
    handles_.clear();
    if (broadcast_) taskgrid::release(broadcast_);
    broadcast_ = {};
  }

 private:
  const BenchConfig& config_;
  const tg::Functions functions_;
  std::vector<char> zeros_;
  std::vector<tg::GraphHandles> handles_;
  std::vector<char> broadcast_host_;
  taskgrid::DataHandle broadcast_;
  int64_t max_steps_ = 0;
  std::vector<int64_t> producers_;
  std::vector<taskgrid::DataAccess> accesses_;
};

// Every rank's program after start(); returns the same status everywhere.
int run(int argc, char** argv, const tg::Functions& functions) {
  const int rank = taskgrid::rank();
  const int ranks = taskgrid::num_ranks();
  // Every rank parses the same argv and reaches the same verdict.
  int status = 0;
  if (!parse_command_line(argc, argv, g_config, status, rank == 0)) return status;
  tg::set_config(g_config);
  if (rank == 0) {
    std::fputs(configuration_text(g_config).c_str(), stdout);
    std::fflush(stdout);
  }

  MPI_Comm comm;  // the program's own communicator, apart from the runtime's
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  const int threads = tg::threads_per_rank(ranks_on_node(comm));
  Driver driver(g_config, functions, rank, ranks);

  double elapsed = 0;
  ExecutionCounts counts;
  for (int pass = 0; pass < 2; ++pass) {  // warm-up, then timed
    CHECK_MPI(MPI_Barrier(comm));
    const double start = MPI_Wtime();
    driver.submit_pass();
    taskgrid::wait_all();
    CHECK_MPI(MPI_Barrier(comm));
    elapsed = MPI_Wtime() - start;
    counts = tg::take_counts();
  }

  const int64_t local_counts[2] = {counts.tasks, counts.inputs};
  int64_t total_counts[2] = {0, 0};
  CHECK_MPI(MPI_Reduce(local_counts, total_counts, 2, MPI_INT64_T, MPI_SUM, 0, comm));
  int max_threads = 0;
  CHECK_MPI(MPI_Reduce(&threads, &max_threads, 1, MPI_INT, MPI_MAX, 0, comm));
  if (rank == 0) {
    RunInfo info{"taskgrid_spmd", ranks, max_threads, elapsed, {}};
    info.counts.tasks = total_counts[0];
    info.counts.inputs = total_counts[1];
    status = finish_run(g_config, info);
    std::fflush(stdout);
  }
  CHECK_MPI(MPI_Bcast(&status, 1, MPI_INT, 0, comm));
  CHECK_MPI(MPI_Comm_free(&comm));
  driver.release();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // Before MPI: every rank sees the same environment and reaches the same
  // verdict; PMI_RANK picks the one that prints.
  const bool print = tg::rank_from_environment() == 0;
  if (const char* mode = std::getenv("TASKGRID_MODE");
      mode != nullptr && *mode != '\0' && std::strcmp(mode, "spmd") != 0) {
    if (print)
      std::fprintf(stderr,
                   "error: TASKGRID_MODE=\"%s\": taskbench-taskgrid_spmd runs in spmd mode only "
                   "(unset TASKGRID_MODE or set it to spmd)\n",
                   mode);
    return 2;
  }
  setenv("TASKGRID_MODE", "spmd", 1);

  set_fatal_handler(&tg::abort_job);
  tg::Functions functions;
  try {
    functions = tg::register_functions();
    taskgrid::start(&argc, &argv);
  } catch (const std::exception& error) {
    if (print) std::fprintf(stderr, "error: %s\n", error.what());
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) MPI_Finalize();
    return 1;
  }

  int status = 0;
  try {
    status = run(argc, argv, functions);
  } catch (const std::exception& error) {
    tg::abort_job(error.what());  // the other ranks would wait for this one forever
  }
  const int finished = taskgrid::finish();
  return status != 0 ? status : finished;
}
