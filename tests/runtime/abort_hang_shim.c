/* Preloaded by runtime.error.abort_hangs: an MPI_Abort that never returns
 * (as when it blocks on MPI's lock, held by a thread stuck in MPI), to check
 * that a failing rank still ends the job (core::start_abort_deadline). The
 * communicator is not read, so its type (int or a pointer) does not matter. */
#include <unistd.h>

int MPI_Abort(long comm, int errorcode) {
  (void)comm;
  (void)errorcode;
  for (;;) pause();
  return 0;
}
