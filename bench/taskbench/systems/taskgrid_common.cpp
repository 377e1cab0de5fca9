#include "taskgrid_common.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/task_contract.h"
#include "taskgrid/device.hpp"

#ifdef TASKBENCH_HAVE_CUDA
#include "gpu/gpu_kernels.h"
#endif

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

std::string parse_warmup(int argc, const char* const* argv, bool& warmup) {
  size_t index = warmup ? 1 : 0;
  std::string problem = parse_choice_flag(argc, argv, kWarmupFlag, {"0", "1"}, index);
  warmup = index == 1;
  return problem;
}

void set_config(const BenchConfig& config) { g_config = &config; }

const BenchConfig& config() {
  if (g_config == nullptr) fatal("taskgrid system: the configuration was not set");
  return *g_config;
}

std::string parse_device(int argc, const char* const* argv, Device& device) {
  size_t index = device == Device::gpu ? 1 : 0;
  std::string problem = parse_choice_flag(argc, argv, kDeviceFlag, {"cpu", "gpu"}, index);
  device = index == 1 ? Device::gpu : Device::cpu;
  return problem;
}

std::string check_device(const BenchConfig& config, Device device) {
  if (device == Device::cpu) return {};
  if (std::string problem = check_gpu_kernel(config, kDeviceFlag); !problem.empty()) return problem;
  for (const TaskGraph& g : config.graphs)
    if (g.scratch_bytes != 0)
      return std::string(kDeviceFlag) + " gpu: device tasks have no scratch memory (graph " +
             std::to_string(g.graph_index) + " has -scratch " + std::to_string(g.scratch_bytes) +
             ")";
  return {};
}

Functions register_functions(Device device) {
  static const Functions functions{
      device == Device::gpu
          ? taskgrid::register_device_function("taskbench_task", nullptr, run_task_on_device)
          : taskgrid::register_function("taskbench_task", run_task),
      taskgrid::register_function("taskbench_republish", republish)};
  return functions;
}

