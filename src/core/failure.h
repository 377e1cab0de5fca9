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

}  // namespace taskgrid::core
