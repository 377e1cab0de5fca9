// Crash handlers: a task (or the runtime) that faults, aborts or overflows
// its stack ends the job with a line naming the signal, the rank and the
// task that was running on the faulting thread, e.g.
//   error: taskgrid: rank 1: SIGSEGV (invalid memory access at 0x0) in task 'stencil' (id 42)
// then the previous handler (MPI's, or the default) runs as before.
#pragma once

namespace taskgrid::runtime {

// Installs the handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT
// (once; later calls only update the rank). Call after MPI starts: MPI
// libraries install handlers of their own, which ours then chain to.
void install_crash_handlers(int rank);

}  // namespace taskgrid::runtime
