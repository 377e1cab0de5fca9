#include "taskgrid_common.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "core/task_contract.h"

namespace taskbench::tg {
namespace {

const BenchConfig* g_config = nullptr;

// Executed by this rank's task threads since the last take_counts().
struct alignas(64) Counter {
  std::atomic<int64_t> value{0};
};
Counter g_tasks;
Counter g_inputs;

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using AlignedMemory = std::unique_ptr<char, FreeDeleter>;

[[noreturn]] void task_fatal(const TaskKey& key, const std::string& problem) {
  fatal("graph " + std::to_string(key.graph) + ", timestep " + std::to_string(key.timestep) +
        ", point " + std::to_string(key.point) + ": " + problem);
}

}  // namespace

void set_config(const BenchConfig& config) { g_config = &config; }

const BenchConfig& config() {
  if (g_config == nullptr) fatal("taskgrid system: the configuration was not set");
  return *g_config;
}

Functions register_functions() {
  static const Functions functions{taskgrid::register_function("taskbench_task", run_task),
                                   taskgrid::register_function("taskbench_republish", republish)};
  return functions;
}

void run_task(taskgrid::TaskContext& ctx) {
  if (ctx.args_size() != sizeof(TaskKey))
    fatal("task has " + std::to_string(ctx.args_size()) + " argument bytes, expected " +
          std::to_string(sizeof(TaskKey)));
  const auto key = ctx.arg<TaskKey>();
  const BenchConfig& cfg = config();
  if (key.graph < 0 || static_cast<size_t>(key.graph) >= cfg.graphs.size())
    task_fatal(key, "the graph does not exist");
  const TaskGraph& graph = cfg.graphs[static_cast<size_t>(key.graph)];
  const bool has_broadcast = cfg.broadcast_bytes > 0;
  const size_t fixed = has_broadcast ? 2 : 1;  // [broadcast,] output
  const size_t num_data = ctx.num_data();
  if (num_data < fixed)
    task_fatal(key, "the task has " + std::to_string(num_data) + " buffers, needs at least " +
                        std::to_string(fixed));
  const size_t num_inputs = num_data - fixed;

  // execute_task() checks num_inputs against the graph's own list before it
  // reads input_points, so this list is long enough whenever it is read.
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
  g_tasks.value.fetch_add(1, std::memory_order_relaxed);
  g_inputs.value.fetch_add(static_cast<int64_t>(num_inputs), std::memory_order_relaxed);
}

void republish(taskgrid::TaskContext&) {}

ExecutionCounts take_counts() {
  ExecutionCounts counts;
  counts.tasks = g_tasks.value.exchange(0);
  counts.inputs = g_inputs.value.exchange(0);
  return counts;
}

char* thread_scratch(size_t graph, size_t bytes) {
  thread_local std::vector<AlignedMemory> scratch;
  if (bytes == 0) return nullptr;
  if (scratch.size() <= graph) scratch.resize(graph + 1);
  AlignedMemory& mine = scratch[graph];
  if (!mine) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    mine.reset(static_cast<char*>(std::aligned_alloc(64, rounded)));
    if (!mine) fatal("out of memory allocating " + std::to_string(bytes) + " scratch bytes");
    prepare_scratch(mine.get(), bytes);
  }
  return mine.get();
}

int rank_from_environment() {
  const char* value = std::getenv("PMI_RANK");
  return value != nullptr ? std::atoi(value) : 0;
}

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

int threads_per_rank(int ranks_on_node) {
  if (const char* value = std::getenv("TASKGRID_THREADS"); value != nullptr && *value != '\0')
    return std::max(1, std::atoi(value));
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / std::max(1, ranks_on_node));
}

void task_accesses(const TaskGraph& graph, const GraphHandles& handles,
                   taskgrid::DataHandle broadcast, int64_t timestep, int64_t point,
                   std::vector<int64_t>& producers, std::vector<taskgrid::DataAccess>& accesses) {
  const std::vector<taskgrid::DataHandle>& previous =
      handles.parity[static_cast<size_t>((timestep + 1) % 2)];
  const std::vector<taskgrid::DataHandle>& current =
      handles.parity[static_cast<size_t>(timestep % 2)];
  graph.effective_inputs(timestep, point, producers);
  accesses.clear();
  for (int64_t q : producers) accesses.push_back(taskgrid::in(previous[static_cast<size_t>(q)]));
  if (broadcast) accesses.push_back(taskgrid::in(broadcast));
  accesses.push_back(taskgrid::out(current[static_cast<size_t>(point)]));
}

}  // namespace taskbench::tg
