// Command-line parsing and validation of spec section 2.
#include "options.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string_view>
#include <type_traits>

#include "kernels.h"

namespace taskbench {
namespace {

std::string format_real(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%f", value);
  return buffer;
}

[[noreturn]] void invalid(std::string_view flag, const std::string& value, std::string_view rule) {
  std::string message = "Invalid flag \"";
  message.append(flag).append(" ").append(value).append("\"");
  if (!rule.empty()) message.append(" ").append(rule);
  throw UsageError(message);
}

[[noreturn]] void graph_error(const TaskGraph& g, const std::string& what) {
  throw UsageError("Graph type \"" + std::string(to_string(g.dependence)) + "\" " + what);
}

// "2.5 GiB": a size people can compare with their machine's.
std::string format_gib(double bytes) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buffer;
}

// A buffer larger than this machine's memory can never be allocated: saying
// so at start-up, naming the flag, beats a bare std::bad_alloc later.
void check_fits_in_memory(std::string_view flag, int64_t value, const std::string& need) {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return;  // unknown: let the allocation decide
  const double memory = static_cast<double>(pages) * static_cast<double>(page_size);
  if (static_cast<double>(value) <= memory) return;
  throw UsageError("Invalid flag \"" + std::string(flag) + " " + std::to_string(value) + "\": " +
                   need + ", more than this machine's memory (" + format_gib(memory) + ")");
}

bool looks_like_flag(const char* argument) {
  return argument[0] == '-' && argument[1] != '\0' &&
         !std::isdigit(static_cast<unsigned char>(argument[1])) && argument[1] != '.';
}

bool is_memory_kernel(KernelType k) {
  return k == KernelType::memory_bound || k == KernelType::memory_daxpy;
}

// Defaults filled in when a graph is closed (spec 2.3).
void close_graph(TaskGraph& g, bool period_given) {
  if (!period_given) {
    const bool periodic =
        g.dependence == DependenceType::spread || g.dependence == DependenceType::random_nearest;
    g.period = periodic ? 3 : 0;
  }
  if (g.fields == 0) g.fields = g.timesteps;
}

// Spec 2.4 in order, then the configurations that crash the reference.
// `period_given`: -period was on the command line (else g.period is the
// default, and a message must not blame the user's -period).
void validate_graph(const TaskGraph& g, bool period_given) {
  const bool periodic =
      g.dependence == DependenceType::spread || g.dependence == DependenceType::random_nearest;
  if (periodic && g.period == 0)
    graph_error(g, "requires a non-zero period (specify with -period)");
  if (!periodic && g.period != 0) graph_error(g, "does not support user-configurable period");
  if (periodic && g.radix == 0)
    graph_error(g, "requires a radix greater than 0 (the reference divides by it)");
  if (g.dependence == DependenceType::spread) {
    const int64_t max_period = (g.max_width + g.radix - 1) / g.radix;
    if (g.period > max_period && period_given)
      graph_error(g, "requires a period that is at most " + std::to_string(max_period));
    if (g.period > max_period)
      graph_error(g, "requires a period that is at most " + std::to_string(max_period) +
                         " (width " + std::to_string(g.max_width) + ", radix " +
                         std::to_string(g.radix) + "), but no -period was given and the default " +
                         std::to_string(g.period) + " is too large: specify -period 1 to " +
                         std::to_string(max_period));
    if (g.radix > g.max_width)
      graph_error(g, "requires a radix that is at most the width (" + std::to_string(g.max_width) +
                         "), or points would repeat");
  }
  if (g.dependence == DependenceType::random_spread)
    graph_error(g, "is not supported: it defines no dependence sets (the reference crashes on it)");
  if (g.dependence == DependenceType::fft && g.max_width < 2)
    graph_error(g, "requires a width of at least 2");
  if (g.dependence == DependenceType::stencil_1d_periodic && g.max_width < 3)
    graph_error(g, "requires a width of at least 3, or its wrap-around neighbour repeats a point");

  std::string need = "each task's output needs " + std::to_string(g.output_bytes) + " bytes";
  if (int64_t row = 0; !__builtin_mul_overflow(g.output_bytes, g.max_width, &row))
    need += " (" + std::to_string(row) + " for the " + std::to_string(g.max_width) +
            " points of one timestep)";
  check_fits_in_memory("-output", g.output_bytes, need);
  check_fits_in_memory("-scratch", g.scratch_bytes,
                       "each task's scratch needs " + std::to_string(g.scratch_bytes) + " bytes");

  const std::string kernel(to_string(g.kernel.type));
  if (g.scratch_bytes % 8 != 0)
    throw UsageError("Invalid flag \"-scratch " + std::to_string(g.scratch_bytes) +
                     "\" must be a multiple of 8 (the scratch marker is a 64-bit word)");
  if (is_memory_kernel(g.kernel.type) || g.kernel.type == KernelType::compute_dgemm) {
    if (g.scratch_bytes == 0)
      throw UsageError("Kernel \"" + kernel + "\" requires scratch memory (specify with -scratch)");
  }
  if (is_memory_kernel(g.kernel.type) && g.kernel.samples == 0)
    throw UsageError("Kernel \"" + kernel + "\" requires a non-zero -sample");
  // Slices under 16 bytes would let the copy overwrite the scratch marker
  // (and give memory_daxpy empty vectors).
  if (is_memory_kernel(g.kernel.type) && g.scratch_bytes / g.kernel.samples < 16)
    throw UsageError("Kernel \"" + kernel + "\" requires slices of at least 16 bytes (-scratch " +
                     std::to_string(g.scratch_bytes) + " / -sample " +
                     std::to_string(g.kernel.samples) + ")");
  if (g.kernel.type == KernelType::compute_dgemm && g.scratch_bytes < 24)
    throw UsageError("Kernel \"compute_dgemm\" requires -scratch of at least 24 bytes");
}

}  // namespace

