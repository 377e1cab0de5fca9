// Pieces of Task Bench on TaskGrid that do not depend on the runtime's mode
// (cluster: taskbench-taskgrid, spmd: taskbench-taskgrid_spmd): the task
// function and its buffer layout, per-thread scratch, execution counters,
// the block distribution, and the handles and task submission of a pass.
// The fatal handler (abort_job) is in mpi_abort.h.
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
#include <initializer_list>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/report.h"
#include "core/task_graph.h"
#include "taskgrid/taskgrid.hpp"

namespace taskbench::tg {

// By-value arguments of a benchmark task: this key, then the point of each
// input's producer (int64_t each, in the order of the input accesses), the
// wiring the submission chose, which the task contract checks.
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

// -taskgrid:device cpu (default) | gpu: where the benchmark tasks run.
//   cpu: a plain task function (run_task).
//   gpu: a device task (taskgrid::register_device_function) with no CPU
//     implementation, so that a rank without a device (TASKGRID_DEVICE unset
//     on a machine without GPUs, or none) ends the job at its first task with
//     the runtime's message naming the task, the rank and TASKGRID_DEVICE,
//     instead of silently running on the CPU. TaskGrid has no public query of
//     a rank's devices, and the runtime routes such a task in one place.
//     Every graph's kernel must be gpu_compute_bound (no -scratch): on a CUDA
//     device the contract runs as a kernel (bench/taskbench/gpu) and then the
//     gpu_compute_bound kernel; on an emulated device (TASKGRID_DEVICE=emulated)
//     both run as host work on the task's stream (execute_task, the kernel's
//     CPU reference).
enum class Device { cpu, gpu };
constexpr const char* kDeviceFlag = "-taskgrid:device";
constexpr const char* kDeviceHelp =
    "  -taskgrid:device cpu|gpu\n"
    "                           cpu (default): tasks run on the ranks' cores\n"
    "                           gpu: tasks run on the ranks' devices (TASKGRID_DEVICE; kernel\n"
    "                           gpu_compute_bound); a rank without a device ends the job\n";
// Reads -taskgrid:device. Returns "" or the message of a usage error.
std::string parse_device(int argc, const char* const* argv, Device& device);
// "" when `config` can run with `device`, else the message of a usage error.
std::string check_device(const BenchConfig& config, Device device);

// Registers the task functions below (idempotent: the first call's `device`
// wins); call before start(), with the same `device` on every rank.
struct Functions {
  taskgrid::FunctionId task;       // run_task, or run_task_on_device
  taskgrid::FunctionId republish;  // republish
};
Functions register_functions(Device device = Device::cpu);

// One Task Bench task (arguments above): builds TaskArgs, runs execute_task()
// (fatal() on any contract violation) and counts the task and its inputs.
void run_task(taskgrid::TaskContext& ctx);
// The same task as a device implementation (see Device): every buffer is
// device memory; the work goes on the task's stream and the task and its
// inputs are counted when it has run there.
void run_task_on_device(taskgrid::TaskContext& ctx);
// Does nothing: submitted with inout on the broadcast handle (rank 0), it
// makes a new version with the same content, so that each pass moves the
// buffer to the other ranks again, as the MPI baseline's timed MPI_Bcast.
void republish(taskgrid::TaskContext& ctx);

// A simulated run (bench/sim/) watches the work: each benchmark task after
// its kernel ran (to charge its computation in simulated time) and each task
// a rank's program submits (to charge the planner's), with whether this rank
// runs it: a spmd rank plans another rank's task too, at a lower cost.
// Set before start().
struct WorkObserver {
  void (*task_ran)(const TaskGraph& graph, int64_t timestep, int64_t point) = nullptr;
  void (*task_submitted)(bool runs_here) = nullptr;
};
void set_work_observer(const WorkObserver& observer);

// The program's own job-wide calls beside the runtime's: the barriers and
// clock around the timed pass and the reductions of the counts. MPI's in a
// real job; a simulated job installs its own (set_job_calls), per rank.
class JobCalls {
 public:
  virtual ~JobCalls() = default;
  virtual void barrier() = 0;
  virtual double seconds() = 0;
  // In place on rank 0 (the other ranks' values are left as they were).
  virtual void sum_to_root(int64_t* values, int count) = 0;
  virtual int max_to_root(int value) = 0;
  virtual int broadcast_from_root(int value) = 0;
};
// nullptr: MPI's (the system's own). The simulator's answers for the
// calling rank.
void set_job_calls(JobCalls* calls);
JobCalls* simulated_job_calls();

// What this rank's tasks executed since the last call (all threads); resets.
ExecutionCounts take_counts();

// Scratch of graph `graph` for the calling thread, `bytes` long, prepared
// (marker in every word) on first use; nullptr when bytes == 0. Tasks of one
// thread run one at a time, so they share it.
char* thread_scratch(size_t graph, size_t bytes);

// The block distribution of the MPI baseline (spec 8.4): rank r owns points
// [r*W/P, (r+1)*W/P - 1]; the owner of `point` is the largest such r.
inline int block_owner(int64_t point, int64_t width, int64_t ranks) {
  return static_cast<int>(((point + 1) * ranks - 1) / width);
}

// -taskgrid:warmup 1 (default) | 0: whether an untimed warm-up pass comes
// before the timed one. 0 is for runs whose single pass is long and whose
// start-up costs are part of what is measured (a 1 GiB broadcast on a shaped
// network costs minutes per pass).
constexpr const char* kWarmupFlag = "-taskgrid:warmup";
constexpr const char* kWarmupHelp =
    "  -taskgrid:warmup 1|0\n"
    "                           1 (default): an untimed warm-up pass before the timed one\n";
std::string parse_warmup(int argc, const char* const* argv, bool& warmup);

// The handles of every graph of a run and the -broadcast handle, and the
// submission of one pass over them. The rank that runs the program registers
// them (rank 0 in cluster mode, every rank in spmd mode).
class Workload {
 public:
  // Who owns the handles (taskgrid::enter_data): nobody named (cluster mode,
  // the data starts on rank 0), or each point's block owner, rank 0 for the
  // -broadcast buffer (spmd mode, where tasks run on the owner of their
  // output).
  enum class Owners { unnamed, block };
  // Rank hints of the tasks of a pass: none (the scheduler, or spmd's
  // owner-computes rule, places them) or the block owner of their point.
  enum class Hints { none, block_owner };

