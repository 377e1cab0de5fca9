// Configuration block, report lines (spec section 8) and the JSON report.
#include "report.h"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "options.h"

namespace taskbench {
namespace {

// printf into a std::string (the spec's formats are printf formats).
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  char buffer[256];
  const int length = std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return std::string(buffer, static_cast<size_t>(std::max(length, 0)));
}

std::string point_list(const std::vector<int64_t>& points) {
  std::string text;
  for (int64_t p : points) {
    text += ' ';
    text += std::to_string(p);
  }
  return text;
}

void append_timesteps(const TaskGraph& g, int verbosity, std::string& out) {
  std::vector<int64_t> list;
  for (int64_t t = 0; t < g.timesteps; ++t) {
    const int64_t offset = g.offset_at(t), width = g.width_at(t);
    const int64_t last_offset = g.offset_at(t - 1), last_width = g.width_at(t - 1);
    out += format("      Timestep %ld (offset %ld, width %ld, last offset %ld, last width %ld):\n",
                  t, offset, width, last_offset, last_width);
    list.clear();
    for (int64_t p = offset; p < offset + width; ++p) list.push_back(p);
    out += "        Points:" + point_list(list) + "\n";
    out += "        Dependencies:\n";
    for (int64_t p = offset; p < offset + width; ++p) {
      g.effective_inputs(t, p, list);
      out += format("          Point %ld:", p) + point_list(list) + "\n";
    }
    if (verbosity >= 2) {
      out += "        Reverse Dependencies:\n";
      for (int64_t q = last_offset; q < last_offset + last_width; ++q) {
        g.effective_consumers(t - 1, q, list);
        out += format("          Point %ld:", q) + point_list(list) + "\n";
      }
    }
  }
}

struct NodeEstimate {
  int64_t local = 0;
  int64_t nonlocal = 0;
  int64_t local_bytes = 0;
  int64_t nonlocal_bytes = 0;
};

// Spec 8.3: points block-distributed over `nodes`; an edge is local when the
// producer lies in the consumer's block.
NodeEstimate estimate_locality(const BenchConfig& config) {
  NodeEstimate estimate;
  std::vector<int64_t> inputs;
  const int64_t m = config.nodes;
  for (const TaskGraph& g : config.graphs) {
    const int64_t w = g.max_width;
    int64_t local = 0, nonlocal = 0;
    for (int64_t t = 1; t < g.timesteps; ++t) {
      const int64_t offset = g.offset_at(t);
      for (int64_t p = offset; p < offset + g.width_at(t); ++p) {
        const int64_t node = p * m / w;
        const int64_t first = node * w / m, last = (node + 1) * w / m - 1;
        g.effective_inputs(t, p, inputs);
        for (int64_t q : inputs) (q >= first && q <= last ? local : nonlocal) += 1;
      }
    }
    estimate.local += local;
    estimate.nonlocal += nonlocal;
    estimate.local_bytes += local * g.output_bytes;
    estimate.nonlocal_bytes += nonlocal * g.output_bytes;
  }
  return estimate;
}

struct Totals {
  int64_t tasks = 0, dependencies = 0, flops = 0, bytes = 0;
};

Totals totals_of(const BenchConfig& config) {
  Totals totals;
  for (const TaskGraph& g : config.graphs) {
    totals.tasks += g.total_tasks();
    totals.dependencies += g.total_dependencies();
    totals.flops += g.total_flops();
    totals.bytes += g.total_bytes();
  }
  return totals;
}

}  // namespace

std::string configuration_text(const BenchConfig& config) {
  std::string out = "Running Task Benchmark\n  Configuration:\n";
  for (const TaskGraph& g : config.graphs) {
    out += format("    Task Graph %ld:\n", g.graph_index + 1);
    out += format("      Time Steps: %ld\n", g.timesteps);
    out += format("      Max Width: %ld\n", g.max_width);
    out += "      Dependence Type: " + std::string(to_string(g.dependence)) + "\n";
    out += format("      Radix: %ld\n", g.radix);
    out += format("      Period: %ld\n", g.period);
    out += format("      Fraction Connected: %f\n", g.fraction);
    out += "      Kernel:\n";
    out += "        Type: " + std::string(to_string(g.kernel.type)) + "\n";
    out += format("        Iterations: %ld\n", g.kernel.iterations);
    out += format("        Samples: %ld\n", g.kernel.samples);
    out += format("        Imbalance: %f\n", g.kernel.imbalance);
    if (g.kernel.type == KernelType::gpu_compute_bound)
      out += format("        GPU Lanes: %ld\n", g.kernel.gpu_lanes);
    out += format("      Output Bytes: %ld\n", g.output_bytes);
    out += format("      Scratch Bytes: %ld\n", g.scratch_bytes);
    if (config.verbosity >= 1) append_timesteps(g, config.verbosity, out);
  }
  return out;
}

