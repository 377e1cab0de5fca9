#include "core/failure.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "comm/transport.h"

namespace taskgrid::core {
namespace {
std::atomic<comm::Transport*> abort_transport{nullptr};
}

void set_abort_transport(comm::Transport* transport) { abort_transport.store(transport); }

void fail_job(int rank, const std::string& message) { fail_job(rank, message, 1); }

void fail_job(int rank, const std::string& message, int exit_status) {
  std::fprintf(stderr, "error: taskgrid: rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  // MPICH's launcher tears the job down on MPI_Abort and may drop output it
  // has not forwarded yet: give it a moment to carry the message out.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (comm::Transport* transport = abort_transport.load()) transport->abort_job(exit_status);
  std::_Exit(exit_status);
}

}  // namespace taskgrid::core
