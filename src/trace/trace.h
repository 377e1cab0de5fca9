// Per-thread event recording and the job-wide Chrome/Perfetto trace
// (TASKGRID_TRACE=path). Recording appends to a buffer owned by the calling
// thread: no locks on the hot path, nothing at all when tracing is off.
#pragma once

#include <cstdint>
#include <string>

namespace taskgrid::comm {
class Collectives;
}

namespace taskgrid::trace {

// Reads TASKGRID_TRACE; call once per process before any recording.
void configure(int rank);
bool enabled();
uint64_t now_ns();

// Names this thread in the trace ("engine", "worker 1", ...).
void name_thread(const std::string& name);
// A complete span on the calling thread. `name` must outlive the job (a
// registered function name or a literal).
void span(const char* category, const char* name, uint64_t start_ns, uint64_t end_ns,
          uint64_t id = 0, int64_t peer = -1, uint64_t bytes = 0);

// Collective over `collectives`: gathers every rank's events on rank 0, which
// writes one trace file for the whole job. No-op when tracing is off.
void write_job_trace(comm::Collectives& collectives);

}  // namespace taskgrid::trace
