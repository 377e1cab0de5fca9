// taskbench-taskgrid_spmd: Task Bench on TaskGrid's spmd mode.
//
// Launched like the MPI baseline (mpiexec -n P taskbench-taskgrid_spmd
// <flags>); it starts TaskGrid in spmd mode itself. Every rank runs main: it
// parses argv after taskgrid::start() (only rank 0 prints), registers the
// same handles and submits the same tasks, timestep-major across graphs.
//
// Handles (tg::Workload, see taskgrid_common.h): two per point, one per
// timestep parity, each owned by the block owner of its point (rank r owns
// points [r*W/P, (r+1)*W/P - 1], as in the MPI baseline). Task (g, t, p)
// reads the parity (t-1)%2 handles of its effective inputs in enumeration
// order (then the -broadcast handle, owned by rank 0) and writes the parity
// t%2 handle of p. It carries no rank hint: spmd's owner-computes rule runs
// it on the owner of the handle it writes, i.e. where the MPI baseline runs
// it. Each rank keeps only its own tasks; the runtime moves outputs peer to
// peer.
//
// Devices: -taskgrid:device gpu makes every task a device task (see
// taskgrid_common.h, tg::Device); the flag is read before start(), the
// configuration's fitness for it after.
//
// Timing (spec 8.4): one untimed warm-up pass (-taskgrid:warmup 0: none),
// then one timed pass, each bracketed by a barrier and the job's clock (MPI_Barrier + MPI_Wtime;
// a simulated job's own, tg::JobCalls) around the submission of all tasks
// and taskgrid::wait_all() (this rank's tasks). Where some rank shares its
// cores with more ranks than it has cores (taskgrid::ranks_sharing_cores),
// the barrier is an MPI_Ibarrier polled with sleeps, so
// that a rank done early does not spin on a core others need. With -broadcast, each pass
// starts with a task on rank 0 that republishes the buffer, so it is moved
// to the other ranks inside the timed region, like the baseline's MPI_Bcast.
// Execution counts are per-rank atomics, reduced to rank 0.
#include <mpi.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/report.h"
#include "core/task_contract.h"
#include "mpi_abort.h"
#include "taskgrid/taskgrid.hpp"
#include "taskgrid_common.h"

namespace {

using namespace taskbench;

// Read by the task function (tg::config()); lives until the process ends.
BenchConfig g_config;

void check_mpi(int code, const char* call) {
  if (code != MPI_SUCCESS) fatal(std::string(call) + " failed");
}
#define CHECK_MPI(call) check_mpi((call), #call)

// The program's job-wide calls on MPI: on its own communicator, apart from
// the runtime's.
class MpiJobCalls final : public tg::JobCalls {
 public:
  MpiJobCalls() {
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    // The ranks that take turns on this rank's cores: all of the node's
    // where none is bound, none but itself where each has cores of its own
    // (srun --cpu-bind, taskset), which then must not sleep in barriers.
    // Every rank must agree: MPI_Barrier does not match MPI_Ibarrier.
    const int cores = usable_cores();  // 0: unknown
    int node_oversubscribed = cores > 0 && taskgrid::ranks_sharing_cores() > cores ? 1 : 0;
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &node_oversubscribed, 1, MPI_INT, MPI_MAX, comm_));
    oversubscribed_ = node_oversubscribed != 0;
  }
  ~MpiJobCalls() override { MPI_Comm_free(&comm_); }
  void barrier() override {
    if (!oversubscribed_) {
      CHECK_MPI(MPI_Barrier(comm_));
      return;
    }
    // Where ranks outnumber cores, a rank that reaches the barrier first
    // must leave the core to those still running tasks, and MPICH's
    // MPI_Barrier busy-polls: poll a non-blocking one, sleeping between
    // looks, 1 us doubling to 1 ms. At 3 ranks on 2 cores (width 2) the
    // rank without tasks otherwise held a core through the timed pass; with
    // looks every 50 us its wake-ups still cost the others a quarter of the
    // machine, with 1 ms they cost little, and the barrier ends at most a
    // millisecond late.
    MPI_Request request;
    CHECK_MPI(MPI_Ibarrier(comm_, &request));
    for (long pause_ns = 1000;; pause_ns = std::min(pause_ns * 2, 1000'000L)) {
      int done = 0;
      CHECK_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
      if (done) return;
      const timespec pause{0, pause_ns};
      nanosleep(&pause, nullptr);
    }
  }
  double seconds() override { return MPI_Wtime(); }
  void sum_to_root(int64_t* values, int count) override {
    std::vector<int64_t> total(static_cast<size_t>(count), 0);
    CHECK_MPI(MPI_Reduce(values, total.data(), count, MPI_INT64_T, MPI_SUM, 0, comm_));
    int rank = 0;
    CHECK_MPI(MPI_Comm_rank(comm_, &rank));
    if (rank == 0) std::copy(total.begin(), total.end(), values);
  }
  int max_to_root(int value) override {
    int largest = 0;
    CHECK_MPI(MPI_Reduce(&value, &largest, 1, MPI_INT, MPI_MAX, 0, comm_));
    return largest;
  }
  int broadcast_from_root(int value) override {
    CHECK_MPI(MPI_Bcast(&value, 1, MPI_INT, 0, comm_));
    return value;
  }

 private:
  static int usable_cores() {
    cpu_set_t cores;
    return sched_getaffinity(0, sizeof cores, &cores) == 0 ? CPU_COUNT(&cores) : 0;
  }

  MPI_Comm comm_;
  bool oversubscribed_ = false;  // some rank shares its cores with more ranks than it has
};

