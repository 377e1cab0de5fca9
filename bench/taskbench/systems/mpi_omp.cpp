// taskbench-mpi_omp: MPI between ranks, OpenMP inside, in the fork-join
// "forall" style of the papers: per timestep, the messages of that timestep
// complete, then one parallel loop runs the local points, then the master
// sends the outputs. MPI is called from the master thread only (FUNNELED).
#include <omp.h>

#include <algorithm>
#include <vector>

#include "mpi_exchange.h"

namespace {

using namespace taskbench;
using namespace taskbench::mpi;

class MpiOmpSystem final : public System {
 public:
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
    scratch_.assign(static_cast<size_t>(std::max(requested, granted)), TaskScratch(max_inputs));
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
#pragma omp parallel for num_threads(threads_) schedule(static) reduction(+ : tasks, inputs)
      for (int64_t p = current.local_first; p < current.local_end; ++p) {
        TaskScratch& scratch = scratch_[static_cast<size_t>(omp_get_thread_num())];
        const TaskArgs args = graph.task_args(current, p, scratch, broadcast);
        execute_task(args);
        tasks += 1;
        inputs += static_cast<int64_t>(args.num_inputs);
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
  int threads_ = 1;
  std::vector<TaskScratch> scratch_;  // one per thread
};

}  // namespace

int main(int argc, char** argv) {
  MpiOmpSystem system;
  return run_system(argc, argv, "mpi_omp", MPI_THREAD_FUNNELED, system);
}
