// Command line of Task Bench (spec section 2) plus TaskGrid's additions
// (-json FILE, -broadcast BYTES, -worker N). Unknown arguments are ignored,
// as the spec requires, so each system may read its own flags from argv and
// flags meant for other systems may pass through; they are collected so that
// parse_command_line can warn about them (a typo would otherwise go unseen).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "task_graph.h"

namespace taskbench {

// A bad flag or an unsupported configuration. what() is the message without
// the "error: " prefix, e.g. `Invalid flag "-steps 0" must be > 0`.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BenchConfig {
  std::vector<TaskGraph> graphs;
  int64_t nodes = 0;  // -nodes, 0 = no estimate
  int verbosity = 0;  // -v adds 1, -vv adds 2
  bool skip_graph_validation = false;
  bool help = false;            // -h was given: print usage, exit 0
  std::string json_path;        // -json FILE ("" = none)
  int64_t broadcast_bytes = 0;  // -broadcast BYTES (0 = no broadcast buffer)
  int64_t workers = 0;          // -worker N (0 = system default)
  // Arguments neither Task Bench nor the system reads, once each, in order:
  // unknown flags (an unknown flag's non-flag value is taken as its own) and
  // stray words.
  std::vector<std::string> ignored_arguments;
};

// The value of a numeric flag: the whole text must be a decimal number that
// fits the type (int64_t or double), else a UsageError names the flag and the
// text, e.g. `Invalid flag "-width abc": not an integer`.
template <typename Number>
Number parse_number(std::string_view flag, std::string_view text);
extern template int64_t parse_number<int64_t>(std::string_view, std::string_view);
extern template double parse_number<double>(std::string_view, std::string_view);

// Parses argv (argv[0] is the program name) and validates every graph
// (spec 2.4 and the crash cases of 2.4's table). `own_flags` are the
// system's own flags, each taking one value: skipped, not reported as
// ignored. Throws UsageError.
BenchConfig parse_options(int argc, const char* const* argv,
                          const std::vector<std::string_view>& own_flags = {});

// Throws UsageError naming `flag`, `path` and the OS error unless the file
// can be opened for writing (an existing one is left unchanged; one created
// by the check is removed). Every rank may check the same path.
void check_writable(const std::string& flag, const std::string& path);

// Writes `line` and a newline to stderr in one call (one write, as every
// fprintf to stderr in Task Bench): under mpirun.openmpi the launcher's own
// messages can land between the writes of a line.
void print_line(const std::string& line);

// The common start of every system: parses argv, checks kernel support and
// that the -json file can be written. On a usage error prints
// "error: <message>" to stderr (when `print`), on -h prints the usage to
// stdout (when `print`); then returns false and sets `exit_status` (2 for
// errors, 0 for -h). On success prints "warning: ..." for each ignored
// argument (when `print`). MPI systems pass print = rank 0.
bool parse_command_line(int argc, const char* const* argv, BenchConfig& config, int& exit_status,
                        bool print = true, const std::vector<std::string_view>& own_flags = {});

// Reads a system's own flag `flag VALUE` (last one wins) whose value must be
// one of `choices`; sets `index` to the chosen one (untouched when absent).
// Returns "" or the message of a usage error (without the "error: " prefix),
// e.g. `Invalid flag "-device tpu" must be cpu or gpu`.
std::string parse_choice_flag(int argc, const char* const* argv, const char* flag,
                              std::initializer_list<const char*> choices, size_t& index);

// "" when every graph of `config` runs gpu_compute_bound, else the usage error
// of a system's GPU flag `flag` (e.g. "-device") naming the first graph that
// does not.
std::string check_gpu_kernel(const BenchConfig& config, const char* flag);

// Usage summary printed for -h.
std::string usage_text(const std::string& program);

// Rejections that depend on how the system was built (no BLAS for
// compute_dgemm / memory_daxpy). Throws UsageError.
void check_kernel_support(const BenchConfig& config);

}  // namespace taskbench
