// The task execution contract of spec section 7: argument checks, input
// validation, output generation, scratch validation, kernel. Plus the
// -broadcast buffer pattern (seed 003) that every task verifies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "task_graph.h"

namespace taskbench {

constexpr uint64_t kScratchMarker = 0x5C4A7C8B;

// Where a task reads one input from.
struct InputView {
  const char* data;
  size_t bytes;
};

// Writes floor(bytes/16) records (timestep, point); trailing bytes untouched.
void fill_output(char* output, size_t bytes, int64_t timestep, int64_t point);

// Fills scratch with the marker in every 8-byte word (bytes % 8 == 0).
void prepare_scratch(char* scratch, size_t bytes);

// Checks input `input_index` of task (graph, t, p), which must come from
// producer point `producer`. Returns "" when valid, else a diagnostic naming
// graph, timestep, point, input index, record position, expected and found.
std::string check_input(const TaskGraph& graph, int64_t timestep, int64_t point,
                        size_t input_index, int64_t producer, const InputView& input);

// -broadcast buffer: deterministic content, written once by the root.
void fill_broadcast(char* data, size_t bytes);
// "" when the whole buffer holds the expected content, else a diagnostic.
std::string check_broadcast(const char* data, size_t bytes);

// Everything a task needs to run. `inputs` has one view per effective input
// of (timestep, point) in enumeration order; `input_points` the producers.
struct TaskArgs {
  const TaskGraph* graph;
  int64_t timestep;
  int64_t point;
  char* output;
  size_t output_bytes;
  const InputView* inputs;
  const int64_t* input_points;
  size_t num_inputs;
  char* scratch;  // this task's scratch region (graph.scratch_bytes)
  size_t scratch_bytes;
  const char* broadcast;  // nullptr when -broadcast is not used
  size_t broadcast_bytes;
};

// Called with a complete diagnostic when a task violates the contract. The
// default prints "error: <diagnostic>" to stderr and exits with status 1;
// MPI systems install one that names the rank and calls MPI_Abort. Must not
// return.
using FatalHandler = void (*)(const std::string& diagnostic);
void set_fatal_handler(FatalHandler handler);
[[noreturn]] void fatal(const std::string& diagnostic);

// Runs steps 7.1-7.4 for one task (everything but the kernel); on any
// violation calls fatal(). For systems that run the kernel elsewhere (on a
// GPU: mpi_omp -device gpu).
void execute_contract(const TaskArgs& args);

// Runs steps 7.1-7.5 for one task; on any violation calls fatal().
// Returns the kernel's observable result (callers may ignore it: it is also
// folded into a per-thread sink so the compiler cannot drop the work).
double execute_task(const TaskArgs& args);

}  // namespace taskbench