// Every rank parses the same argv and reaches the same verdict; in a
// simulated job the ranks share this process (and g_config, which running
// tasks read), so the first rank parses, and prints, for all.
bool parse_once(int argc, char** argv, int rank, int& status) {
  static bool parsed = false;
  static bool ok = false;
  static int parse_status = 0;
  const bool simulated = tg::simulated_job_calls() != nullptr;
  if (!parsed || !simulated) {
    ok = parse_command_line(argc, argv, g_config, parse_status, rank == 0 || simulated,
                            {tg::kWarmupFlag, tg::kDeviceFlag});
    parsed = true;
  }
  status = parse_status;
  return ok;
}

// Every rank's program after start(); returns the same status everywhere.
int run(int argc, char** argv, const tg::Functions& functions, tg::Device device) {
  const int rank = taskgrid::rank();
  const int ranks = taskgrid::num_ranks();
  // Every rank parses the same argv and reaches the same verdict.
  int status = 0;
  if (!parse_once(argc, argv, rank, status)) {
    if (g_config.help && rank == 0) {
      std::fputs(tg::kWarmupHelp, stdout);
      std::fputs(tg::kDeviceHelp, stdout);
    }
    return status;
  }
  bool warmup = true;
  std::string problem = tg::parse_warmup(argc, argv, warmup);
  if (problem.empty()) problem = tg::check_device(g_config, device);
  if (!problem.empty()) {
    if (rank == 0) std::fprintf(stderr, "error: %s\n", problem.c_str());
    return 2;
  }
  tg::set_config(g_config);
  if (rank == 0) {
    std::fputs(configuration_text(g_config).c_str(), stdout);
    std::fflush(stdout);
  }

  std::unique_ptr<MpiJobCalls> mpi;
  tg::JobCalls* job = tg::simulated_job_calls();
  if (!job) job = (mpi = std::make_unique<MpiJobCalls>()).get();
  const int threads = taskgrid::threads_per_rank();
  tg::Workload workload(g_config, functions, tg::Workload::Owners::block);

  double elapsed = 0;
  ExecutionCounts counts;
  for (int pass = warmup ? 0 : 1; pass < 2; ++pass) {  // warm-up, then timed
    job->barrier();
    const double start = job->seconds();
    workload.submit_pass(tg::Workload::Hints::none);  // owner computes
    taskgrid::wait_all();
    job->barrier();
    elapsed = job->seconds() - start;
    counts = tg::take_counts();
  }

  int64_t total_counts[2] = {counts.tasks, counts.inputs};
  job->sum_to_root(total_counts, 2);
  const int max_threads = job->max_to_root(threads);
  if (rank == 0) {
    RunInfo info{"taskgrid_spmd", ranks, max_threads, elapsed, {}};
    info.counts.tasks = total_counts[0];
    info.counts.inputs = total_counts[1];
    status = finish_run(g_config, info);
    std::fflush(stdout);
  }
  status = job->broadcast_from_root(status);
  mpi.reset();
  workload.release();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // Before MPI: every rank sees the same environment and reaches the same
  // verdict; the launcher's rank variable picks the one that prints.
  const bool print = rank_from_environment() == 0;
  if (const char* mode = std::getenv("TASKGRID_MODE");
      mode != nullptr && *mode != '\0' && std::strcmp(mode, "spmd") != 0) {
    if (print)
      std::fprintf(stderr,
                   "error: TASKGRID_MODE=\"%s\": taskbench-taskgrid_spmd runs in spmd mode only "
                   "(unset TASKGRID_MODE or set it to spmd)\n",
                   mode);
    return 2;
  }

  // The device decides how the task function is registered, before start().
  tg::Device device = tg::Device::cpu;
  if (const std::string problem = tg::parse_device(argc, argv, device); !problem.empty()) {
    if (print) std::fprintf(stderr, "error: %s\n", problem.c_str());
    return 2;
  }

  set_fatal_handler(&abort_job);
  tg::Functions functions;
  try {
    functions = tg::register_functions(device);
    taskgrid::start(&argc, &argv, taskgrid::Mode::spmd);
  } catch (const std::exception& error) {
    if (print) std::fprintf(stderr, "error: %s\n", error.what());
    if (mpi_running()) MPI_Finalize();
    return 1;
  }

  int status = 0;
  try {
    status = run(argc, argv, functions, device);
  } catch (const std::exception& error) {
    abort_job(error.what());  // the other ranks would wait for this one forever
  }
  // The status goes to finish(): it is the exit status even if MPI_Finalize hangs.
  return taskgrid::finish(status);
}