  // Registers two handles per point of every graph, then (with -broadcast)
  // the broadcast handle, whose content rank 0 fills. `config` must outlive
  // the Workload.
  Workload(const BenchConfig& config, const Functions& functions, Owners owners);
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // Submits one pass: with -broadcast first a republish task on rank 0 (so
  // the buffer moves to the other ranks inside the pass, as the MPI
  // baseline's timed MPI_Bcast), then every task of every graph,
  // timestep-major across graphs (the same sequence on every rank).
  void submit_pass(Hints hints);

  // Forgets every handle (before taskgrid::finish()).
  void release();

 private:
  // The data handles of one graph: [timestep % 2][point].
  using GraphHandles = std::array<std::vector<taskgrid::DataHandle>, 2>;

  // Submits task (t, p) of graph `graph_index` with the accesses of the
  // layout above.
  void submit_task(size_t graph_index, int64_t timestep, int64_t point, Hints hints);

  const BenchConfig& config_;
  const Functions functions_;
  const Owners owners_;
  const int ranks_;
  std::vector<char> zeros_;
  std::vector<GraphHandles> handles_;
  std::vector<char> broadcast_host_;
  taskgrid::DataHandle broadcast_;
  int64_t max_steps_ = 0;
  std::vector<int64_t> producers_;
  std::vector<int64_t> args_;  // one task's arguments (see TaskKey)
  std::vector<taskgrid::DataAccess> accesses_;
};

}  // namespace taskbench::tg
