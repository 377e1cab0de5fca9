// A simulated job: every rank of a job in this process, each rank's threads
// the actors of a simulator (comm/s4u), running the real runtime (options,
// planner, engine, statistics) over the simulator's transport instead of
// MPI. The simulator's driver installs one before the ranks' programs start;
// taskgrid::start() then starts the calling actor's rank on it, and every
// API call finds the rank of the actor that makes it.
//
// What a simulated rank leaves out: MPI (the transport and the bookkeeping
// collectives are the simulator's), the failure detector's watchdog (a
// simulated rank cannot stop; SimGrid reports a deadlock), devices,
// task-aware channels and checkpoints (start() refuses them by name).
#pragma once

#include "comm/collectives.h"
#include "comm/transport.h"

namespace taskgrid::runtime {

class SimulatedJob {
 public:
  virtual ~SimulatedJob() = default;
  virtual int ranks() const = 0;
  // The rank whose actor calls (any of its threads).
  virtual int current_rank() const = 0;
  virtual comm::Transport& transport(int rank) = 0;
  virtual comm::Collectives& collectives(int rank) = 0;
  // Task threads per rank (the simulated node's cores), unless
  // TASKGRID_THREADS says otherwise.
  virtual int threads_per_rank() const = 0;
  // Ends the calling actor: a cluster rank that served the head until its
  // shutdown (start() never returns there), with the job's `status`.
  [[noreturn]] virtual void end_rank(int status) = 0;
};

// Installs `job` (nullptr: none) before any rank starts; it must outlive them.
void set_simulated_job(SimulatedJob* job);

}  // namespace taskgrid::runtime
