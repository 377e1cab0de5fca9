// The simulated Task Bench TaskGrid systems: taskbench-taskgrid_spmd-sim and
// taskbench-taskgrid-sim are the real systems (bench/taskbench/systems/, their
// main() renamed taskbench_system_main) with this driver's main(), which runs
// one rank per simulated node of a SimGrid platform (comm/s4u): every rank's
// program, planner, engine and task threads are actors of one simulation, the
// runtime's messages simulated transfers, its clock and waits simulated time.
//
// Time is charged so that a run is deterministic (the same output twice):
//   - a benchmark task's kernel runs for real (results are checked as in any
//     run) and is charged as its FLOPs at the platform's core speed;
//   - the runtime's own work is charged from the platform's cost model: per
//     task a rank runs and per task its program submits (--charge model);
//     --charge measured charges instead the CPU time each task thread and
//     program really used (kernels included), to check the model.
//
//   taskbench-taskgrid_spmd-sim [--platform NAME|FILE] [--nodes N]
//       [--cores-per-node C] [--charge model|measured] -- <Task Bench flags>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "comm/loopback/collectives.h"
#include "comm/s4u/platform.h"
#include "comm/s4u/simulation.h"
#include "comm/s4u/transport.h"
#include "core/task_graph.h"
#include "runtime/simulated_job.h"
#include "simulated_flops.h"
#include "taskgrid_common.h"

int taskbench_system_main(int argc, char** argv);

namespace taskgrid::sim {
namespace {

namespace sg = simgrid::s4u;
namespace s4u = comm::s4u;
namespace tg = taskbench::tg;

enum class Charge { model, measured };

struct Settings {
  std::string platform = "thismachine";
  int nodes = 2;
  int cores_per_node = 0;  // 0: the platform's
  Charge charge = Charge::model;
  std::vector<std::string> system_args;  // after "--"
};

[[noreturn]] void usage_error(const char* program, const std::string& what) {
  std::fprintf(stderr,
               "%s: error: %s\n"
               "usage: %s [--platform NAME|FILE] [--nodes N] [--cores-per-node C] "
               "[--charge model|measured] -- <Task Bench flags>\n",
               program, what.c_str(), program);
  std::exit(2);
}

int count(const char* program, const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1 || value > (1 << 20))
    usage_error(program, flag + " " + text + ": not a positive count");
  return static_cast<int>(value);
}

Settings parse(int argc, char** argv) {
  Settings settings;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--") break;
    if (i + 1 >= argc) usage_error(argv[0], flag + ": needs a value");
    const std::string value = argv[++i];
    if (flag == "--platform") {
      settings.platform = value;
    } else if (flag == "--nodes") {
      settings.nodes = count(argv[0], flag, value);
    } else if (flag == "--cores-per-node") {
      settings.cores_per_node = count(argv[0], flag, value);
    } else if (flag == "--charge") {
      if (value != "model" && value != "measured")
        usage_error(argv[0], "--charge " + value + ": model or measured");
      settings.charge = value == "model" ? Charge::model : Charge::measured;
    } else {
      usage_error(argv[0], "unknown flag " + flag + " (Task Bench's flags go after --)");
    }
  }
  for (++i; i < argc; ++i) settings.system_args.emplace_back(argv[i]);
  return settings;
}

// The simulated job: ranks by host, their transports and collectives, and the
// Task Bench program's job-wide calls over the same collectives.
class Job final : public runtime::SimulatedJob, public tg::JobCalls {
 public:
  Job(const std::vector<sg::Host*>& hosts, const s4u::PlatformSpec& platform, int cores)
      : fabric_(hosts, platform.message_overhead),
        collectives_(static_cast<int>(hosts.size()), 1, fabric_.transport(0).blocking()),
        cores_(cores),
        statuses_(hosts.size(), -1) {
    for (size_t r = 0; r < hosts.size(); ++r) rank_of_.emplace(hosts[r], static_cast<int>(r));
    // The cost model's link, as the real start-up would measure it: one
    // message crosses two links (node, switch, node).
    collectives_.set_link({2 * platform.link_latency, platform.link_bandwidth});
  }

  int ranks() const override { return fabric_.size(); }
  int current_rank() const override {
    const auto it = rank_of_.find(sg::this_actor::get_host());
    return it == rank_of_.end() ? -1 : it->second;
  }
  comm::Transport& transport(int rank) override { return fabric_.transport(rank); }
  comm::Collectives& collectives(int rank) override { return collectives_.collectives(rank); }
  int threads_per_rank() const override { return cores_; }
  [[noreturn]] void end_rank(int status) override {
    statuses_[static_cast<size_t>(current_rank())] = status;
    sg::this_actor::exit();
  }

  void barrier() override { mine().barrier(); }
  double seconds() override { return sg::Engine::get_clock(); }
  void sum_to_root(int64_t* values, int count) override {
    const auto all = mine().gather(0, values, sizeof(int64_t) * static_cast<size_t>(count));
    if (all.empty()) return;
    for (int i = 0; i < count; ++i) values[i] = 0;
    for (const std::vector<char>& theirs : all)
      for (int i = 0; i < count; ++i) {
        int64_t value = 0;
        std::memcpy(&value, theirs.data() + sizeof value * static_cast<size_t>(i), sizeof value);
        values[i] += value;
      }
  }
  int max_to_root(int value) override { return static_cast<int>(mine().max_over_ranks(value)); }
  int broadcast_from_root(int value) override {
    mine().broadcast(0, &value, sizeof value);
    return value;
  }

  void set_status(int rank, int status) { statuses_[static_cast<size_t>(rank)] = status; }
  // The job's exit status: the largest rank's (-1: a rank never finished).
  int status() const {
    int worst = 0;
    for (int status : statuses_) worst = status < 0 ? 1 : std::max(worst, status);
    return worst;
  }

