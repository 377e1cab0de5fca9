// The job's failure path: a fatal error on any thread of any rank prints
// "error: taskgrid: rank R: <message>" and ends the whole job at once.
#pragma once

#include <string>

namespace taskgrid::comm {
class Transport;
}

namespace taskgrid::core {

[[noreturn]] void fail_job(int rank, const std::string& message);
// Same, with the exit status the job ends with (2: a taskgrid::Error the
// program did not catch).
[[noreturn]] void fail_job(int rank, const std::string& message, int exit_status);
// The transport whose abort ends the job (nullptr: only this process exits).
void set_abort_transport(comm::Transport* transport);
// Before an MPI_Abort: exits this process with `exit_status` (saying so) if
// the abort has not ended the job within kAbortDeadlineSeconds. MPI_Abort
// ends a job in milliseconds when it works, but it can block (inside MPI's
// own lock, held by a thread that never returns); this rank exiting then
// still ends the job through the launcher, instead of a hang.
constexpr int kAbortDeadlineSeconds = 10;
void start_abort_deadline(int rank, int exit_status);
// The general form: a detached thread that, after `seconds`, prints
// "warning: taskgrid: rank R: <late>; exiting with status S" and exits with
// `exit_status` (for MPI calls that end a process and may never return).
void exit_after(int seconds, int rank, const std::string& late, int exit_status);
// True once fail_job has begun: the job is ending on purpose, so the exit
// guard of the API (a rank leaving before finish()) has nothing to add.
bool job_failing();

// The rank that messages name: before MPI starts, the launcher's (PMI_RANK,
// OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID; -1 for a process started
// alone), afterwards MPI's (set by start()).
int launcher_rank();
// A launcher's variable read as a rank or count (0 to 2^30); -1 when unset or not one.
int launcher_number(const char* name);
void set_message_rank(int rank);
int message_rank();

// Makes an uncaught taskgrid::Error end the job through fail_job (one whole
// line "error: taskgrid: rank R: <what>", status 2) instead of the default
// "terminate called ..." that ranks interleave; other exceptions keep the
// default path. Installed when the library loads and again where the API can
// throw before that (a registration at static initialisation). Idempotent.
void install_terminate_handler();

}  // namespace taskgrid::core
