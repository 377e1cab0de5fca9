// The real planners and engines on the SimGrid S4U backend: seeded random
// task graphs on 1-64 simulated ranks (one host each), in spmd mode and in
// cluster mode with every scheduler, each checked byte for byte against the
// same tasks run sequentially, as the loopback suite does in threads
// (tests/engine/test_loopback.cpp). One simulation per process (SimGrid's
// rule), so this is a program, not a GoogleTest file: it prints one line per
// rank count, mode and scheduler (messages and simulated time, for the
// determinism check: two runs must print the same) and exits non-zero on the
// first mismatch, naming the graph.
//
//   taskgrid-s4u-graphs [--platform NAME|FILE] [--ranks 1,2,4] [--graphs N] [--seed S]
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Host.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/s4u/platform.h"
#include "comm/s4u/simulation.h"
#include "comm/s4u/transport.h"
#include "engine/engine.h"
#include "plan/planner.h"
#include "sched/placement.h"
#include "tests/support/random_graphs.h"

namespace taskgrid::engine {
namespace {

namespace sg = simgrid::s4u;
namespace s4u = comm::s4u;

struct Options {
  std::string platform = "thismachine";
  std::vector<int> ranks = {1, 2, 4};
  int graphs = 8;
  uint64_t seed = 1;
  // A broken program (for the test of a stalled job): rank 1 never shuts its
  // runtime down, so its engine keeps waiting for work that never comes.
  bool stall = false;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr,
               "taskgrid-s4u-graphs: error: %s\n"
               "usage: taskgrid-s4u-graphs [--platform NAME|FILE] [--ranks 1,2,4] [--graphs N] "
               "[--seed S]\n",
               what.c_str());
  std::exit(2);
}

long whole_number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 0) usage_error(flag + " " + text + ": not a count");
  return value;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage_error(flag + ": needs a value");
    const std::string value = argv[++i];
    if (flag == "--platform") {
      options.platform = value;
    } else if (flag == "--ranks") {
      options.ranks.clear();
      std::stringstream list(value);
      for (std::string item; std::getline(list, item, ',');)
        options.ranks.push_back(static_cast<int>(whole_number(flag, item)));
      if (options.ranks.empty()) usage_error("--ranks: an empty list");
    } else if (flag == "--graphs") {
      options.graphs = static_cast<int>(whole_number(flag, value));
    } else if (flag == "--seed") {
      options.seed = static_cast<uint64_t>(whole_number(flag, value));
    } else if (flag == "--stall") {
      options.stall = value == "1";
    } else {
      usage_error("unknown flag " + flag);
    }
  }
  return options;
}

// How one graph runs: the variations the loopback suite cycles through.
struct RunShape {
  int ranks = 1;
  bool spmd = true;
  sched::Scheduler scheduler = sched::Scheduler::round_robin;  // cluster mode
  int threads = 1;
  uint64_t window = 0;
  uint64_t window_bytes = 0;
  bool program_drives = true;
};

RunShape shape_of(int ranks, bool spmd, sched::Scheduler scheduler, uint64_t graph) {
  RunShape shape;
  shape.ranks = ranks;
  shape.spmd = spmd;
  shape.scheduler = scheduler;
  shape.threads = 1 + static_cast<int>(graph % 2);
  shape.window = graph % 3 == 0 ? 0 : 1 + graph % 4;
  shape.window_bytes = graph % 5 == 1 ? 64 << (graph % 3) : 0;
  shape.program_drives = graph % 4 < 2;
  return shape;
}

std::string describe(const RunShape& shape) {
  std::ostringstream out;
  out << shape.ranks << " ranks, " << (shape.spmd ? "spmd" : "cluster");
  if (!shape.spmd) out << " " << sched::scheduler_name(shape.scheduler);
  out << ", " << shape.threads << " threads, window " << shape.window << ", window bytes "
      << shape.window_bytes << ", program drives " << shape.program_drives;
  return out.str();
}

struct Totals {
  uint64_t tasks = 0;
  uint64_t data_messages = 0;
  uint64_t control_messages = 0;
  uint64_t versions_left = 0;
};

// One rank of the job: its engine (on an engine thread started through the
// seam, unless this rank has no program: then this actor runs it) and, where
// it plans, its planner and the program. Runs as an actor on its host.
bool stall_rank_1 = false;  // Options::stall

void run_rank(comm::Transport& transport, const RunShape& shape, const Graph& g,
              std::vector<std::vector<uint8_t>>& memory, Totals& totals) {
  const int rank = transport.rank();
  Engine engine(transport, shape.threads, shape.spmd ? rank : 0);
  engine.set_timing(false);
  engine.set_engine_creates_groups(!shape.spmd);
  engine.set_program_drives(shape.program_drives);
  const bool plans = shape.spmd || rank == 0;
  if (!plans) {
    engine.run();  // a cluster worker: until the head's shutdown
  } else {
    plan::PlannerConfig config;
    config.mode = shape.spmd ? plan::PlannerMode::spmd : plan::PlannerMode::cluster;
    config.rank = rank;
    config.ranks = shape.ranks;
    config.threads_per_rank = shape.threads;
    config.scheduler = shape.scheduler;
    config.window = shape.window;
    config.window_bytes = shape.window_bytes;
    plan::Planner planner(engine, config);
    engine.set_listener(&planner);
    std::unique_ptr<comm::Thread> engine_thread = transport.start_thread([&] { engine.run(); });
    const std::vector<DataHandle> handles = enter_graph(planner, g, memory);
    for (const TaskSpec& task : g.tasks)
      submit_spec(planner, task, handles, function_id(loopback_task));
    for (const DataHandle h : handles) planner.fetch(h);
    for (const DataHandle h : handles) planner.release(h);
    if (!(stall_rank_1 && rank == 1)) planner.shutdown();
    engine_thread->join();
  }
  const EngineStats stats = engine.stats();
  totals.tasks += stats.tasks_executed;
  totals.versions_left += stats.versions_live;
}