template <typename Number>
Number parse_number(std::string_view flag, std::string_view text) {
  constexpr bool integral = std::is_integral_v<Number>;
  std::string_view digits = text;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
  Number value{};
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  std::string problem;
  if (error == std::errc::result_out_of_range)
    problem = integral ? "out of range (a 64-bit integer)" : "out of range (a double)";
  else if (error != std::errc() || end != digits.data() + digits.size())
    problem = integral ? "not an integer" : "not a number";
  if (!problem.empty())
    throw UsageError("Invalid flag \"" + std::string(flag) + " " + std::string(text) +
                     "\": " + problem);
  return value;
}
template int64_t parse_number<int64_t>(std::string_view, std::string_view);
template double parse_number<double>(std::string_view, std::string_view);

BenchConfig parse_options(int argc, const char* const* argv,
                          const std::vector<std::string_view>& own_flags) {
  BenchConfig config;
  TaskGraph graph;
  bool period_given = false;
  std::vector<bool> periods_given;  // per closed graph, for validate_graph
  auto ignore = [&](const char* argument) {
    auto& ignored = config.ignored_arguments;
    if (std::find(ignored.begin(), ignored.end(), argument) == ignored.end())
      ignored.emplace_back(argument);
  };

  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc)
        throw UsageError("Flag \"" + std::string(flag) + "\" requires an argument");
      return argv[++i];
    };
    auto integer = [&]() { return parse_number<int64_t>(flag, value()); };
    auto real = [&]() { return parse_number<double>(flag, value()); };

    if (flag == "-h") {
      config.help = true;
      return config;
    } else if (flag == "-nodes") {
      config.nodes = integer();
      if (config.nodes <= 0) invalid(flag, std::to_string(config.nodes), "must be > 0");
    } else if (flag == "-v") {
      config.verbosity += 1;
    } else if (flag == "-vv") {
      config.verbosity += 2;
    } else if (flag == "-skip-graph-validation") {
      config.skip_graph_validation = true;
    } else if (flag == "-json") {
      config.json_path = value();
    } else if (flag == "-broadcast") {
      config.broadcast_bytes = integer();
      if (config.broadcast_bytes < 0)
        invalid(flag, std::to_string(config.broadcast_bytes), "must be >= 0");
      check_fits_in_memory(flag, config.broadcast_bytes,
                           "the broadcast buffer needs " + std::to_string(config.broadcast_bytes) +
                               " bytes in every process");
    } else if (flag == "-worker") {
      config.workers = integer();
      if (config.workers <= 0) invalid(flag, std::to_string(config.workers), "must be > 0");
    } else if (flag == "-steps") {
      graph.timesteps = integer();
      if (graph.timesteps <= 0) invalid(flag, std::to_string(graph.timesteps), "must be > 0");
    } else if (flag == "-width") {
      graph.max_width = integer();
      if (graph.max_width <= 0) invalid(flag, std::to_string(graph.max_width), "must be > 0");
    } else if (flag == "-type") {
      const char* name = value();
      if (!parse_dependence_type(name, graph.dependence)) invalid(flag, name, "");
    } else if (flag == "-radix") {
      graph.radix = integer();
      if (graph.radix < 0) invalid(flag, std::to_string(graph.radix), "must be >= 0");
    } else if (flag == "-period") {
      graph.period = integer();
      period_given = true;
      if (graph.period < 0) invalid(flag, std::to_string(graph.period), "must be >= 0");
    } else if (flag == "-fraction") {
      graph.fraction = real();
      if (!(graph.fraction >= 0 && graph.fraction <= 1))
        invalid(flag, format_real(graph.fraction), "must be >= 0 and <= 1");
    } else if (flag == "-kernel") {
      const char* name = value();
      if (!parse_kernel_type(name, graph.kernel.type)) invalid(flag, name, "");
    } else if (flag == "-iter") {
      graph.kernel.iterations = integer();
      if (graph.kernel.iterations < 0)
        invalid(flag, std::to_string(graph.kernel.iterations), "must be >= 0");
    } else if (flag == "-gpu-lanes") {
      graph.kernel.gpu_lanes = integer();
      if (graph.kernel.gpu_lanes <= 0)
        invalid(flag, std::to_string(graph.kernel.gpu_lanes), "must be > 0");
    } else if (flag == "-output") {
      graph.output_bytes = integer();
      if (graph.output_bytes < 16)
        invalid(flag, std::to_string(graph.output_bytes), "must be >= 16");
    } else if (flag == "-scratch") {
      graph.scratch_bytes = integer();
      if (graph.scratch_bytes < 0)
        invalid(flag, std::to_string(graph.scratch_bytes), "must be >= 0");
    } else if (flag == "-sample") {
      graph.kernel.samples = integer();
      if (graph.kernel.samples < 0)
        invalid(flag, std::to_string(graph.kernel.samples), "must be >= 0");
    } else if (flag == "-imbalance") {
      graph.kernel.imbalance = real();
      if (!(graph.kernel.imbalance >= 0 && graph.kernel.imbalance <= 2))
        invalid(flag, format_real(graph.kernel.imbalance), "must be >= 0 and <= 2");
    } else if (flag == "-field") {
      graph.fields = integer();
      // The reference's message says "> 1" although 1 is accepted (spec 2.2).
      if (graph.fields < 1) invalid(flag, std::to_string(graph.fields), "must be > 1");
    } else if (flag == "-and") {
      close_graph(graph, period_given);
      config.graphs.push_back(graph);
      periods_given.push_back(period_given);
      graph = TaskGraph{};
      graph.graph_index = static_cast<int64_t>(config.graphs.size());
      period_given = false;
    } else if (std::find(own_flags.begin(), own_flags.end(), flag) != own_flags.end()) {
      if (i + 1 < argc) ++i;  // the system reads (and checks) it and its value
    } else {
      // Ignored (spec 2.1), but collected: flags of other systems pass
      // through, typos get a warning. The value of an unknown flag is
      // its next argument unless that looks like a flag.
      ignore(argv[i]);
      if (looks_like_flag(argv[i]) && i + 1 < argc && !looks_like_flag(argv[i + 1])) ++i;
    }
  }
  close_graph(graph, period_given);
  config.graphs.push_back(graph);
  periods_given.push_back(period_given);
  for (size_t k = 0; k < config.graphs.size(); ++k)
    validate_graph(config.graphs[k], periods_given[k]);
  return config;
}

