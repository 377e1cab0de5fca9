// taskbench-mpi_omp: MPI between ranks, OpenMP inside, in the fork-join
// "forall" style of the papers: per timestep, the messages of that timestep
// complete, then one parallel loop runs the local points, then the master
// sends the outputs. MPI is called from the master thread only (FUNNELED).
//
// -device gpu (built with CUDA, TASKBENCH_HAVE_CUDA): the baseline for GPUs,
// MPI+OpenMP changed only to launch the kernel on a GPU. The loop runs each
// task's contract on the host as with -device cpu, then launches the
// gpu_compute_bound kernel (the only kernel it accepts) on the CUDA stream of
// its OpenMP thread; each thread waits for its stream before the loop ends.
// Each rank uses GPU (node-local rank mod GPUs of the node).
#include <omp.h>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "mpi_exchange.h"

#ifdef TASKBENCH_HAVE_CUDA
#include "gpu/gpu_kernels.h"
#endif

namespace {

using namespace taskbench;
using namespace taskbench::mpi;

constexpr const char* kDeviceFlag = "-device";

class MpiOmpSystem final : public System {
 public:
  ~MpiOmpSystem() override {
#ifdef TASKBENCH_HAVE_CUDA
    for (void* stream : streams_) gpu::destroy_stream(stream);
#endif
  }

  std::string parse_flags(int argc, const char* const* argv, const BenchConfig& config) override {
    size_t index = 0;
    std::string problem = parse_choice_flag(argc, argv, kDeviceFlag, {"cpu", "gpu"}, index);
    if (!problem.empty()) return problem;
    gpu_ = index == 1;
    if (!gpu_) return {};
#ifndef TASKBENCH_HAVE_CUDA
    (void)config;
    return "taskbench-mpi_omp was built without CUDA (no nvcc, or TASKBENCH_CUDA=OFF): "
           "-device gpu is not available";
#else
    return check_gpu_kernel(config, kDeviceFlag);
#endif
  }

  std::vector<std::string_view> own_flags() const override { return {kDeviceFlag}; }

  const char* help_text() const override {
    return "\nMPI+OpenMP options:\n"
           "  -device cpu|gpu          cpu (default): kernels run on the OpenMP threads\n"
           "                           gpu: gpu_compute_bound runs on a CUDA GPU, launched by\n"
           "                           each OpenMP thread on its own stream\n";
  }

  int prepare(const BenchConfig& config, size_t max_inputs) override {
    const int requested =
        config.workers > 0 ? static_cast<int>(config.workers) : omp_get_max_threads();
    // The team the runtime actually grants (it may give fewer, e.g. with
    // OMP_DYNAMIC); later regions with the same request get the same size.
    int granted = 1;
#pragma omp parallel num_threads(requested)
    {
#pragma omp single
      granted = omp_get_num_threads();
    }
    threads_ = requested;
    const size_t slots = static_cast<size_t>(std::max(requested, granted));
    scratch_.assign(slots, TaskScratch(max_inputs));
    if (gpu_) prepare_gpu(slots);
    return granted;
  }

  void run_graph(GraphExchange& graph, const BroadcastView& broadcast,
                 ExecutionCounts& counts) override {
    const int64_t timesteps = graph.graph().timesteps;
    Step current;
    Step next = graph.step(0);
    for (int64_t t = 0; t < timesteps; ++t) {
      const bool has_next = graph.begin_timestep(t, current, next);

      int64_t tasks = 0;
      int64_t inputs = 0;
      if (gpu_) {
        run_step_on_gpu(graph, current, broadcast, tasks, inputs);
      } else {
#pragma omp parallel for num_threads(threads_) schedule(static) reduction(+ : tasks, inputs)
        for (int64_t p = current.local_first; p < current.local_end; ++p) {
          TaskScratch& scratch = scratch_[static_cast<size_t>(omp_get_thread_num())];
          const TaskArgs args = graph.task_args(current, p, scratch, broadcast);
          execute_task(args);
          tasks += 1;
          inputs += static_cast<int64_t>(args.num_inputs);
        }
      }
      counts.tasks += tasks;
      counts.inputs += inputs;

      if (has_next)
        for (int64_t p = current.local_first; p < current.local_end; ++p)
          graph.send_output(next, p);
    }
    graph.wait_all_sends();
  }

 private:
#ifdef TASKBENCH_HAVE_CUDA
  static void check(const std::string& problem) {
    if (!problem.empty()) fatal(problem);
  }

  // One GPU per rank (node-local rank mod the node's GPUs), one stream per
  // OpenMP thread. No usable GPU ends the job naming CUDA's error.
  void prepare_gpu(size_t slots) {
    std::string error;
    const int devices = gpu::device_count(error);
    if (devices < 0)
      fatal("-device gpu: no usable CUDA device (cudaGetDeviceCount: " + error + ")");
    if (devices == 0) fatal("-device gpu: no usable CUDA device (cudaGetDeviceCount found none)");
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int local_rank = 0;
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    device_ = local_rank % devices;
    check(gpu::set_device(device_));
    streams_.assign(slots, nullptr);
    for (void*& stream : streams_) check(gpu::create_stream(stream));
  }

  void run_step_on_gpu(GraphExchange& graph, const Step& current, const BroadcastView& broadcast,
                       int64_t& tasks, int64_t& inputs) {
    const KernelConfig& kernel = graph.graph().kernel;
#pragma omp parallel num_threads(threads_) reduction(+ : tasks, inputs)
    {
      const auto thread = static_cast<size_t>(omp_get_thread_num());
      TaskScratch& scratch = scratch_[thread];
      void* stream = streams_[thread];
      check(gpu::set_device(device_));  // the calling thread's current device
#pragma omp for schedule(static)
      for (int64_t p = current.local_first; p < current.local_end; ++p) {
        const TaskArgs args = graph.task_args(current, p, scratch, broadcast);
        execute_contract(args);
        try {
          gpu::launch_compute_bound(stream, kernel.gpu_lanes, kernel.iterations);
        } catch (const std::exception& error) {
          fatal(error.what());
        }
        tasks += 1;
        inputs += static_cast<int64_t>(args.num_inputs);
      }
      check(gpu::synchronize_stream(stream));
    }
  }

  int device_ = 0;
  std::vector<void*> streams_;  // one per thread
#else
  void prepare_gpu(size_t) { fatal("taskbench-mpi_omp was built without CUDA"); }
  void run_step_on_gpu(GraphExchange&, const Step&, const BroadcastView&, int64_t&, int64_t&) {
    fatal("taskbench-mpi_omp was built without CUDA");
  }
#endif

  bool gpu_ = false;
  int threads_ = 1;
  std::vector<TaskScratch> scratch_;  // one per thread
};

}  // namespace

int main(int argc, char** argv) {
  MpiOmpSystem system;
  return run_system(argc, argv, "mpi_omp", MPI_THREAD_FUNNELED, system);
}