// Runs `g` on the first shape.ranks hosts; false (with a message) when a
// handle differs from sequential execution or a version was left behind.
bool run_graph(const std::vector<sg::Host*>& hosts, const RunShape& shape, const Graph& g,
               uint64_t seed, Totals& totals) {
  const std::vector<sg::Host*> used(hosts.begin(), hosts.begin() + shape.ranks);
  s4u::S4uFabric fabric(used);
  std::vector<std::vector<std::vector<uint8_t>>> memory(static_cast<size_t>(shape.ranks));
  Totals run;
  std::vector<sg::ActorPtr> ranks;
  for (int r = 0; r < shape.ranks; ++r)
    ranks.push_back(sg::Actor::create(
        "rank-" + std::to_string(r), used[static_cast<size_t>(r)],
        [&, r] { run_rank(fabric.transport(r), shape, g, memory[static_cast<size_t>(r)], run); }));
  for (const sg::ActorPtr& rank : ranks) rank->join();
  totals.tasks += run.tasks;
  totals.versions_left += run.versions_left;
  totals.data_messages += fabric.data_messages();
  totals.control_messages += fabric.control_messages();
  const auto expected = run_sequentially(g);
  for (size_t h = 0; h < expected.size(); ++h) {
    // spmd: the owner's program fetched it; cluster: the head's.
    const size_t holder = shape.spmd ? static_cast<size_t>(g.owners[h]) : 0;
    if (memory[holder][h] != expected[h]) {
      std::fprintf(stderr, "taskgrid-s4u-graphs: handle %zu differs (%zu tasks, seed %llu, %s)\n",
                   h, g.tasks.size(), static_cast<unsigned long long>(seed),
                   describe(shape).c_str());
      return false;
    }
  }
  if (run.versions_left != 0) {
    std::fprintf(stderr,
                 "taskgrid-s4u-graphs: the engines kept %llu versions after every handle was "
                 "released (seed %llu, %s)\n",
                 static_cast<unsigned long long>(run.versions_left),
                 static_cast<unsigned long long>(seed), describe(shape).c_str());
    return false;
  }
  return true;
}

bool run_all(const s4u::Simulation& simulation, const Options& options) {
  for (const int ranks : options.ranks) {
    struct Mode {
      bool spmd;
      sched::Scheduler scheduler;
    };
    const Mode modes[] = {{true, sched::Scheduler::round_robin},
                          {false, sched::Scheduler::round_robin},
                          {false, sched::Scheduler::locality},
                          {false, sched::Scheduler::heft}};
    for (const Mode& mode : modes) {
      Totals totals;
      const double start = s4u::Simulation::now();
      for (uint64_t graph = 0; graph < static_cast<uint64_t>(options.graphs); ++graph) {
        const uint64_t seed =
            mix(options.seed * 1'000'003 + static_cast<uint64_t>(ranks) * 7919 + graph);
        const RunShape shape = shape_of(ranks, mode.spmd, mode.scheduler, graph);
        if (!run_graph(simulation.hosts(), shape, generate(seed, ranks), seed, totals))
          return false;
      }
      std::printf(
          "%3d ranks %-7s %-11s: %d graphs, %llu tasks, %llu data and %llu control "
          "messages, %.9f simulated s\n",
          ranks, mode.spmd ? "spmd" : "cluster",
          mode.spmd ? "-" : sched::scheduler_name(mode.scheduler), options.graphs,
          static_cast<unsigned long long>(totals.tasks),
          static_cast<unsigned long long>(totals.data_messages),
          static_cast<unsigned long long>(totals.control_messages), s4u::Simulation::now() - start);
      std::fflush(stdout);
      if (ranks > 1 && options.graphs >= 4 && totals.data_messages == 0) {
        std::fprintf(stderr, "taskgrid-s4u-graphs: %d ranks moved no data: the check is vacuous\n",
                     ranks);
        return false;
      }
    }
  }
  return true;
}

}  // namespace
}  // namespace taskgrid::engine

int main(int argc, char** argv) {
  using namespace taskgrid;
  const engine::Options options = engine::parse(argc, argv);
  engine::stall_rank_1 = options.stall;
  int nodes = 0;
  for (int ranks : options.ranks) nodes = std::max(nodes, ranks);
  try {
    const comm::s4u::PlatformSpec platform =
        comm::s4u::find_platform(options.platform, TASKGRID_SIM_PLATFORM_DIR);
    comm::s4u::Simulation simulation(argv[0], platform, nodes);
    bool ok = false;
    // Every graph here takes milliseconds of simulated time.
    const double end =
        simulation.run([&] { ok = engine::run_all(simulation, options); }, /*time_limit=*/10);
    std::printf("platform %s, %d nodes: %s at %.9f simulated s\n", platform.name.c_str(), nodes,
                ok ? "every graph matched" : "FAILED", end);
    return ok ? 0 : 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "taskgrid-s4u-graphs: error: %s\n", error.what());
    return 2;
  }
}