namespace {

// What a task's arguments and buffers say, checked against the configuration.
struct DecodedTask {
  TaskKey key;
  const TaskGraph* graph;
  size_t num_inputs;   // input buffers, the first ones
  bool has_broadcast;  // then the -broadcast buffer; the output is last
};

DecodedTask decode_task(const taskgrid::TaskContext& ctx) {
  const size_t args_size = ctx.args_size();
  if (args_size < sizeof(TaskKey) || (args_size - sizeof(TaskKey)) % sizeof(int64_t) != 0)
    fatal("task has " + std::to_string(args_size) +
          " argument bytes, expected a key and whole input points");
  DecodedTask task{ctx.arg<TaskKey>(), nullptr, 0, false};
  const BenchConfig& cfg = config();
  if (task.key.graph < 0 || static_cast<size_t>(task.key.graph) >= cfg.graphs.size())
    task_fatal(task.key, "the graph does not exist");
  task.graph = &cfg.graphs[static_cast<size_t>(task.key.graph)];
  task.has_broadcast = cfg.broadcast_bytes > 0;
  const size_t fixed = task.has_broadcast ? 2 : 1;  // [broadcast,] output
  const size_t num_data = ctx.num_data();
  if (num_data < fixed)
    task_fatal(task.key, "the task has " + std::to_string(num_data) + " buffers, needs at least " +
                             std::to_string(fixed));
  task.num_inputs = num_data - fixed;
  const size_t num_points = (args_size - sizeof(TaskKey)) / sizeof(int64_t);
  if (num_points != task.num_inputs)
    task_fatal(task.key, "the task has " + std::to_string(task.num_inputs) + " input buffers and " +
                             std::to_string(num_points) + " input points");
  return task;
}

// Copies the input points out of the arguments (they need not be aligned).
void copy_input_points(const taskgrid::TaskContext& ctx, size_t num_inputs, int64_t* points) {
  if (num_inputs)
    std::memcpy(points, static_cast<const char*>(ctx.args()) + sizeof(TaskKey),
                num_inputs * sizeof(int64_t));
}

void count_task(size_t num_inputs) {
  g_tasks.value.fetch_add(1, std::memory_order_relaxed);
  g_inputs.value.fetch_add(static_cast<int64_t>(num_inputs), std::memory_order_relaxed);
}

// The emulated device: the whole contract and the kernel's CPU reference as
// host work on the task's stream, through the host views of its buffers.
void run_on_emulated_device(const taskgrid::TaskContext& ctx, const DecodedTask& task) {
  struct Work {
    DecodedTask task;
    std::vector<int64_t> points;
    std::vector<InputView> inputs;
    char* output;
    size_t output_bytes;
    const char* broadcast;
    size_t broadcast_bytes;
  };
  auto work = std::make_shared<Work>();
  work->task = task;
  work->points.resize(task.num_inputs);
  copy_input_points(ctx, task.num_inputs, work->points.data());
  work->inputs.resize(task.num_inputs);
  for (size_t k = 0; k < task.num_inputs; ++k)
    work->inputs[k] = {static_cast<const char*>(taskgrid::emulated_view(ctx, k)), ctx.size(k)};
  const size_t last = ctx.num_data() - 1;
  work->output = static_cast<char*>(taskgrid::emulated_view(ctx, last));
  work->output_bytes = ctx.size(last);
  work->broadcast = task.has_broadcast
                        ? static_cast<const char*>(taskgrid::emulated_view(ctx, task.num_inputs))
                        : nullptr;
  work->broadcast_bytes = task.has_broadcast ? ctx.size(task.num_inputs) : 0;
  taskgrid::launch_host_work(ctx, [work] {
    const DecodedTask& t = work->task;
    // The stream's thread has its own scratch (its tasks run one at a time).
    const size_t scratch_bytes = static_cast<size_t>(t.graph->scratch_bytes);
    const TaskArgs args{t.graph,
                        t.key.timestep,
                        t.key.point,
                        work->output,
                        work->output_bytes,
                        work->inputs.data(),
                        work->points.data(),
                        t.num_inputs,
                        thread_scratch(static_cast<size_t>(t.key.graph), scratch_bytes),
                        scratch_bytes,
                        work->broadcast,
                        work->broadcast_bytes};
    execute_task(args);
    count_task(t.num_inputs);
  });
}

#ifdef TASKBENCH_HAVE_CUDA
// A CUDA device: the host checks what needs no data (7.1, the wiring, the
// buffer sizes), then the contract kernel checks the inputs' records and the
// broadcast buffer and writes the output, then gpu_compute_bound runs, then
// host work on the stream reads the contract's failure record: a violation
// ends the job as on CPUs. Nothing here waits for the stream.
void run_on_cuda_device(const taskgrid::TaskContext& ctx, const DecodedTask& task) {
  const TaskGraph& g = *task.graph;
  const TaskKey& key = task.key;
  if (key.timestep < 0 || key.timestep >= g.timesteps || !g.is_active(key.timestep, key.point))
    task_fatal(key, "task is not in the graph");
  const size_t last = ctx.num_data() - 1;
  const auto output_bytes = static_cast<size_t>(g.output_bytes);
  if (ctx.size(last) != output_bytes)
    task_fatal(key, "output buffer has " + std::to_string(ctx.size(last)) + " bytes, expected " +
                        std::to_string(output_bytes));
  struct Lists {
    std::vector<int64_t> points;
    std::vector<int64_t> expected;
    std::vector<const char*> inputs;
  };
  thread_local Lists lists;
  lists.points.resize(task.num_inputs);
  copy_input_points(ctx, task.num_inputs, lists.points.data());
  g.effective_inputs(key.timestep, key.point, lists.expected);
  const size_t inputs = lists.expected.size();
  if (task.num_inputs < inputs)
    task_fatal(key, "got " + std::to_string(task.num_inputs) + " inputs, expected " +
                        std::to_string(inputs));
  lists.inputs.resize(inputs);
  for (size_t k = 0; k < inputs; ++k) {
    if (lists.points[k] != lists.expected[k])
      task_fatal(key, "input " + std::to_string(k) + " was taken from point " +
                          std::to_string(lists.points[k]) + ", but dependency " +
                          std::to_string(k) + " is point " + std::to_string(lists.expected[k]));
    if (ctx.size(k) != output_bytes)
      task_fatal(key, "input " + std::to_string(k) + " (from point " +
                          std::to_string(lists.expected[k]) + ") has " +
                          std::to_string(ctx.size(k)) + " bytes, expected " +
                          std::to_string(output_bytes));
    lists.inputs[k] = static_cast<const char*>(ctx.data(k));
  }
  const gpu::DeviceTask device_task{
      key.graph,
      key.timestep,
      key.point,
      static_cast<char*>(ctx.data(last)),
      output_bytes,
      lists.inputs.data(),
      lists.expected.data(),
      inputs,
      task.has_broadcast ? static_cast<const char*>(ctx.data(task.num_inputs)) : nullptr,
      task.has_broadcast ? ctx.size(task.num_inputs) : 0};
  void* stream = ctx.stream();
  gpu::FailureRecord* record = gpu::failure_record(stream);
  gpu::launch_contract(stream, device_task, record);
  gpu::launch_compute_bound(stream, g.kernel.gpu_lanes, g.kernel.iterations);
  const size_t counted = task.num_inputs;
  taskgrid::launch_host_work(ctx, [record, counted] {
    const std::string problem = gpu::take_failure(record);
    if (!problem.empty()) fatal(problem);
    count_task(counted);
  });
}
#endif

}  // namespace

