// The task execution contract of spec section 7.
#include "task_contract.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gpu_shared.h"
#include "kernels.h"

namespace taskbench {
namespace {

constexpr size_t kRecordBytes = 16;

// Publishing each kernel's result keeps its work observable to the optimiser.
thread_local volatile double kernel_result_sink;

[[noreturn]] void default_fatal(const std::string& diagnostic) {
  std::fprintf(stderr, "error: %s\n", diagnostic.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  // _Exit: other worker threads may still run; static destructors must not.
  std::_Exit(1);
}

std::atomic<FatalHandler> fatal_handler{&default_fatal};

std::string task_name(const TaskGraph& g, int64_t timestep, int64_t point) {
  return "graph " + std::to_string(g.graph_index) + ", timestep " + std::to_string(timestep) +
         ", point " + std::to_string(point);
}

}  // namespace

void set_fatal_handler(FatalHandler handler) {
  fatal_handler.store(handler ? handler : &default_fatal);
}

void fatal(const std::string& diagnostic) {
  fatal_handler.load()(diagnostic);
  std::abort();  // a handler that returns breaks the contract
}

void fill_output(char* output, size_t bytes, int64_t timestep, int64_t point) {
  const int64_t record[2] = {timestep, point};
  for (size_t offset = 0; offset + kRecordBytes <= bytes; offset += kRecordBytes)
    std::memcpy(output + offset, record, kRecordBytes);
}

void prepare_scratch(char* scratch, size_t bytes) {
  for (size_t offset = 0; offset + sizeof kScratchMarker <= bytes; offset += sizeof kScratchMarker)
    std::memcpy(scratch + offset, &kScratchMarker, sizeof kScratchMarker);
}

std::string check_input(const TaskGraph& graph, int64_t timestep, int64_t point,
                        size_t input_index, int64_t producer, const InputView& input) {
  // Built only on failure: this runs for every input of every task.
  auto where = [&] {
    return task_name(graph, timestep, point) + ": input " + std::to_string(input_index) +
           " (from point " + std::to_string(producer) + ")";
  };
  if (input.bytes != static_cast<size_t>(graph.output_bytes) || input.bytes < kRecordBytes)
    return where() + " has " + std::to_string(input.bytes) + " bytes, expected " +
           std::to_string(graph.output_bytes);
  const size_t records = input.bytes / kRecordBytes;
  for (size_t r = 0; r < records; ++r) {
    int64_t found[2];
    std::memcpy(found, input.data + r * kRecordBytes, kRecordBytes);
    if (found[0] != timestep - 1 || found[1] != producer)
      return where() + " record " + std::to_string(r) + " of " + std::to_string(records) +
             " holds (timestep " + std::to_string(found[0]) + ", point " +
             std::to_string(found[1]) + "), expected (timestep " + std::to_string(timestep - 1) +
             ", point " + std::to_string(producer) + ")";
  }
  return {};
}

void fill_broadcast(char* data, size_t bytes) {
  const size_t words = bytes / 8;
  for (size_t w = 0; w < words; ++w) {
    const uint64_t value = broadcast_word(w);
    std::memcpy(data + w * 8, &value, 8);
  }
  for (size_t offset = words * 8; offset < bytes; ++offset)
    data[offset] = static_cast<char>(broadcast_tail_byte(offset));
}

std::string check_broadcast(const char* data, size_t bytes) {
  const size_t words = bytes / 8;
  for (size_t w = 0; w < words; ++w) {
    uint64_t value;
    std::memcpy(&value, data + w * 8, 8);
    if (value != broadcast_word(w))
      return "broadcast buffer differs at byte " + std::to_string(w * 8) + " of " +
             std::to_string(bytes);
  }
  for (size_t offset = words * 8; offset < bytes; ++offset) {
    if (static_cast<unsigned char>(data[offset]) != broadcast_tail_byte(offset))
      return "broadcast buffer differs at byte " + std::to_string(offset) + " of " +
             std::to_string(bytes);
  }
  return {};
}

namespace {

// Steps 7.1-7.4, inlined into both callers: a call between them costs the
// serial baseline's hot path ~10% of its instructions per task.
[[gnu::always_inline]] inline void contract_steps(const TaskArgs& args) {
  const TaskGraph& g = *args.graph;
  const int64_t t = args.timestep;
  const int64_t p = args.point;

  // 7.1 argument checks.
  if (t < 0 || t >= g.timesteps || !g.is_active(t, p))
    fatal(task_name(g, t, p) + ": task is not in the graph");
  if (args.output_bytes != static_cast<size_t>(g.output_bytes))
    fatal(task_name(g, t, p) + ": output buffer has " + std::to_string(args.output_bytes) +
          " bytes, expected " + std::to_string(g.output_bytes));
  if (args.scratch_bytes != static_cast<size_t>(g.scratch_bytes))
    fatal(task_name(g, t, p) + ": scratch has " + std::to_string(args.scratch_bytes) +
          " bytes, expected " + std::to_string(g.scratch_bytes));

  // 7.2 input validation against the graph's own dependency list, so a
  // system that wires the wrong producer is caught even if data looks valid.
  thread_local std::vector<int64_t> expected;
  g.effective_inputs(t, p, expected);
  if (args.num_inputs < expected.size())
    fatal(task_name(g, t, p) + ": got " + std::to_string(args.num_inputs) + " inputs, expected " +
          std::to_string(expected.size()));
  for (size_t k = 0; k < expected.size(); ++k) {
    if (args.input_points[k] != expected[k])
      fatal(task_name(g, t, p) + ": input " + std::to_string(k) + " was taken from point " +
            std::to_string(args.input_points[k]) + ", but dependency " + std::to_string(k) +
            " is point " + std::to_string(expected[k]));
    std::string problem = check_input(g, t, p, k, expected[k], args.inputs[k]);
    if (!problem.empty()) fatal(problem);
  }
  if (args.broadcast != nullptr) {
    std::string problem = check_broadcast(args.broadcast, args.broadcast_bytes);
    if (!problem.empty()) fatal(task_name(g, t, p) + ": " + problem);
  }

  // 7.3 output, 7.4 scratch (7.5, the kernel, is execute_task's).
  fill_output(args.output, args.output_bytes, t, p);
  if (args.scratch_bytes != 0) {
    uint64_t marker;
    std::memcpy(&marker, args.scratch, sizeof marker);
    if (marker != kScratchMarker)
      fatal(task_name(g, t, p) + ": scratch memory does not start with the marker");
  }
}

}  // namespace

void execute_contract(const TaskArgs& args) { contract_steps(args); }

double execute_task(const TaskArgs& args) {
  contract_steps(args);
  const double result =
      run_kernel(*args.graph, args.timestep, args.point, args.scratch, args.scratch_bytes);
  kernel_result_sink = result;
  return result;
}

}  // namespace taskbench
