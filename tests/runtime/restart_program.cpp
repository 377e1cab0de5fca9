// The checkpoint/restart tests' program (taskgrid-restart-program): a ring
// of blocks updated step by step, whose path depends on what it fetches, so
// that a restart that replays a fetch wrongly takes another path and shows.
//
//   taskgrid-restart-program [--blocks N] [--words W] [--steps S] [--observe K]
//                            [--work-us U]
//
// Each step updates every block from itself and its right neighbour (integer
// arithmetic: the result does not depend on placement), with a coefficient
// that the last observation gave. Every K steps the program fetches block 0
// (to every rank in spmd mode), prints "observe S D" (D: the block's digest)
// and takes D as the next coefficient; once it waits for all tasks. At the
// end it prints "block I D" for every block, and "done". Runs in cluster or
// spmd mode (TASKGRID_MODE). --work-us makes each task spin that long, so
// that a test can stop a rank in the middle of the run.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <taskgrid/taskgrid.hpp>
#include <vector>

#include "program_args.h"

namespace {

uint64_t digest(const uint64_t* words, size_t count) {
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < count; ++i) hash = (hash ^ words[i]) * 1099511628211ull;
  return hash;
}

struct StepArgs {
  uint64_t coefficient;
  uint64_t step;
  uint64_t work_us;
};

void update(taskgrid::TaskContext& ctx) {
  const auto args = ctx.arg<StepArgs>();
  auto* own = ctx.data_as<uint64_t>(0);
  const auto* right = ctx.data_as<const uint64_t>(1);
  const size_t words = ctx.size(0) / sizeof(uint64_t);
  for (size_t k = 0; k < words; ++k)
    own[k] = own[k] * 6364136223846793005ull + (right[k] ^ args.coefficient) + args.step + k;
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(args.work_us);
  while (std::chrono::steady_clock::now() < until) {
  }
}
TASKGRID_REGISTER(update);

int program(int argc, char** argv) {
  uint64_t blocks = 6, words = 64, steps = 200, observe = 10, work_us = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    uint64_t* target = flag == "--blocks"    ? &blocks
                       : flag == "--words"   ? &words
                       : flag == "--steps"   ? &steps
                       : flag == "--observe" ? &observe
                       : flag == "--work-us" ? &work_us
                                             : nullptr;
    std::string problem;
    if (!target || i + 1 >= argc) {
      std::fprintf(stderr, "taskgrid-restart-program: unknown flag or missing value: %s\n",
                   argv[i]);
      return 2;
    }
    const auto value =
        taskgrid::testing::parse_whole_number(argv[++i], flag, 1, uint64_t{1} << 30, problem);
    if (!value) {
      std::fprintf(stderr, "taskgrid-restart-program: %s\n", problem.c_str());
      return 2;
    }
    *target = *value;
  }
  const bool spmd = taskgrid::is_spmd();
  const bool prints = taskgrid::rank() == 0;
  std::vector<std::vector<uint64_t>> data(blocks, std::vector<uint64_t>(words));
  std::vector<taskgrid::DataHandle> handles;
  for (uint64_t b = 0; b < blocks; ++b) {
    for (uint64_t k = 0; k < words; ++k) data[b][k] = b * 1000003 + k;
    handles.push_back(taskgrid::enter_data(data[b].data(), words * sizeof(uint64_t)));
  }
  uint64_t coefficient = 1;
  for (uint64_t step = 1; step <= steps; ++step) {
    for (uint64_t b = 0; b < blocks; ++b)
      taskgrid::submit(update,
                       {taskgrid::inout(handles[b]), taskgrid::in(handles[(b + 1) % blocks])},
                       StepArgs{coefficient, step, work_us});
    if (step == steps / 2) taskgrid::wait_all();
    if (step % observe == 0) {
      if (spmd)
        taskgrid::fetch(handles[0], taskgrid::all_ranks);
      else
        taskgrid::fetch(handles[0]);
      coefficient = digest(data[0].data(), words);
      if (prints)
        std::printf("observe %llu %016llx\n", static_cast<unsigned long long>(step),
                    static_cast<unsigned long long>(coefficient));
    }
  }
  for (uint64_t b = 0; b < blocks; ++b) {
    if (spmd)
      taskgrid::exit_data(handles[b], 0);
    else
      taskgrid::exit_data(handles[b]);
    if (prints)
      std::printf("block %llu %016llx\n", static_cast<unsigned long long>(b),
                  static_cast<unsigned long long>(digest(data[b].data(), words)));
  }
  if (prints) std::printf("done\n");
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  taskgrid::RunOptions options;
  options.mode = taskgrid::Mode::from_environment;
  return taskgrid::run(argc, argv, program, options);
}