std::string report_text(const BenchConfig& config, double elapsed_seconds) {
  const Totals totals = totals_of(config);
  const bool estimate = config.nodes > 0;
  const NodeEstimate nodes = estimate ? estimate_locality(config) : NodeEstimate{};
  std::string out;
  out += format("Total Tasks %ld\n", totals.tasks);
  out += format("Total Dependencies %ld\n", totals.dependencies);
  if (estimate) {
    out += format("  Local Dependencies %ld (estimated)\n", nodes.local);
    out += format("  Nonlocal Dependencies %ld (estimated)\n", nodes.nonlocal);
    out += format("  Number of Nodes (used for estimate) %ld\n", config.nodes);
  } else {
    out += "  Unable to estimate local/nonlocal dependencies\n";
  }
  out += format("Total FLOPs %ld\n", totals.flops);
  out += format("Total Bytes %ld\n", totals.bytes);
  out += format("Elapsed Time %e seconds\n", elapsed_seconds);
  out += format("FLOP/s %e\n", static_cast<double>(totals.flops) / elapsed_seconds);
  out += format("B/s %e\n", static_cast<double>(totals.bytes) / elapsed_seconds);
  out += "Transfer (estimated):\n";
  if (estimate) {
    out += format("  Local Bytes %ld\n", nodes.local_bytes);
    out += format("  Nonlocal Bytes %ld\n", nodes.nonlocal_bytes);
    out += format("  Local Bandwidth %e B/s\n",
                  static_cast<double>(nodes.local_bytes) / elapsed_seconds);
    out += format("  Nonlocal Bandwidth %e B/s\n",
                  static_cast<double>(nodes.nonlocal_bytes) / elapsed_seconds);
  } else {
    out += "  Unable to estimate local/nonlocal transfer\n";
  }
  return out;
}

std::string check_execution_counts(const BenchConfig& config, const ExecutionCounts& counts) {
  const Totals totals = totals_of(config);
  if (counts.tasks != totals.tasks)
    return "executed " + std::to_string(counts.tasks) + " tasks, but the graphs have " +
           std::to_string(totals.tasks);
  if (counts.inputs != totals.dependencies)
    return "validated " + std::to_string(counts.inputs) + " inputs, but the graphs have " +
           std::to_string(totals.dependencies) + " dependencies";
  return {};
}

void write_json_report(const BenchConfig& config, const RunInfo& info, const std::string& path) {
  const Totals totals = totals_of(config);
  nlohmann::json graphs = nlohmann::json::array();
  for (const TaskGraph& g : config.graphs) {
    graphs.push_back({{"index", g.graph_index},
                      {"timesteps", g.timesteps},
                      {"max_width", g.max_width},
                      {"dependence", std::string(to_string(g.dependence))},
                      {"radix", g.radix},
                      {"period", g.period},
                      {"fraction", g.fraction},
                      {"kernel", std::string(to_string(g.kernel.type))},
                      {"iterations", g.kernel.iterations},
                      {"samples", g.kernel.samples},
                      {"imbalance", g.kernel.imbalance},
                      {"output_bytes", g.output_bytes},
                      {"scratch_bytes", g.scratch_bytes}});
    if (g.kernel.type == KernelType::gpu_compute_bound)
      graphs.back()["gpu_lanes"] = g.kernel.gpu_lanes;
  }
  const double seconds = info.elapsed_seconds;
  const nlohmann::json report = {
      {"system", info.system},
      {"ranks", info.ranks},
      {"threads_per_rank", info.threads_per_rank},
      {"elapsed_seconds", seconds},
      {"total_tasks", totals.tasks},
      {"total_dependencies", totals.dependencies},
      {"total_flops", totals.flops},
      {"total_bytes", totals.bytes},
      {"flops_per_second", seconds > 0 ? static_cast<double>(totals.flops) / seconds : 0.0},
      {"bytes_per_second", seconds > 0 ? static_cast<double>(totals.bytes) / seconds : 0.0},
      {"broadcast_bytes", config.broadcast_bytes},
      {"graphs", graphs}};
  std::ofstream file(path);
  file << report.dump(2) << "\n";
  file.close();
  if (!file) throw std::runtime_error("cannot write the JSON report to \"" + path + "\"");
}

int finish_run(const BenchConfig& config, const RunInfo& info) {
  const std::string problem = check_execution_counts(config, info.counts);
  if (!problem.empty()) {
    print_line("error: " + info.system + ": " + problem);
    return 1;
  }
  std::fputs(report_text(config, info.elapsed_seconds).c_str(), stdout);
  std::fflush(stdout);
  if (!config.json_path.empty()) {
    try {
      write_json_report(config, info, config.json_path);
    } catch (const std::exception& error) {
      print_line(std::string("error: ") + error.what());
      return 1;
    }
  }
  return 0;
}

namespace {
double (*wall_clock_override)() = nullptr;
}  // namespace

void set_wall_clock(double (*clock)()) { wall_clock_override = clock; }

double wall_seconds() {
  if (wall_clock_override) return wall_clock_override();
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

}  // namespace taskbench