namespace {
WorkObserver work_observer;
JobCalls* job_calls = nullptr;
}  // namespace

void run_task(taskgrid::TaskContext& ctx) {
  const DecodedTask task = decode_task(ctx);
  const size_t num_inputs = task.num_inputs;

  // One thread_local (one TLS lookup); filled by index once sized.
  struct TaskLists {
    std::vector<int64_t> input_points;
    std::vector<InputView> inputs;
  };
  thread_local TaskLists lists;
  std::vector<int64_t>& input_points = lists.input_points;
  std::vector<InputView>& inputs = lists.inputs;
  if (inputs.size() < num_inputs) {
    inputs.resize(num_inputs);
    input_points.resize(num_inputs);
  }
  copy_input_points(ctx, num_inputs, input_points.data());
  for (size_t k = 0; k < num_inputs; ++k)
    inputs[k] = {static_cast<const char*>(ctx.data(k)), ctx.size(k)};

  const size_t num_data = ctx.num_data();
  const size_t scratch_bytes = static_cast<size_t>(task.graph->scratch_bytes);
  const TaskArgs args{task.graph,
                      task.key.timestep,
                      task.key.point,
                      static_cast<char*>(ctx.data(num_data - 1)),
                      ctx.size(num_data - 1),
                      inputs.data(),
                      input_points.data(),
                      num_inputs,
                      thread_scratch(static_cast<size_t>(task.key.graph), scratch_bytes),
                      scratch_bytes,
                      task.has_broadcast ? static_cast<const char*>(ctx.data(num_inputs)) : nullptr,
                      task.has_broadcast ? ctx.size(num_inputs) : 0};
  execute_task(args);
  if (work_observer.task_ran)
    work_observer.task_ran(*task.graph, task.key.timestep, task.key.point);
  count_task(num_inputs);
}

void set_work_observer(const WorkObserver& observer) { work_observer = observer; }

void set_job_calls(JobCalls* calls) { job_calls = calls; }
JobCalls* simulated_job_calls() { return job_calls; }

