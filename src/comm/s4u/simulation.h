// One SimGrid simulation in this process: the S4U engine configured for
// TaskGrid (actors on threads of their own: the runtime keeps per-thread
// state; the CM02 network model: no latency inflation), `nodes` hosts of a
// platform, and the runtime's clock (trace::now_ns) reading simulated time.
// SimGrid allows one simulation per process.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "comm/s4u/platform.h"

namespace simgrid::s4u {
class Host;
class Engine;
}  // namespace simgrid::s4u

namespace taskgrid::comm::s4u {

class Simulation {
 public:
  // `program`: the process's name, for SimGrid's messages. Throws
  // std::runtime_error for a bad node count or a second simulation.
  Simulation(const std::string& program, const PlatformSpec& platform, int nodes);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const PlatformSpec& platform() const { return platform_; }
  const std::vector<simgrid::s4u::Host*>& hosts() const { return hosts_; }
  // Runs `main` as an actor on node 0 until every actor has ended. A
  // simulation whose actors all wait for ever ends the process with a
  // message (SimGrid reports the deadlock, then this exits with status 3),
  // and so does one still running after `time_limit` simulated seconds (a
  // rank that waits for what never comes polls for ever). Returns the
  // simulated time at the end, in seconds.
  double run(std::function<void()> main, double time_limit = 3600);

  // Simulated seconds now (inside the simulation).
  static double now();

 private:
  PlatformSpec platform_;
  simgrid::s4u::Engine* engine_ = nullptr;
  std::vector<simgrid::s4u::Host*> hosts_;
};

}  // namespace taskgrid::comm::s4u
