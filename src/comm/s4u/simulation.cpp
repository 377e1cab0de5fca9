#include "comm/s4u/simulation.h"

#include <cstdio>
#include <cstdlib>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <stdexcept>

#include "comm/s4u/transport.h"
#include "trace/trace.h"

namespace taskgrid::comm::s4u {

namespace sg = simgrid::s4u;

namespace {

bool simulated = false;  // SimGrid allows one engine per process

}  // namespace

Simulation::Simulation(const std::string& program, const PlatformSpec& platform, int nodes)
    : platform_(platform) {
  check_node_count(platform, nodes);
  if (simulated) throw std::runtime_error("SimGrid runs one simulation per process");
  simulated = true;
  // SimGrid's own options, as on its command line.
  std::vector<std::string> options = {
      program,
      // Real threads: engine, workers and planner keep thread_local state.
      "--cfg=contexts/factory:thread",
      // No latency inflation (the default LV08 model multiplies it ~13x).
      "--cfg=network/model:CM02",
      // Configuration and deadlock reports only when something is wrong.
      "--log=xbt_cfg.thresh:warning",
  };
  std::vector<char*> argv;
  for (std::string& option : options) argv.push_back(option.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(options.size());
  engine_ = new sg::Engine(&argc, argv.data());
  hosts_ = build_platform(platform, nodes);
  trace::set_clock(simulated_ns);
}

Simulation::~Simulation() {
  trace::set_clock(nullptr);
  // The engine stays: SimGrid tears it down at exit.
}

double Simulation::run(std::function<void()> main, double time_limit) {
  sg::Actor::create("main", hosts_.at(0), std::move(main));
  sg::Actor::create("time-limit", hosts_.at(0), [time_limit] {
    sg::this_actor::sleep_for(time_limit);
    std::fprintf(stderr,
                 "error: the simulation is still running after its limit of %g simulated s: "
                 "a rank waits for something that never comes (or raise the limit)\n",
                 time_limit);
    std::fflush(nullptr);
    std::_Exit(3);
  })->daemonize();
  engine_->run();
  // SimGrid returns from a deadlock (every actor left waits for ever) after
  // listing the actors: a simulated job that hangs ends here, loudly.
  if (const size_t stuck = engine_->get_actor_count(); stuck > 0) {
    std::fprintf(stderr,
                 "error: the simulation deadlocked at %.9f simulated s: %zu actors wait for "
                 "ever (SimGrid lists them above)\n",
                 sg::Engine::get_clock(), stuck);
    std::fflush(nullptr);
    std::_Exit(3);
  }
  return sg::Engine::get_clock();
}

double Simulation::now() { return sg::Engine::get_clock(); }

}  // namespace taskgrid::comm::s4u
