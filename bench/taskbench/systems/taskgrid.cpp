// taskbench-taskgrid: Task Bench on the TaskGrid runtime (cluster mode).
//
// Every rank parses the command line before taskgrid::start(), so all ranks
// hold the same configuration (the task function reads it from a global).
// Ranks > 0 then serve inside start(); rank 0 registers two data handles per
// point of every graph (one per timestep parity) and submits every task,
// timestep-major across graphs: task (g, t, p) reads the parity (t-1)%2
// handles of its effective inputs in enumeration order (then the -broadcast
// handle) and writes the parity t%2 handle of point p. The runtime's
// versioning turns these accesses into the graph's edges and moves each
// output from its producer's rank to its consumers' ranks.
//
// Why two handles per point: accesses resolve in submission order, so with a
// single handle per point, task (t, p) submitted after task (t, q) would read
// the version that (t, q) writes (timestep t), not the one of timestep t-1.
// With parities, every write of timestep t goes to handles that no task of
// timestep t reads, and the renaming of versions keeps the readers of t-1
// correct when timestep t+1 writes the same parity again.
//
// Placement: by default each task carries the rank hint of the block
// distribution of the MPI baseline (rank r owns points [r*W/P, (r+1)*W/P-1]),
// so METG figures compare like with like; `-taskgrid:placement scheduler`
// drops the hints and lets TASKGRID_SCHEDULER place every task.
//
// Timing (spec 8.4): one untimed warm-up pass, then one timed pass, each
// bracketed on rank 0 by taskbench::wall_seconds() around the submission of
// all tasks and taskgrid::wait_all(). Execution counts are per-rank atomics,
// gathered after each pass by one "count" task per rank.
#include "taskgrid/taskgrid.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/options.h"
#include "core/report.h"
#include "core/task_contract.h"
#include "core/task_graph.h"

namespace {

using namespace taskbench;

// ------------------------------------------------------- shared state ---

// The same on every rank: parsed from the same argv before start().
BenchConfig g_config;

// What this rank executed since the last count task (any worker thread).
struct alignas(64) Counter {
  std::atomic<int64_t> value{0};
};
Counter g_tasks_executed;
Counter g_inputs_validated;

// By-value arguments of a benchmark task.
struct TaskKey {
  int64_t graph;
  int64_t timestep;
  int64_t point;
};

// ----------------------------------------------------- failure handling ---

// PMI_RANK as set by the MPI launcher (0 when started without one): the rank
// before MPI is initialised, used to print usage messages once.
int rank_from_environment() {
  const char* value = std::getenv("PMI_RANK");
  return value != nullptr ? std::atoi(value) : 0;
}

// Fatal handler: a task violated the contract (or the driver failed on rank
// 0). Names the rank and ends the whole job; only the first failure reports.
[[noreturn]] void abort_job(const std::string& diagnostic) {
  static std::atomic_flag reported = ATOMIC_FLAG_INIT;
  if (!reported.test_and_set()) {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    const bool mpi_up = initialized != 0 && finalized == 0;
    int rank = rank_from_environment();
    if (mpi_up) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "error: rank %d: %s\n", rank, diagnostic.c_str());
    std::fflush(stderr);
    std::fflush(stdout);
    if (mpi_up) MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }
  // Another thread is already taking the job down.
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

// ------------------------------------------------------------- tasks ---

// 64-byte aligned heap memory, freed with std::free.
struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using AlignedMemory = std::unique_ptr<char, FreeDeleter>;

// Scratch of graph `graph` for the calling thread, prepared (marker in every
// word) on first use. Tasks of one thread run one at a time, so they may
// share it. The warm-up pass prepares it outside the timed pass for every
// thread that ran a task of the graph then (with several task threads per
// rank, a thread may first meet a graph in the timed pass).
char* thread_scratch(size_t graph, size_t bytes) {
  thread_local std::vector<AlignedMemory> scratch;
  if (bytes == 0) return nullptr;
  if (scratch.size() <= graph) scratch.resize(g_config.graphs.size());
  AlignedMemory& mine = scratch[graph];
  if (!mine) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    mine.reset(static_cast<char*>(std::aligned_alloc(64, rounded)));
    if (!mine) fatal("out of memory allocating " + std::to_string(bytes) + " scratch bytes");
    prepare_scratch(mine.get(), bytes);
  }
  return mine.get();
}

