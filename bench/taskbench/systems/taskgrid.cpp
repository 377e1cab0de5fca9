// taskbench-taskgrid: Task Bench on the TaskGrid runtime (cluster mode).
//
// Every rank parses the command line before taskgrid::start(), so all ranks
// hold the same configuration (the task function reads it through
// tg::config()). Ranks > 0 then serve inside start(); rank 0 registers the
// handles of every graph and submits every task (tg::Workload, see
// taskgrid_common.h). The runtime's versioning turns the tasks' accesses into
// the graph's edges and moves each output from its producer's rank to its
// consumers' ranks.
//
// Placement: by default each task carries the rank hint of the block
// distribution of the MPI baseline (rank r owns points [r*W/P, (r+1)*W/P-1]),
// so METG figures compare like with like; `-taskgrid:placement scheduler`
// drops the hints and lets TASKGRID_SCHEDULER place every task.
//
// Devices: -taskgrid:device gpu makes every benchmark task a device task
// (taskgrid_common.h, tg::Device): it runs on the devices of its rank
// (TASKGRID_DEVICE: CUDA GPUs, or emulated ones), and the runtime moves the
// data between the ranks' devices.
//
// Timing (spec 8.4): one untimed warm-up pass (-taskgrid:warmup 0: none),
// then one timed pass, each bracketed on rank 0 by taskbench::wall_seconds() around the submission
// of all tasks and taskgrid::wait_all(). Execution counts are per-rank atomics, gathered after each
// pass by one "count" task per rank.
#include "taskgrid/taskgrid.hpp"

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/report.h"
#include "core/task_contract.h"
#include "mpi_abort.h"
#include "taskgrid_common.h"

namespace {

using namespace taskbench;

// The same on every rank: parsed from the same argv before start().
BenchConfig g_config;

// Copies this rank's counters into its output (2 x int64) and resets them.
void taskbench_count(taskgrid::TaskContext& ctx) {
  const ExecutionCounts taken = tg::take_counts();
  const int64_t counts[2] = {taken.tasks, taken.inputs};
  if (ctx.num_data() != 1 || ctx.size(0) != sizeof counts)
    fatal("count task: expected one buffer of " + std::to_string(sizeof counts) + " bytes");
  std::memcpy(ctx.data(0), counts, sizeof counts);
}
TASKGRID_REGISTER(taskbench_count);

enum class Placement { hint, scheduler };

constexpr const char* kPlacementFlag = "-taskgrid:placement";

// Reads -taskgrid:placement (last one wins). Returns "" or the message of a
// usage error (without the "error: " prefix).
std::string parse_placement(int argc, const char* const* argv, Placement& placement) {
  size_t index = 0;
  std::string problem = parse_choice_flag(argc, argv, kPlacementFlag, {"hint", "scheduler"}, index);
  placement = index == 0 ? Placement::hint : Placement::scheduler;
  return problem;
}

class Driver {
 public:
  Driver(const BenchConfig& config, const tg::Functions& functions, Placement placement)
      : workload_(config, functions, tg::Workload::Owners::unnamed),
        hints_(placement == Placement::hint ? tg::Workload::Hints::block_owner
                                            : tg::Workload::Hints::none),
        ranks_(taskgrid::num_ranks()) {
    count_host_.assign(static_cast<size_t>(ranks_) * 2, 0);
    for (int r = 0; r < ranks_; ++r)
      counts_.push_back(taskgrid::enter_data(count_host_.data() + 2 * r, 2 * sizeof(int64_t)));
  }

  // Forgets every handle (before taskgrid::finish()).
  void release() {
    workload_.release();
    for (taskgrid::DataHandle h : counts_) taskgrid::release(h);
    counts_.clear();
  }

  // One execution of every task of every graph; returns its wall time.
  double run_pass() {
    const double start = wall_seconds();
    workload_.submit_pass(hints_);
    taskgrid::wait_all();
    return wall_seconds() - start;
  }

  // Sums and resets every rank's counters (one count task per rank).
  ExecutionCounts collect_counts() {
    for (int r = 0; r < ranks_; ++r) {
      taskgrid::TaskOptions on_rank;
      on_rank.rank = r;
      taskgrid::submit(taskbench_count, {taskgrid::out(counts_[static_cast<size_t>(r)])}, on_rank);
    }
    ExecutionCounts total;
    for (int r = 0; r < ranks_; ++r) {
      taskgrid::fetch(counts_[static_cast<size_t>(r)]);
      total.tasks += count_host_[2 * static_cast<size_t>(r)];
      total.inputs += count_host_[2 * static_cast<size_t>(r) + 1];
    }
    return total;
  }

 private:
  tg::Workload workload_;
  const tg::Workload::Hints hints_;
  const int ranks_;
  std::vector<int64_t> count_host_;  // 2 per rank: tasks, inputs
  std::vector<taskgrid::DataHandle> counts_;
};

// Rank 0's program; returns the benchmark's status (0 or 1).
int run_head(const tg::Functions& functions, Placement placement, bool warmup) {
  std::fputs(configuration_text(g_config).c_str(), stdout);
  std::fflush(stdout);

  const int ranks = taskgrid::num_ranks();
  RunInfo info{"taskgrid", ranks, taskgrid::threads_per_rank(), 0.0, {}};
  Driver driver(g_config, functions, placement);
  for (int pass = warmup ? 0 : 1; pass < 2; ++pass) {  // warm-up, then timed
    info.elapsed_seconds = driver.run_pass();
    info.counts = driver.collect_counts();
  }
  const int status = finish_run(g_config, info);
  driver.release();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // Every rank reaches the same verdict on the command line before MPI
  // starts, so a usage error or -h ends every rank alike (no MPI, no hang).
  const bool print = rank_from_environment() == 0;
  int status = 0;
  if (!parse_command_line(argc, argv, g_config, status, print,
                          {kPlacementFlag, tg::kWarmupFlag, tg::kDeviceFlag})) {
    if (g_config.help && print)
      std::fputs(
          "\nTaskGrid options:\n"
          "  -taskgrid:placement hint|scheduler\n"
          "                           hint (default): block distribution of points over ranks\n"
          "                           scheduler: TASKGRID_SCHEDULER places every task\n",
          stdout);
    if (g_config.help && print) {
      std::fputs(tg::kWarmupHelp, stdout);
      std::fputs(tg::kDeviceHelp, stdout);
    }
    return status;
  }
  Placement placement = Placement::hint;
  bool warmup = true;
  tg::Device device = tg::Device::cpu;
  std::string problem = parse_placement(argc, argv, placement);
  if (problem.empty()) problem = tg::parse_warmup(argc, argv, warmup);
  if (problem.empty()) problem = tg::parse_device(argc, argv, device);
  if (problem.empty()) problem = tg::check_device(g_config, device);
  if (!problem.empty()) {
    if (print) std::fprintf(stderr, "error: %s\n", problem.c_str());
    return 2;
  }

  // Set before start(): ranks > 0 run their tasks inside start().
  tg::set_config(g_config);
  set_fatal_handler(&abort_job);
  tg::Functions functions;
  try {
    functions = tg::register_functions(device);
    taskgrid::start(&argc, &argv);  // ranks > 0 serve here and exit
  } catch (const std::exception& error) {
    if (print) std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }

  int result = 0;
  try {
    result = run_head(functions, placement, warmup);
  } catch (const std::exception& error) {
    abort_job(error.what());  // the other ranks would wait for rank 0 forever
  }
  // The status goes to finish(): it is the exit status even if MPI_Finalize hangs.
  return taskgrid::finish(result);
}
