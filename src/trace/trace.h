// Per-thread event recording and the job-wide Chrome/Perfetto trace
// (TASKGRID_TRACE=path). Recording appends to a buffer owned by the calling
// thread: no locks on the hot path, nothing at all when tracing is off.
// The task graph dump (TASKGRID_DOT=path) is in trace/task_graph.h.
#pragma once

#include <cstdint>
#include <string>

namespace taskgrid::comm {
class Collectives;
}

namespace taskgrid::trace {

// Reads TASKGRID_TRACE and TASKGRID_DOT; call once per process, after the
// rank is known and before any recording. Rank 0 opens (creates or
// truncates) both files now, so a path it cannot write fails the start
// (taskgrid::Error "TASKGRID_TRACE=<path>: cannot write: <reason>"), not the end.
void configure(int rank);
bool enabled();
uint64_t now_ns();
// Makes now_ns() read `clock` (a simulator's time; nullptr: the steady clock
// again). Set before the job's threads start.
void set_clock(uint64_t (*clock)());

// Names this thread in the trace ("engine", "worker 1", ...).
void name_thread(const std::string& name);
// A complete span on the calling thread. `name` must outlive the job (a
// registered function name or a literal). Sends are spans named "send" or
// "broadcast send" (peer: the destination, none for an MPI broadcast's root).
void span(const char* category, const char* name, uint64_t start_ns, uint64_t end_ns,
          uint64_t id = 0, int64_t peer = -1, uint64_t bytes = 0);

// Receive spans ("comm"): from the moment a rank expects a version's data
// from `source` until it has arrived. Call only when enabled().
enum class Arrival : uint8_t { receive, fetch, broadcast };
void receive_posted(Arrival kind, uint64_t version, int64_t source, uint64_t bytes);
void receive_done(Arrival kind, uint64_t version);

// Collective over `collectives` when tracing: gathers every rank's events on
// rank 0, which writes one trace file for the whole job, with flow arrows
// from each send to its receive and from each task to the tasks that read
// its outputs. Rank 0 also writes the TASKGRID_DOT file. Returns false when
// this rank could not write a file it had to (the message is on stderr).
bool write_job_trace(comm::Collectives& collectives);

}  // namespace taskgrid::trace
