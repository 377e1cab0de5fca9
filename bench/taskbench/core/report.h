// Output of spec section 8: the configuration block, the report lines the
// public analysis scripts parse, and the machine-readable -json file.
#pragma once

#include <cstdint>
#include <string>

#include "options.h"

namespace taskbench {

// What one process executed in one timed pass; systems sum it over ranks.
struct ExecutionCounts {
  int64_t tasks = 0;   // tasks run
  int64_t inputs = 0;  // input buffers validated
};

// How a system ran, for the report and the JSON file.
struct RunInfo {
  std::string system;        // "serial", "omp", "mpi", ...
  int ranks = 1;             // MPI processes
  int threads_per_rank = 1;  // worker threads per process
  double elapsed_seconds = 0;
  ExecutionCounts counts;  // summed over all ranks, timed pass only
};

// The configuration block of 8.1 (plus the -v / -vv timestep listing).
std::string configuration_text(const BenchConfig& config);

// The report of 8.2 (totals, elapsed, rates, node estimate).
std::string report_text(const BenchConfig& config, double elapsed_seconds);

// "" when the executed counts match the graph totals, else a message naming
// the mismatch. Guards against a system that silently skips tasks.
std::string check_execution_counts(const BenchConfig& config, const ExecutionCounts& counts);

// Writes the figures of report_text() plus the run description as JSON.
// Throws std::runtime_error when the file cannot be written.
void write_json_report(const BenchConfig& config, const RunInfo& info, const std::string& path);

// The common end of every system, called on one process only (rank 0):
// checks counts, prints the report and writes -json. Returns the exit status
// (0, or 1 after printing "error: ..." to stderr).
int finish_run(const BenchConfig& config, const RunInfo& info);

// Monotonic wall clock in seconds (for single-process systems).
double wall_seconds();
// Makes wall_seconds() read `clock` (a simulator's time; nullptr: the steady
// clock again).
void set_wall_clock(double (*clock)());

}  // namespace taskbench