// One Task Bench task. Buffers: the effective inputs in enumeration order,
// then the broadcast buffer (with -broadcast), then the output, last.
void taskbench_task(taskgrid::TaskContext& ctx) {
  const auto key = ctx.arg<TaskKey>();
  if (key.graph < 0 || static_cast<size_t>(key.graph) >= g_config.graphs.size())
    fatal("task names graph " + std::to_string(key.graph) + ", which does not exist");
  const TaskGraph& graph = g_config.graphs[static_cast<size_t>(key.graph)];
  const bool has_broadcast = g_config.broadcast_bytes > 0;
  const size_t fixed = has_broadcast ? 2 : 1;
  const size_t num_data = ctx.num_data();
  if (num_data < fixed)
    fatal("graph " + std::to_string(key.graph) + ", timestep " + std::to_string(key.timestep) +
          ", point " + std::to_string(key.point) + ": task has " + std::to_string(num_data) +
          " buffers, needs at least " + std::to_string(fixed));
  const size_t num_inputs = num_data - fixed;

  // execute_task checks num_inputs against the graph before it reads
  // input_points, so the graph's own list is long enough whenever it is read.
  thread_local std::vector<int64_t> input_points;
  thread_local std::vector<InputView> inputs;
  graph.effective_inputs(key.timestep, key.point, input_points);
  inputs.clear();
  for (size_t k = 0; k < num_inputs; ++k)
    inputs.push_back({static_cast<const char*>(ctx.data(k)), ctx.size(k)});

  const size_t scratch_bytes = static_cast<size_t>(graph.scratch_bytes);
  const TaskArgs args{&graph,
                      key.timestep,
                      key.point,
                      static_cast<char*>(ctx.data(num_data - 1)),
                      ctx.size(num_data - 1),
                      inputs.data(),
                      input_points.data(),
                      num_inputs,
                      thread_scratch(static_cast<size_t>(key.graph), scratch_bytes),
                      scratch_bytes,
                      has_broadcast ? static_cast<const char*>(ctx.data(num_inputs)) : nullptr,
                      has_broadcast ? ctx.size(num_inputs) : 0};
  execute_task(args);
  g_tasks_executed.value.fetch_add(1, std::memory_order_relaxed);
  g_inputs_validated.value.fetch_add(static_cast<int64_t>(num_inputs), std::memory_order_relaxed);
}
TASKGRID_REGISTER(taskbench_task);

// Copies this rank's counters into its output (2 x int64) and resets them.
void taskbench_count(taskgrid::TaskContext& ctx) {
  const int64_t counts[2] = {g_tasks_executed.value.exchange(0),
                             g_inputs_validated.value.exchange(0)};
  if (ctx.num_data() != 1 || ctx.size(0) != sizeof counts)
    fatal("count task: expected one buffer of " + std::to_string(sizeof counts) + " bytes");
  std::memcpy(ctx.data(0), counts, sizeof counts);
}
TASKGRID_REGISTER(taskbench_count);

// Writes a new version of the broadcast buffer with the same content (inout,
// no change) on rank 0, so that each pass distributes it to the other ranks
// inside the timed region, as the MPI baseline's timed MPI_Bcast does.
void taskbench_republish(taskgrid::TaskContext&) {}
TASKGRID_REGISTER(taskbench_republish);

// ------------------------------------------------------------ driver ---

enum class Placement { hint, scheduler };

constexpr const char* kPlacementFlag = "-taskgrid:placement";

// Reads -taskgrid:placement (last one wins). Returns "" or the message of a
// usage error (without the "error: " prefix).
std::string parse_placement(int argc, const char* const* argv, Placement& placement) {
  placement = Placement::hint;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], kPlacementFlag) != 0) continue;
    if (i + 1 >= argc) return std::string("Flag \"") + kPlacementFlag + "\" requires an argument";
    const std::string value = argv[++i];
    if (value == "hint") {
      placement = Placement::hint;
    } else if (value == "scheduler") {
      placement = Placement::scheduler;
    } else {
      return std::string("Invalid flag \"") + kPlacementFlag + " " + value +
             "\" must be hint or scheduler";
    }
  }
  return {};
}