 private:
  comm::Collectives& mine() { return collectives(current_rank()); }

  s4u::S4uFabric fabric_;
  comm::loopback::LoopbackCollectiveGroup collectives_;
  const int cores_;
  std::unordered_map<const sg::Host*, int> rank_of_;
  std::vector<int> statuses_;
};

// The charging of simulated time (see the top of the file).
Charge charge_mode = Charge::model;
double core_speed = 1;
double task_seconds = 0;                // the runtime's per task run
double submission_seconds = 0;          // the runtime's per task submitted that runs here
double foreign_submission_seconds = 0;  // per task submitted that another rank runs
constexpr int kSubmissionsPerCharge = 32;

void compute_for(double seconds) {
  if (seconds > 0) sg::this_actor::execute(seconds * core_speed);
}

// User CPU time of the calling thread since its last charge: its system
// time is mostly the simulator's switching between actors (each one a thread).
double cpu_seconds_since_last_charge() {
  thread_local double last = 0;
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  const double seconds = static_cast<double>(usage.ru_utime.tv_sec) +
                         static_cast<double>(usage.ru_utime.tv_usec) * 1e-6;
  const double used = seconds - last;
  last = seconds;
  return used;
}

void task_ran(const taskbench::TaskGraph& graph, int64_t timestep, int64_t point) {
  if (charge_mode == Charge::measured) {
    compute_for(cpu_seconds_since_last_charge());
    return;
  }
  const double flops = taskbench::sim::simulated_flops(graph, timestep, point);
  if (flops < 0) {
    std::fprintf(stderr,
                 "taskgrid-sim: error: the cost model has no FLOP count for this kernel (it "
                 "charges empty and the FLOP kernels); run it with --charge measured\n");
    std::fflush(nullptr);
    std::_Exit(2);
  }
  compute_for(flops / core_speed + task_seconds);
}

void task_submitted(bool runs_here) {
  thread_local int submitted = 0;
  thread_local double owed = 0;  // model seconds of the submissions not charged yet
  owed += runs_here ? submission_seconds : foreign_submission_seconds;
  if (++submitted < kSubmissionsPerCharge) return;
  compute_for(charge_mode == Charge::measured ? cpu_seconds_since_last_charge() : owed);
  submitted = 0;
  owed = 0;
}

// Prints where the simulation is, every few seconds of wall time.
void report_progress() {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto last = start;
  for (;;) {
    sg::this_actor::sleep_for(1e-4);
    const auto now = clock::now();
    if (now - last < std::chrono::seconds(5)) continue;
    last = now;
    std::fprintf(stderr, "taskgrid-sim: %.6f simulated s after %.0f s of wall time\n",
                 sg::Engine::get_clock(), std::chrono::duration<double>(now - start).count());
  }
}

int run(int argc, char** argv) {
  const Settings settings = parse(argc, argv);
  s4u::PlatformSpec platform;
  try {
    platform = s4u::find_platform(settings.platform, TASKGRID_SIM_PLATFORM_DIR);
    s4u::check_node_count(platform, settings.nodes);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: error: %s\n", argv[0], error.what());
    return 2;
  }
  const int cores = settings.cores_per_node > 0 ? settings.cores_per_node : platform.cores_per_node;
  platform.cores_per_node = cores;
  charge_mode = settings.charge;
  core_speed = platform.core_speed;
  task_seconds = platform.runtime_task_seconds;
  submission_seconds = platform.runtime_submission_seconds;
  foreign_submission_seconds = platform.runtime_foreign_submission_seconds;
  tg::set_work_observer({task_ran, task_submitted});
  taskbench::set_wall_clock([] { return sg::Engine::get_clock(); });

  s4u::Simulation simulation(argv[0], platform, settings.nodes);
  std::unique_ptr<Job> job;
  int status = 1;
  const auto wall_start = std::chrono::steady_clock::now();
  const double end = simulation.run([&] {
    job = std::make_unique<Job>(simulation.hosts(), platform, cores);
    runtime::set_simulated_job(job.get());
    tg::set_job_calls(job.get());
    sg::Actor::create("progress", simulation.hosts()[0], [&] { report_progress(); })->daemonize();
    std::vector<sg::ActorPtr> ranks;
    for (int r = 0; r < settings.nodes; ++r)
      ranks.push_back(sg::Actor::create(
          "rank-" + std::to_string(r), simulation.hosts()[static_cast<size_t>(r)], [&, r] {
            // Each rank its own argv, as a process has (start() may edit it).
            std::vector<std::string> args = {argv[0]};
            args.insert(args.end(), settings.system_args.begin(), settings.system_args.end());
            std::vector<char*> pointers;
            for (std::string& arg : args) pointers.push_back(arg.data());
            pointers.push_back(nullptr);
            job->set_status(r,
                            taskbench_system_main(static_cast<int>(args.size()), pointers.data()));
          }));
    for (const sg::ActorPtr& rank : ranks) rank->join();
    runtime::set_simulated_job(nullptr);
    tg::set_job_calls(nullptr);
    status = job->status();
    job.reset();  // its receivers are actors: stopped inside the simulation
  });
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::fprintf(stderr,
               "taskgrid-sim: platform %s, %d nodes x %d cores, charge %s: %.6f simulated s in "
               "%.1f s of wall time\n",
               platform.name.c_str(), settings.nodes, cores,
               settings.charge == Charge::model ? "model" : "measured", end, wall);
  return status;
}

}  // namespace
}  // namespace taskgrid::sim

int main(int argc, char** argv) { return taskgrid::sim::run(argc, argv); }