void check_writable(const std::string& flag, const std::string& path) {
  const auto fail = [&](const char* what) {
    throw UsageError("Invalid flag \"" + flag + " " + path + "\": cannot " + what +
                     " it: " + std::strerror(errno));
  };
  // Opened, not access()ed: only the kernel knows (read-only mounts, root,
  // /proc). An existing file is left as it is; one created here is removed.
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0 && errno != ENOENT) fail("write");
  if (fd < 0) {
    fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) return;  // another rank's check made it meanwhile
    if (fd < 0) fail("create");
    unlink(path.c_str());
  }
  close(fd);
}

void check_kernel_support(const BenchConfig& config) {
  if (blas_available()) return;
  for (const TaskGraph& g : config.graphs) {
    if (g.kernel.type == KernelType::compute_dgemm || g.kernel.type == KernelType::memory_daxpy)
      throw UsageError("Kernel \"" + std::string(to_string(g.kernel.type)) +
                       "\" needs BLAS, and this build has none (No BLAS is detected)");
  }
}

void print_line(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

bool parse_command_line(int argc, const char* const* argv, BenchConfig& config, int& exit_status,
                        bool print, const std::vector<std::string_view>& own_flags) {
  try {
    config = parse_options(argc, argv, own_flags);
    if (config.help) {
      if (print) std::cout << usage_text(argc > 0 ? argv[0] : "taskbench") << std::flush;
      exit_status = 0;
      return false;
    }
    check_kernel_support(config);
    // Checked before the run, not after it: a run of hours must not end
    // unable to write its report.
    if (!config.json_path.empty()) check_writable("-json", config.json_path);
    if (print)
      for (const std::string& argument : config.ignored_arguments)
        print_line(std::string("warning: ignoring ") +
                   (looks_like_flag(argument.c_str()) ? "unknown flag" : "argument") + " \"" +
                   argument + "\"");
    return true;
  } catch (const UsageError& error) {
    if (print) print_line(std::string("error: ") + error.what());
    exit_status = 2;
    return false;
  }
}

std::string parse_choice_flag(int argc, const char* const* argv, const char* flag,
                              std::initializer_list<const char*> choices, size_t& index) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) != 0) continue;
    if (i + 1 >= argc) return std::string("Flag \"") + flag + "\" requires an argument";
    const char* value = argv[++i];
    const auto chosen = std::find_if(choices.begin(), choices.end(),
                                     [&](const char* c) { return std::strcmp(c, value) == 0; });
    if (chosen == choices.end()) {
      std::string allowed;
      for (const char* c : choices) allowed += (allowed.empty() ? "" : " or ") + std::string(c);
      return std::string("Invalid flag \"") + flag + " " + value + "\" must be " + allowed;
    }
    index = static_cast<size_t>(chosen - choices.begin());
  }
  return {};
}