// Worker threads per rank, for the report only: TASKGRID_THREADS, else the
// runtime's default estimate (the cores shared by the ranks).
int threads_per_rank(int ranks) {
  if (const char* value = std::getenv("TASKGRID_THREADS"); value != nullptr && *value != '\0')
    return std::max(1, std::atoi(value));
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / std::max(1, ranks));
}

// The block distribution of the MPI baseline (spec 8.4): the largest rank r
// with r*W/P <= p.
int block_owner(int64_t point, int64_t width, int64_t ranks) {
  return static_cast<int>(((point + 1) * ranks - 1) / width);
}

class Driver {
 public:
  Driver(const BenchConfig& config, Placement placement)
      : config_(config), placement_(placement), ranks_(taskgrid::num_ranks()) {
    task_fn_ = taskgrid::function_id(taskbench_task);

    // Two handles (timestep parities) per point of every graph; the initial
    // content is never read (timestep 0 has no inputs), so all share one
    // zeroed host buffer.
    int64_t max_output = 0;
    for (const TaskGraph& g : config_.graphs) max_output = std::max(max_output, g.output_bytes);
    zeros_.assign(static_cast<size_t>(max_output), 0);
    points_.resize(config_.graphs.size());
    for (size_t i = 0; i < config_.graphs.size(); ++i) {
      const TaskGraph& g = config_.graphs[i];
      for (auto& parity : points_[i]) {
        parity.reserve(static_cast<size_t>(g.max_width));
        for (int64_t p = 0; p < g.max_width; ++p)
          parity.push_back(
              taskgrid::enter_data(zeros_.data(), static_cast<size_t>(g.output_bytes)));
      }
      max_accesses_ = std::max(max_accesses_, static_cast<size_t>(g.max_dependencies()) + 2);
    }
    broadcast_.resize(static_cast<size_t>(config_.broadcast_bytes));
    if (!broadcast_.empty()) {
      fill_broadcast(broadcast_.data(), broadcast_.size());
      broadcast_handle_ = taskgrid::enter_data(broadcast_.data(), broadcast_.size());
    }
    count_host_.assign(static_cast<size_t>(ranks_) * 2, 0);
    for (int r = 0; r < ranks_; ++r)
      counts_.push_back(taskgrid::enter_data(count_host_.data() + 2 * r, 2 * sizeof(int64_t)));
    accesses_.reserve(max_accesses_);
  }

  // Forgets every handle (before taskgrid::finish()).
  void release() {
    for (auto& graph : points_)
      for (auto& parity : graph)
        for (taskgrid::DataHandle h : parity) taskgrid::release(h);
    if (broadcast_handle_) taskgrid::release(broadcast_handle_);
    for (taskgrid::DataHandle h : counts_) taskgrid::release(h);
    points_.clear();
    broadcast_handle_ = {};
    counts_.clear();
  }

  // One execution of every task of every graph; returns its wall time.
  double run_pass() {
    const double start = wall_seconds();
    if (broadcast_handle_) {
      taskgrid::TaskOptions on_root;
      on_root.rank = 0;
      taskgrid::submit(taskbench_republish, {taskgrid::inout(broadcast_handle_)}, on_root);
    }
    int64_t max_steps = 0;
    for (const TaskGraph& g : config_.graphs) max_steps = std::max(max_steps, g.timesteps);
    for (int64_t t = 0; t < max_steps; ++t) {
      for (size_t i = 0; i < config_.graphs.size(); ++i) {
        const TaskGraph& g = config_.graphs[i];
        if (t >= g.timesteps) continue;
        const int64_t offset = g.offset_at(t);
        for (int64_t p = offset; p < offset + g.width_at(t); ++p) submit_task(i, t, p);
      }
    }
    taskgrid::wait_all();
    return wall_seconds() - start;
  }

