/* Preloaded by runtime.error.finalize_hangs: an MPI_Finalize that never
 * returns, as Debian's MPICH over TCP sometimes does, to check that
 * TaskGrid's shutdown stays bounded (TASKGRID_FINALIZE_TIMEOUT). */
#include <unistd.h>

int MPI_Finalize(void) {
  for (;;) pause();
  return 0;
}
