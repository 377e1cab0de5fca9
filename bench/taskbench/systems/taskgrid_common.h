// Pieces of Task Bench on TaskGrid that do not depend on the runtime's mode
// (cluster: taskbench-taskgrid, spmd: taskbench-taskgrid_spmd): the task
// function and its buffer layout, per-thread scratch, execution counters,
// the fatal handler, the block distribution and the handles of a graph.
//
// Buffer layout of a benchmark task (the order of its data accesses): the
// effective inputs of (t, p) in enumeration order, then the -broadcast
// buffer (with -broadcast > 0), then the output of p, last.
//
// Handles: two per point (timestep parities). Accesses resolve in submission
// order, so with one handle per point a task (t, p) submitted after (t, q)
// would read the version that (t, q) writes at timestep t instead of the one
// of t-1. With parities, timestep t writes only handles that no task of
// timestep t reads; timestep t+1 writes the parity read at t again, after
// every reader of t was submitted, and versioning keeps those readers right.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/report.h"
#include "core/task_graph.h"
#include "taskgrid/taskgrid.hpp"

namespace taskbench::tg {

// By-value arguments of a benchmark task.
struct TaskKey {
  int64_t graph;
  int64_t timestep;
  int64_t point;
};

// The configuration the task function reads. Set it on every rank (before
// taskgrid::start() in cluster mode, where ranks > 0 run tasks inside it);
// `config` must outlive every task.
void set_config(const BenchConfig& config);
const BenchConfig& config();

// Registers the task functions below (idempotent); call before start().
struct Functions {
  taskgrid::FunctionId task;       // run_task
  taskgrid::FunctionId republish;  // republish
};
Functions register_functions();

// One Task Bench task (layout above): builds TaskArgs, runs execute_task()
// (fatal() on any contract violation) and counts the task and its inputs.
void run_task(taskgrid::TaskContext& ctx);
// Does nothing: submitted with inout on the broadcast handle (rank 0), it
// makes a new version with the same content, so that each pass moves the
// buffer to the other ranks again, as the MPI baseline's timed MPI_Bcast.
void republish(taskgrid::TaskContext& ctx);

// What this rank's tasks executed since the last call (all threads); resets.
ExecutionCounts take_counts();

// Scratch of graph `graph` for the calling thread, `bytes` long, prepared
// (marker in every word) on first use; nullptr when bytes == 0. Tasks of one
// thread run one at a time, so they share it.
char* thread_scratch(size_t graph, size_t bytes);

// Fatal handler for taskbench::set_fatal_handler: prints "error: rank <r>:
// <diagnostic>" (MPI's rank, else PMI_RANK) and ends the job with MPI_Abort
// (exit status 1 without MPI). Only the first failing thread reports.
[[noreturn]] void abort_job(const std::string& diagnostic);

// PMI_RANK as set by the launcher (0 without one): the rank before MPI runs.
int rank_from_environment();

// Task threads per rank, for the report: TASKGRID_THREADS, else the runtime's
// default (the cores shared by the `ranks_on_node` ranks of this node).
int threads_per_rank(int ranks_on_node);

// The block distribution of the MPI baseline (spec 8.4): rank r owns points
// [r*W/P, (r+1)*W/P - 1]; the owner of `point` is the largest such r.
inline int block_owner(int64_t point, int64_t width, int64_t ranks) {
  return static_cast<int>(((point + 1) * ranks - 1) / width);
}

// The data handles of one graph: [timestep % 2][point].
struct GraphHandles {
  std::array<std::vector<taskgrid::DataHandle>, 2> parity;
};

// Appends to `accesses` (cleared first) the accesses of task (t, p) of
// `graph` in the layout above; `broadcast` may be the null handle.
// `producers` receives the effective inputs (workspace, cleared first).
void task_accesses(const TaskGraph& graph, const GraphHandles& handles,
                   taskgrid::DataHandle broadcast, int64_t timestep, int64_t point,
                   std::vector<int64_t>& producers, std::vector<taskgrid::DataAccess>& accesses);

}  // namespace taskbench::tg
