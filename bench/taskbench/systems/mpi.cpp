// taskbench-mpi: one rank per core, non-blocking point-to-point. The baseline
// every TaskGrid figure is measured against, so it is kept as lean as a
// hand-written MPI code: plans are precomputed, receives are posted one
// timestep ahead, outputs go out zero-copy as soon as each task finishes, and
// no barrier separates timesteps.
#include "mpi_exchange.h"

#ifdef TASKBENCH_SMPI
// Built with smpicxx for SimGrid's SMPI (bench/sim/): the kernel runs for
// real but SMPI charges no computation (smpi/simulate-computation:no), so
// its FLOPs are charged here at the simulated core's speed.
#include <smpi/smpi.h>

#include <cstdio>
#include <cstdlib>

#include "simulated_flops.h"

namespace {
void charge_simulated(const taskbench::TaskGraph& graph, int64_t timestep, int64_t point) {
  const double flops = taskbench::sim::simulated_flops(graph, timestep, point);
  if (flops < 0) {
    std::fprintf(stderr, "error: SMPI: the cost model has no FLOP count for this kernel\n");
    std::exit(2);
  }
  if (flops > 0) smpi_execute_flops_benched(flops);
}
}  // namespace
#endif

namespace {

using namespace taskbench;
using namespace taskbench::mpi;

class MpiSystem final : public System {
 public:
  int prepare(const BenchConfig&, size_t max_inputs) override {
    scratch_ = TaskScratch(max_inputs);
    return 1;
  }

  void run_graph(GraphExchange& graph, const BroadcastView& broadcast,
                 ExecutionCounts& counts) override {
    const int64_t timesteps = graph.graph().timesteps;
    Step current;
    Step next = graph.step(0);
    for (int64_t t = 0; t < timesteps; ++t) {
      const bool has_next = graph.begin_timestep(t, current, next);
      for (int64_t p = current.local_first; p < current.local_end; ++p) {
        const TaskArgs args = graph.task_args(current, p, scratch_, broadcast);
        execute_task(args);
#ifdef TASKBENCH_SMPI
        charge_simulated(graph.graph(), t, p);
#endif
        counts.tasks += 1;
        counts.inputs += static_cast<int64_t>(args.num_inputs);
        if (has_next) graph.send_output(next, p);
      }
    }
    graph.wait_all_sends();
  }

 private:
  TaskScratch scratch_;
};

}  // namespace

int main(int argc, char** argv) {
  MpiSystem system;
  return run_system(argc, argv, "mpi", MPI_THREAD_SINGLE, system);
}
