// taskbench-peak: the fixed peak for METG efficiency (spec section 9). Runs
// one kernel on C threads at once and reports the machine's FLOP/s.
//   taskbench-peak -kernel compute_bound -iter N -threads C [-json FILE]
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "core/kernels.h"
#include "core/options.h"
#include "core/report.h"

using namespace taskbench;

namespace {
// Every kernel result goes here: a result nobody reads lets the compiler drop
// the kernel (link-time optimisation inlines run_kernel into this file).
thread_local volatile double g_result_sink;
}  // namespace

int main(int argc, char** argv) {
  BenchConfig config;
  int exit_status = 0;
  if (!parse_command_line(argc, argv, config, exit_status, true, {"-threads"})) return exit_status;
  int64_t requested = config.workers > 0 ? config.workers : omp_get_max_threads();
  try {
    for (int i = 1; i + 1 < argc; ++i)
      if (std::strcmp(argv[i], "-threads") == 0)
        requested = parse_number<int64_t>("-threads", argv[i + 1]);
  } catch (const UsageError& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 2;
  }
  const TaskGraph& g = config.graphs.front();
  if (requested < 1 || requested > 1 << 20) {
    std::fprintf(stderr, "error: -threads must be > 0 and <= 1048576\n");
    return 2;
  }
  const int threads = static_cast<int>(requested);
  if (g.kernel.type != KernelType::compute_bound && g.kernel.type != KernelType::compute_bound2 &&
      g.kernel.type != KernelType::busy_wait) {
    std::fprintf(stderr,
                 "error: taskbench-peak supports compute_bound, compute_bound2, busy_wait\n");
    return 2;
  }

  // Enough calls per thread for about half a second of work.
  const double one = [&] {
    const double start = wall_seconds();
    g_result_sink = run_kernel(g, 0, 0, nullptr, 0);
    return std::max(wall_seconds() - start, 1e-7);
  }();
  const auto calls = static_cast<int64_t>(std::max(1.0, 0.5 / one));
  double elapsed = 0;
#pragma omp parallel num_threads(threads) default(none) shared(g, calls, elapsed)
  {
#pragma omp barrier
    const double start = wall_seconds();
    for (int64_t c = 0; c < calls; ++c) g_result_sink = run_kernel(g, 0, 0, nullptr, 0);
#pragma omp barrier
#pragma omp single
    elapsed = wall_seconds() - start;
  }
  const double flops =
      static_cast<double>(g.task_flops(0, 0)) * static_cast<double>(calls) * threads;
  const double rate = flops / elapsed;
  std::printf("Kernel %s, %ld iterations, %d threads, %ld calls each: %e FLOP/s in %f s\n",
              std::string(to_string(g.kernel.type)).c_str(), g.kernel.iterations, threads, calls,
              rate, elapsed);
  if (!config.json_path.empty()) {
    std::ofstream out(config.json_path);
    out << "{\"kernel\": \"" << to_string(g.kernel.type) << "\", \"threads\": " << threads
        << ", \"iterations\": " << g.kernel.iterations << ", \"calls_per_thread\": " << calls
        << ", \"flops_per_second\": " << rate << ", \"seconds\": " << elapsed << "}\n";
    if (!out) {
      std::fprintf(stderr, "error: cannot write %s\n", config.json_path.c_str());
      return 1;
    }
  }
  return 0;
}