void run_task_on_device(taskgrid::TaskContext& ctx) {
  const DecodedTask task = decode_task(ctx);
  switch (taskgrid::device_kind(ctx)) {
    case taskgrid::DeviceKind::emulated:
      run_on_emulated_device(ctx, task);
      return;
    case taskgrid::DeviceKind::cuda:
#ifdef TASKBENCH_HAVE_CUDA
      run_on_cuda_device(ctx, task);
      return;
#else
      task_fatal(task.key,
                 "the rank has a CUDA device, but this Task Bench was built without CUDA (no "
                 "nvcc, or TASKBENCH_CUDA=OFF): rebuild it with CUDA, or run with "
                 "TASKGRID_DEVICE=emulated or -taskgrid:device cpu");
#endif
    case taskgrid::DeviceKind::cpu:
      break;
  }
  task_fatal(task.key, "the device implementation ran on a CPU");
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

Workload::Workload(const BenchConfig& config, const Functions& functions, Owners owners)
    : config_(config), functions_(functions), owners_(owners), ranks_(taskgrid::num_ranks()) {
  // The initial content of a point's handles is never read (timestep 0 has
  // no inputs), so they all share one zeroed host buffer.
  int64_t max_output = 1;
  for (const TaskGraph& g : config_.graphs) max_output = std::max(max_output, g.output_bytes);
  zeros_.assign(static_cast<size_t>(max_output), 0);
  handles_.resize(config_.graphs.size());
  size_t max_accesses = 0;
  for (size_t i = 0; i < config_.graphs.size(); ++i) {
    const TaskGraph& g = config_.graphs[i];
    const size_t bytes = static_cast<size_t>(g.output_bytes);
    for (std::vector<taskgrid::DataHandle>& parity : handles_[i]) {
      parity.reserve(static_cast<size_t>(g.max_width));
      for (int64_t p = 0; p < g.max_width; ++p)
        parity.push_back(
            owners == Owners::block
                ? taskgrid::enter_data(zeros_.data(), bytes, block_owner(p, g.max_width, ranks_))
                : taskgrid::enter_data(zeros_.data(), bytes));
    }
    max_accesses = std::max(max_accesses, static_cast<size_t>(g.max_dependencies()) + 2);
    max_steps_ = std::max(max_steps_, g.timesteps);
  }
  accesses_.reserve(max_accesses);
  producers_.reserve(max_accesses);
  args_.reserve(3 + max_accesses);

  // -broadcast: the content starts on rank 0; another rank's host buffer
  // (spmd mode) is never read, so it is a one-byte placeholder.
  const size_t broadcast_bytes = static_cast<size_t>(config_.broadcast_bytes);
  if (broadcast_bytes != 0) {
    const bool root = taskgrid::rank() == 0;
    broadcast_host_.assign(root ? broadcast_bytes : 1, 0);
    if (root) fill_broadcast(broadcast_host_.data(), broadcast_bytes);
    broadcast_ = owners == Owners::block
                     ? taskgrid::enter_data(broadcast_host_.data(), broadcast_bytes, 0)
                     : taskgrid::enter_data(broadcast_host_.data(), broadcast_bytes);
  }
}

void Workload::submit_pass(Hints hints) {
  if (broadcast_) {
    taskgrid::TaskOptions on_root;
    on_root.rank = 0;
    // No by-value arguments (submit() without any trips GCC -Wmaybe-uninitialized).
    taskgrid::submit_packed(functions_.republish, {taskgrid::inout(broadcast_)}, on_root, nullptr,
                            0);
  }
  for (int64_t t = 0; t < max_steps_; ++t) {
    for (size_t i = 0; i < config_.graphs.size(); ++i) {
      const TaskGraph& g = config_.graphs[i];
      if (t >= g.timesteps) continue;
      const int64_t offset = g.offset_at(t);
      const int64_t end = offset + g.width_at(t);
      for (int64_t p = offset; p < end; ++p) {
        submit_task(i, t, p, hints);
        // In spmd mode (block owners) a task runs on its output's owner and
        // every rank plans it; in cluster mode the head plans every task.
        if (work_observer.task_submitted)
          work_observer.task_submitted(owners_ != Owners::block ||
                                       block_owner(p, g.max_width, ranks_) == taskgrid::rank());
      }
    }
  }
}

void Workload::submit_task(size_t graph_index, int64_t timestep, int64_t point, Hints hints) {
  const TaskGraph& g = config_.graphs[graph_index];
  const GraphHandles& handles = handles_[graph_index];
  const std::vector<taskgrid::DataHandle>& previous =
      handles[static_cast<size_t>((timestep + 1) % 2)];
  const std::vector<taskgrid::DataHandle>& current = handles[static_cast<size_t>(timestep % 2)];
  g.effective_inputs(timestep, point, producers_);
  // Filled by index (no push_back's capacity check per access); sized once
  // for the largest task.
  const size_t inputs = producers_.size();
  const size_t count = inputs + (broadcast_ ? 2 : 1);
  if (accesses_.size() < count) accesses_.resize(count);
  taskgrid::DataAccess* accesses = accesses_.data();
  for (size_t k = 0; k < inputs; ++k)
    accesses[k] = taskgrid::in(previous[static_cast<size_t>(producers_[k])]);
  if (broadcast_) accesses[inputs] = taskgrid::in(broadcast_);
  accesses[count - 1] = taskgrid::out(current[static_cast<size_t>(point)]);
  taskgrid::TaskOptions options;
  if (hints == Hints::block_owner) options.rank = block_owner(point, g.max_width, ranks_);
  // The key, then the producers just wired (see TaskKey).
  if (args_.size() < 3 + inputs) args_.resize(3 + inputs);
  int64_t* args = args_.data();
  args[0] = static_cast<int64_t>(graph_index);
  args[1] = timestep;
  args[2] = point;
  for (size_t k = 0; k < inputs; ++k) args[3 + k] = producers_[k];
  static_assert(sizeof(TaskKey) == 3 * sizeof(int64_t));
  taskgrid::submit_packed(functions_.task, accesses, count, options, args,
                          (3 + inputs) * sizeof(int64_t));
}

void Workload::release() {
  for (GraphHandles& graph : handles_)
    for (std::vector<taskgrid::DataHandle>& parity : graph)
      for (taskgrid::DataHandle h : parity) taskgrid::release(h);
  handles_.clear();
  if (broadcast_) taskgrid::release(broadcast_);
  broadcast_ = {};
}

}  // namespace taskbench::tg
