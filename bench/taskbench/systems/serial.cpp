// taskbench-serial: one process, one thread, tasks in timestep order. The
// reference for correctness that every other system is compared against.
#include <cstdio>
#include <vector>

#include "core/options.h"
#include "core/report.h"
#include "core/task_contract.h"

namespace {

using namespace taskbench;

// Buffers of one graph: two output rows (t and t-1) and a scratch region per
// point, allocated once before timing.
struct GraphState {
  const TaskGraph* graph;
  std::vector<char> outputs[2];
  std::vector<char> scratch;
  std::vector<int64_t> input_points;
  std::vector<InputView> inputs;

  explicit GraphState(const TaskGraph& g) : graph(&g) {
    const size_t width = static_cast<size_t>(g.max_width);
    for (auto& row : outputs) row.assign(width * static_cast<size_t>(g.output_bytes), 0);
    scratch.resize(width * static_cast<size_t>(g.scratch_bytes));
    prepare_scratch(scratch.data(), scratch.size());
    input_points.reserve(static_cast<size_t>(g.max_dependencies()));
    inputs.reserve(input_points.capacity());
  }

  char* output(int64_t timestep, int64_t point) {
    return outputs[timestep % 2].data() + point * graph->output_bytes;
  }

  void run(ExecutionCounts& counts, const std::vector<char>& broadcast) {
    const TaskGraph& g = *graph;
    for (int64_t t = 0; t < g.timesteps; ++t) {
      const int64_t offset = g.offset_at(t);
      for (int64_t p = offset; p < offset + g.width_at(t); ++p) {
        g.effective_inputs(t, p, input_points);
        inputs.clear();
        for (int64_t q : input_points)
          inputs.push_back({output(t - 1, q), static_cast<size_t>(g.output_bytes)});
        const TaskArgs args{&g,
                            t,
                            p,
                            output(t, p),
                            static_cast<size_t>(g.output_bytes),
                            inputs.data(),
                            input_points.data(),
                            inputs.size(),
                            scratch.data() + p * g.scratch_bytes,
                            static_cast<size_t>(g.scratch_bytes),
                            broadcast.empty() ? nullptr : broadcast.data(),
                            broadcast.size()};
        execute_task(args);
        counts.tasks += 1;
        counts.inputs += static_cast<int64_t>(inputs.size());
      }
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  BenchConfig config;
  int exit_status = 0;
  if (!parse_command_line(argc, argv, config, exit_status)) return exit_status;
  std::fputs(configuration_text(config).c_str(), stdout);

  std::vector<GraphState> states;
  states.reserve(config.graphs.size());
  for (const TaskGraph& g : config.graphs) states.emplace_back(g);
  std::vector<char> broadcast(static_cast<size_t>(config.broadcast_bytes));
  fill_broadcast(broadcast.data(), broadcast.size());

  // One untimed warm-up pass, then the timed pass (spec 8.4 convention).
  RunInfo info{"serial", 1, 1, 0.0, {}};
  for (int pass = 0; pass < 2; ++pass) {
    ExecutionCounts counts;
    const double start = wall_seconds();
    for (GraphState& state : states) state.run(counts, broadcast);
    info.elapsed_seconds = wall_seconds() - start;
    info.counts = counts;
  }
  return finish_run(config, info);
}
