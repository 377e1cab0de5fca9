// A soak run: many small tasks with neighbour reads and handle churn, in
// either mode, reporting each rank's resident memory after warm-up (a quarter
// of the way in) and at the end. With --check it fails when any rank grew by
// more than 10% + 2 MiB: memory must stay bounded however long a job runs.
// The 2 MiB are MPI's (UCX's) own pools, which grow in steps during the first
// million tasks; the runtime's heap is flat after warm-up (valgrind massif).
//
//   taskgrid-soak --tasks N [--width W] [--churn-every K] [--check]
//
// Each step runs W tasks (point p on rank p % ranks reads p+1 and updates
// p); every K steps a fresh small handle is entered, written by a task and
// released (the churn that used to leak handle slots).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <taskgrid/taskgrid.hpp>
#include <vector>

namespace {

void step_task(taskgrid::TaskContext& ctx) {
  auto* mine = ctx.data_as<uint64_t>(0);
  const auto* next = ctx.data_as<uint64_t>(1);
  mine[0] += next[0] + 1;
}
TASKGRID_REGISTER(step_task);

void churn_task(taskgrid::TaskContext& ctx) { ctx.data_as<uint64_t>(0)[0] = 42; }
TASKGRID_REGISTER(churn_task);

uint64_t resident_bytes() {
  long pages = 0, resident = 0;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(statm);
  }
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

void sample_task(taskgrid::TaskContext& ctx) { ctx.data_as<uint64_t>(0)[0] = resident_bytes(); }
TASKGRID_REGISTER(sample_task);

// Every rank's resident bytes, brought to rank 0 (the owner of the samples).
std::vector<uint64_t> sample_every_rank() {
  const int ranks = taskgrid::num_ranks();
  std::vector<uint64_t> values(static_cast<size_t>(ranks), 0);
  std::vector<taskgrid::DataHandle> handles;
  for (int r = 0; r < ranks; ++r) {
    handles.push_back(taskgrid::enter_data(&values[static_cast<size_t>(r)], sizeof(uint64_t), 0));
    taskgrid::TaskOptions options;
    options.rank = r;
    taskgrid::submit(sample_task, {taskgrid::out(handles.back())}, options);
  }
  for (const auto& handle : handles) taskgrid::exit_data(handle);
  return values;
}

int fail_usage(const char* message) {
  std::fprintf(stderr,
               "taskgrid-soak: %s\nusage: taskgrid-soak --tasks N [--width W] "
               "[--churn-every K] [--check]\n",
               message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t tasks = 100000;
  int width = 0;
  uint64_t churn_every = 4;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--tasks" && has_value) {
      tasks = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--width" && has_value) {
      width = std::atoi(argv[++i]);
    } else if (arg == "--churn-every" && has_value) {
      churn_every = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--check") {
      check = true;
    } else {
      return fail_usage(("unknown argument " + arg).c_str());
    }
  }
  taskgrid::start(&argc, &argv, taskgrid::Mode::from_environment);
  const int ranks = taskgrid::num_ranks();
  if (width <= 0) width = 4 * ranks;
  const uint64_t steps = tasks / static_cast<uint64_t>(width);
  const uint64_t warm_up = steps / 4;  // tables and pools reach their high-water marks

  std::vector<uint64_t> values(static_cast<size_t>(width), 0);
  std::vector<taskgrid::DataHandle> points;
  for (int p = 0; p < width; ++p)
    points.push_back(
        taskgrid::enter_data(&values[static_cast<size_t>(p)], sizeof(uint64_t), p % ranks));
  uint64_t churn_value = 0;
  std::vector<uint64_t> at_warm_up;
  const auto started = std::chrono::steady_clock::now();
  auto warm_started = started;
  for (uint64_t step = 0; step < steps; ++step) {
    if (step == warm_up) {
      at_warm_up = sample_every_rank();
      warm_started = std::chrono::steady_clock::now();
    }
    for (int p = 0; p < width; ++p) {
      taskgrid::TaskOptions options;
      options.rank = p % ranks;
      taskgrid::submit(step_task,
                       {taskgrid::inout(points[static_cast<size_t>(p)]),
                        taskgrid::in(points[static_cast<size_t>((p + 1) % width)])},
                       options);
    }
    if (churn_every && step % churn_every == 0) {
      const auto scratch =
          taskgrid::enter_data(&churn_value, sizeof churn_value, static_cast<int>(step % ranks));
      taskgrid::submit(churn_task, {taskgrid::out(scratch)}, {});
      taskgrid::release(scratch);
    }
  }
  taskgrid::wait_all();
  const std::vector<uint64_t> at_end = sample_every_rank();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_started).count();
  for (const auto& point : points) taskgrid::exit_data(point);

  // Every point grew by at least 1 per step. In spmd a point's value comes
  // back to its owner only.
  bool ok = true;
  for (int p = 0; p < width; ++p)
    if (!taskgrid::is_spmd() || p % ranks == taskgrid::rank())
      ok = ok && values[static_cast<size_t>(p)] >= steps;
  int status = ok ? 0 : 1;
  if (taskgrid::rank() == 0) {
    std::printf(
        "soak: %s mode, %d ranks, %llu tasks (%llu steps of %d), churn every %llu steps, "
        "%.1f s after warm-up%s\n",
        taskgrid::is_spmd() ? "spmd" : "cluster", ranks,
        static_cast<unsigned long long>(steps * static_cast<uint64_t>(width)),
        static_cast<unsigned long long>(steps), width, static_cast<unsigned long long>(churn_every),
        seconds, ok ? "" : " (WRONG VALUES)");
    for (int r = 0; r < ranks; ++r) {
      const double start_mb = static_cast<double>(at_warm_up[static_cast<size_t>(r)]) / 1048576.0;
      const double end_mb = static_cast<double>(at_end[static_cast<size_t>(r)]) / 1048576.0;
      const bool bounded = end_mb <= start_mb * 1.10 + 2.0;
      std::printf(
          "soak: rank %d resident %.1f MiB after warm-up, %.1f MiB at the end (%+.1f%%)%s\n", r,
          start_mb, end_mb, 100.0 * (end_mb - start_mb) / start_mb, bounded ? "" : " GREW");
      if (check && !bounded) status = 1;
    }
    std::fflush(stdout);
  }
  return taskgrid::finish(status);
}