std::string check_gpu_kernel(const BenchConfig& config, const char* flag) {
  for (const TaskGraph& g : config.graphs)
    if (g.kernel.type != KernelType::gpu_compute_bound)
      return std::string(flag) + " gpu runs the gpu_compute_bound kernel only (graph " +
             std::to_string(g.graph_index) + " has kernel \"" +
             std::string(to_string(g.kernel.type)) + "\")";
  return {};
}

std::string usage_text(const std::string& program) {
  return "Usage: " + program + R"( [options] [-and [options]]...

Global options:
  -h                       print this help and exit
  -nodes N                 nodes assumed for the local/nonlocal estimate (> 0)
  -v, -vv                  print each timestep's dependencies (-vv: also reverse)
  -skip-graph-validation   accepted for compatibility (no effect)
  -json FILE               also write the report as JSON to FILE
  -broadcast BYTES         one extra buffer read and verified by every task
  -worker N                worker threads per process (omp, mpi_omp, starpu)

Graph options (each -and starts a new graph from the defaults):
  -steps T (4)  -width W (4)  -type NAME (trivial)  -radix R (3)
  -period P (3 for spread/random_nearest, else 0)  -fraction F (0.25)
  -kernel NAME (empty)  -iter N (0)  -output B (16)  -scratch B (0)
  -sample S (16)  -imbalance X (0)  -field K (T)
  -gpu-lanes L (262144)    lanes (GPU threads) of gpu_compute_bound (> 0)

Types: trivial no_comm stencil_1d stencil_1d_periodic dom tree fft all_to_all
       nearest spread random_nearest
Kernels: empty busy_wait memory_bound compute_dgemm memory_daxpy compute_bound
         compute_bound2 io_bound load_imbalance gpu_compute_bound

gpu_compute_bound: L lanes, each 4 independent chains of x = x*x + x (FP64 FMA)
  for N = -iter iterations: 2 * 4 * L * N FLOPs per task. Systems with a device
  option run it on GPUs; on CPUs every system runs the same arithmetic.
)";
}

}  // namespace taskbench