  // Sums and resets every rank's counters (one count task per rank).
  ExecutionCounts collect_counts() {
    for (int r = 0; r < ranks_; ++r) {
      taskgrid::TaskOptions on_rank;
      on_rank.rank = r;
      taskgrid::submit(taskbench_count, {taskgrid::out(counts_[static_cast<size_t>(r)])}, on_rank);
    }
    ExecutionCounts total;
    for (int r = 0; r < ranks_; ++r) {
      taskgrid::fetch(counts_[static_cast<size_t>(r)]);
      total.tasks += count_host_[2 * static_cast<size_t>(r)];
      total.inputs += count_host_[2 * static_cast<size_t>(r) + 1];
    }
    return total;
  }

 private:
  void submit_task(size_t graph_index, int64_t t, int64_t p) {
    const TaskGraph& g = config_.graphs[graph_index];
    const auto& parities = points_[graph_index];
    const std::vector<taskgrid::DataHandle>& previous = parities[static_cast<size_t>((t + 1) % 2)];
    const std::vector<taskgrid::DataHandle>& current = parities[static_cast<size_t>(t % 2)];
    g.effective_inputs(t, p, producers_);
    accesses_.clear();
    for (int64_t q : producers_)
      accesses_.push_back(taskgrid::in(previous[static_cast<size_t>(q)]));
    if (broadcast_handle_) accesses_.push_back(taskgrid::in(broadcast_handle_));
    accesses_.push_back(taskgrid::out(current[static_cast<size_t>(p)]));
    taskgrid::TaskOptions options;
    if (placement_ == Placement::hint) options.rank = block_owner(p, g.max_width, ranks_);
    const TaskKey key{static_cast<int64_t>(graph_index), t, p};
    taskgrid::submit_packed(task_fn_, accesses_.data(), accesses_.size(), options, &key,
                            sizeof key);
  }

  const BenchConfig& config_;
  const Placement placement_;
  const int ranks_;
  taskgrid::FunctionId task_fn_;
  std::vector<char> zeros_;
  // [graph][timestep % 2][point]
  std::vector<std::array<std::vector<taskgrid::DataHandle>, 2>> points_;
  std::vector<char> broadcast_;
  taskgrid::DataHandle broadcast_handle_;
  std::vector<int64_t> count_host_;  // 2 per rank: tasks, inputs
  std::vector<taskgrid::DataHandle> counts_;
  size_t max_accesses_ = 0;
  std::vector<int64_t> producers_;
  std::vector<taskgrid::DataAccess> accesses_;
};

// Rank 0's program; returns the benchmark's status (0 or 1).
int run_head(Placement placement) {
  std::fputs(configuration_text(g_config).c_str(), stdout);
  std::fflush(stdout);

  RunInfo info{"taskgrid", taskgrid::num_ranks(), threads_per_rank(taskgrid::num_ranks()), 0.0, {}};
  Driver driver(g_config, placement);
  for (int pass = 0; pass < 2; ++pass) {  // warm-up, then timed
    info.elapsed_seconds = driver.run_pass();
    info.counts = driver.collect_counts();
  }
  const int status = finish_run(g_config, info);
  driver.release();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // Every rank reaches the same verdict on the command line before MPI
  // starts, so a usage error or -h ends every rank alike (no MPI, no hang).
  const bool print = rank_from_environment() == 0;
  int status = 0;
  if (!parse_command_line(argc, argv, g_config, status, print)) {
    if (g_config.help && print)
      std::fputs(
          "\nTaskGrid options:\n"
          "  -taskgrid:placement hint|scheduler\n"
          "                           hint (default): block distribution of points over ranks\n"
          "                           scheduler: TASKGRID_SCHEDULER places every task\n",
          stdout);
    return status;
  }
  Placement placement = Placement::hint;
  if (const std::string problem = parse_placement(argc, argv, placement); !problem.empty()) {
    if (print) std::fprintf(stderr, "error: %s\n", problem.c_str());
    return 2;
  }

  // Installed before start(): ranks > 0 run their tasks inside start().
  set_fatal_handler(&abort_job);
  try {
    taskgrid::start(&argc, &argv);  // ranks > 0 serve here and exit
  } catch (const std::exception& error) {
    if (print) std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }

  int result = 0;
  try {
    result = run_head(placement);
  } catch (const std::exception& error) {
    abort_job(error.what());  // the other ranks would wait for rank 0 forever
  }
  const int finished = taskgrid::finish();
  return result != 0 ? result : finished;
}
