#include "core/failure.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include "comm/transport.h"
#include "taskgrid/taskgrid.hpp"

namespace taskgrid::core {
namespace {
std::atomic<comm::Transport*> abort_transport{nullptr};
std::atomic<bool> failing{false};
// -2: not known yet (read from the launcher's variables on first use).
std::atomic<int> rank_in_messages{-2};
std::terminate_handler previous_terminate = nullptr;

[[noreturn]] void on_terminate() {
  if (const std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const Error& error) {
      std::string message = error.what();
      // "error: taskgrid: rank R: taskgrid: ..." says "taskgrid" once too often.
      constexpr char kPrefix[] = "taskgrid: ";
      if (message.rfind(kPrefix, 0) == 0) message.erase(0, sizeof kPrefix - 1);
      fail_job(message_rank(), message, 2);
    } catch (...) {
    }
  }
  if (previous_terminate) previous_terminate();
  std::abort();
}

// When the library loads: errors thrown from the program's main before
// start() (enter_data too early) are covered from the first line of main.
[[maybe_unused]] const bool installed_at_load = (install_terminate_handler(), true);
}  // namespace

void set_abort_transport(comm::Transport* transport) { abort_transport.store(transport); }
bool job_failing() { return failing.load(); }

int launcher_number(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return -1;
  char* end = nullptr;
  const long number = std::strtol(value, &end, 10);
  return end != value && *end == '\0' && number >= 0 && number < (1L << 30)
             ? static_cast<int>(number)
             : -1;
}

int launcher_rank() {
  for (const char* name : {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (const int rank = launcher_number(name); rank >= 0) return rank;
  return -1;
}

void set_message_rank(int rank) { rank_in_messages.store(rank); }

int message_rank() {
  int rank = rank_in_messages.load();
  if (rank == -2) {
    rank = std::max(0, launcher_rank());
    rank_in_messages.store(rank);
  }
  return rank;
}

void install_terminate_handler() {
  static const bool installed = [] {
    previous_terminate = std::set_terminate(on_terminate);
    return true;
  }();
  (void)installed;
}

void exit_after(int seconds, int rank, const std::string& late, int exit_status) {
  std::thread([seconds, rank, late, exit_status] {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    std::fprintf(stderr, "warning: taskgrid: rank %d: %s; exiting with status %d\n", rank,
                 late.c_str(), exit_status);
    std::fflush(stderr);
    std::fflush(stdout);
    std::_Exit(exit_status);
  }).detach();
}

void start_abort_deadline(int rank, int exit_status) {
  exit_after(kAbortDeadlineSeconds, rank,
             "MPI_Abort did not end the job within " + std::to_string(kAbortDeadlineSeconds) + " s",
             exit_status);
}

void fail_job(int rank, const std::string& message) { fail_job(rank, message, 1); }

void fail_job(int rank, const std::string& message, int exit_status) {
  failing.store(true);
  std::fprintf(stderr, "error: taskgrid: rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  // MPICH's launcher tears the job down on MPI_Abort and may drop output it
  // has not forwarded yet: give it a moment to carry the message out.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (comm::Transport* transport = abort_transport.load()) {
    start_abort_deadline(rank, exit_status);
    transport->abort_job(exit_status);
  }
  std::_Exit(exit_status);
}

}  // namespace taskgrid::core
