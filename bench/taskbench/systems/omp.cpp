// taskbench-omp: one process, OpenMP tasks with depend clauses (-worker N
// threads). One thread creates every task of every graph, timestep by
// timestep, and the OpenMP runtime orders them by their data dependencies.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/options.h"
#include "core/report.h"
#include "core/task_contract.h"

namespace {

using namespace taskbench;

// Rotating output rows cost rows * width * output bytes; past this we use
// fewer rows (the extra write-after-read edges keep the result the same).
constexpr size_t kMaxOutputMemory = size_t{1} << 30;

struct GraphBuffers {
  const TaskGraph* graph;
  int64_t rows;  // output rows rotated through: -field K, memory permitting
  std::vector<char> outputs;
  std::vector<char> scratch;

  explicit GraphBuffers(const TaskGraph& g) : graph(&g) {
    const size_t row_bytes = static_cast<size_t>(g.max_width * g.output_bytes);
    const auto affordable = static_cast<int64_t>(kMaxOutputMemory / row_bytes);
    rows = std::max<int64_t>(2, std::min(g.fields, affordable));
    outputs.assign(static_cast<size_t>(rows) * row_bytes, 0);
    scratch.resize(static_cast<size_t>(g.max_width * g.scratch_bytes));
    prepare_scratch(scratch.data(), scratch.size());
  }

  char* output(int64_t timestep, int64_t point) {
    return outputs.data() + ((timestep % rows) * graph->max_width + point) * graph->output_bytes;
  }
  char* scratch_of(int64_t point) { return scratch.data() + point * graph->scratch_bytes; }
};

// Per-thread counters, padded so that threads do not share cache lines.
struct alignas(64) ThreadCounts {
  ExecutionCounts counts;
};

void run_task(GraphBuffers& buffers, int64_t t, int64_t p, const std::vector<char>& broadcast,
              ThreadCounts& mine) {
  const TaskGraph& g = *buffers.graph;
  thread_local std::vector<int64_t> input_points;
  thread_local std::vector<InputView> inputs;
  g.effective_inputs(t, p, input_points);
  inputs.clear();
  for (int64_t q : input_points)
    inputs.push_back({buffers.output(t - 1, q), static_cast<size_t>(g.output_bytes)});
  const TaskArgs args{&g,
                      t,
                      p,
                      buffers.output(t, p),
                      static_cast<size_t>(g.output_bytes),
                      inputs.data(),
                      input_points.data(),
                      inputs.size(),
                      buffers.scratch_of(p),
                      static_cast<size_t>(g.scratch_bytes),
                      broadcast.empty() ? nullptr : broadcast.data(),
                      broadcast.size()};
  execute_task(args);
  mine.counts.tasks += 1;
  mine.counts.inputs += static_cast<int64_t>(inputs.size());
}

// Creates every task of every graph; graphs interleave timestep by timestep
// so independent graphs run concurrently.
void create_tasks(std::vector<GraphBuffers>& all, const std::vector<char>& broadcast,
                  std::vector<ThreadCounts>& counts) {
  int64_t max_steps = 0;
  for (const GraphBuffers& b : all) max_steps = std::max(max_steps, b.graph->timesteps);
  std::vector<int64_t> producers;
  std::vector<char*> input_addresses;
  for (int64_t t = 0; t < max_steps; ++t) {
    for (GraphBuffers& buffers : all) {
      const TaskGraph& g = *buffers.graph;
      if (t >= g.timesteps) continue;
      const int64_t offset = g.offset_at(t);
      for (int64_t p = offset; p < offset + g.width_at(t); ++p) {
        g.effective_inputs(t, p, producers);
        input_addresses.clear();
        for (int64_t q : producers) input_addresses.push_back(buffers.output(t - 1, q));
        char** in = input_addresses.data();
        const int n = static_cast<int>(input_addresses.size());
        char* out = buffers.output(t, p);
        // Same-point tasks share a scratch region; order them when it is used.
        char* scratch = g.scratch_bytes > 0 ? buffers.scratch_of(p) : out;
        GraphBuffers* target = &buffers;
        const std::vector<char>* shared_broadcast = &broadcast;
        std::vector<ThreadCounts>* thread_counts = &counts;
#pragma omp task default(none) firstprivate(target, t, p, shared_broadcast, thread_counts) \
    depend(iterator(k = 0                                                                  \
                    : n),                                                                  \
           in                                                                              \
           : *in[k]) depend(out                                                            \
                            : *out) depend(inout                                           \
                                           : *scratch)
        run_task(*target, t, p, *shared_broadcast,
                 (*thread_counts)[static_cast<size_t>(omp_get_thread_num())]);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  BenchConfig config;
  int exit_status = 0;
  if (!parse_command_line(argc, argv, config, exit_status)) return exit_status;
  const int workers = config.workers > 0 ? static_cast<int>(config.workers) : omp_get_max_threads();
  std::fputs(configuration_text(config).c_str(), stdout);

  std::vector<GraphBuffers> graphs;
  graphs.reserve(config.graphs.size());
  for (const TaskGraph& g : config.graphs) graphs.emplace_back(g);
  std::vector<char> broadcast(static_cast<size_t>(config.broadcast_bytes));
  fill_broadcast(broadcast.data(), broadcast.size());

  // Warm-up pass then timed pass, inside one parallel region: the team's
  // start-up is not timed (the reference OpenMP times it; we state this).
  RunInfo info{"omp", 1, workers, 0.0, {}};
  std::vector<ThreadCounts> counts(static_cast<size_t>(workers));
#pragma omp parallel num_threads(workers) default(none) shared(graphs, broadcast, counts, info)
#pragma omp single
  {
    for (int pass = 0; pass < 2; ++pass) {
      std::fill(counts.begin(), counts.end(), ThreadCounts{});
      const double start = wall_seconds();
      create_tasks(graphs, broadcast, counts);
#pragma omp taskwait
      info.elapsed_seconds = wall_seconds() - start;
    }
  }
  for (const ThreadCounts& c : counts) {
    info.counts.tasks += c.counts.tasks;
    info.counts.inputs += c.counts.inputs;
  }
  return finish_run(config, info);
}
