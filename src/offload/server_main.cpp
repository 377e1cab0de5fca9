// taskgrid-offload-server: an OpenMP device rank that runs no copy of the
// program (the MPMD form):
//
//   mpiexec.mpich -n 1 env LD_LIBRARY_PATH=<TaskGrid lib> ./program
//                 : -n 3 <TaskGrid bin>/taskgrid-offload-server     (one line)
//
// Rank 0 sends it each device image when first used there. The images call
// LLVM's OpenMP runtime (libomp), which the program has and this server does
// not: it loads the one it was configured with (TASKGRID_OFFLOAD_LIBOMP
// overrides) into the global namespace first.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "offload/server_tasks.h"
#include "taskgrid/taskgrid.hpp"

int main(int argc, char** argv) {
  const char* libomp = std::getenv("TASKGRID_OFFLOAD_LIBOMP");
  if (!libomp) libomp = TASKGRID_OFFLOAD_DEFAULT_LIBOMP;
  if (!dlopen(libomp, RTLD_NOW | RTLD_GLOBAL)) {
    std::fprintf(stderr,
                 "error: taskgrid-offload-server: cannot load LLVM's OpenMP runtime %s: %s "
                 "(set TASKGRID_OFFLOAD_LIBOMP)\n",
                 libomp, dlerror());
    return 1;
  }
  try {
    (void)taskgrid::offload::offload_functions();
    taskgrid::offload::prepare_device_rank(nullptr);
    taskgrid::start(&argc, &argv, taskgrid::Mode::cluster);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: taskgrid-offload-server: %s\n", error.what());
    return 1;
  }
  // start returns only on rank 0, which must be the program.
  std::fprintf(stderr,
               "error: taskgrid-offload-server: started as rank 0; rank 0 must be the OpenMP "
               "program (mpiexec -n 1 ./program : -n N taskgrid-offload-server)\n");
  return taskgrid::finish(2);
}
