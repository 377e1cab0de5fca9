// MPI for one TaskGrid process, behind the seams the runtime uses: starts
// MPI (thread-multiple) unless the program did, owns the transport, the
// bookkeeping collectives and the task-aware channels' communicators, and
// finalizes under a deadline. The runtime's API (runtime/api.cpp) talks to
// this class and the two seams only, so it does not include <mpi.h>; a
// simulator backend would provide the same three things.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/collectives.h"
#include "comm/heartbeat.h"
#include "comm/transport.h"

namespace taskgrid::exec {
class TaskChannels;
}

namespace taskgrid::comm::mpi {

// MPI started for TaskGrid (the runtime, the PGAS layer): initialised with
// MPI_THREAD_MULTIPLE unless the program did it; the thread level MPI gives.
struct MpiStart {
  bool started_here = false;
  int thread_level = 0;
};
MpiStart start_mpi(int* argc, char*** argv);

class MpiBackend {
 public:
  // Throws std::runtime_error when MPI cannot give the thread level needed.
  // Transfers above `max_chunk` bytes travel as several messages (0: 1 GiB).
  MpiBackend(int* argc, char*** argv, size_t max_chunk);
  ~MpiBackend();
  MpiBackend(const MpiBackend&) = delete;
  MpiBackend& operator=(const MpiBackend&) = delete;

  Transport& transport();
  Collectives& collectives();
  // Per rank, the lowest rank on its node.
  const std::vector<int32_t>& node_of_rank() const;
  // One communicator per task-aware channel (collective: every rank, once).
  std::unique_ptr<exec::TaskChannels> make_channels(int count,
                                                    void (*fail)(int, const std::string&));
  // Whether MPI allows calls from any thread at once (MPI_THREAD_MULTIPLE).
  bool thread_multiple() const;
  // Whether this MPI reads and writes CUDA device memory (CUDA-aware MPI),
  // as it says at run time: Open MPI's MPIX_Query_cuda_support, MPICH's
  // MPIX_GPU_query_support (4.1 and later), whichever the library has;
  // false when it has neither.
  bool reads_cuda_memory() const;
  // The failure detector's link (collective: every rank, once; needs
  // thread_multiple()).
  std::unique_ptr<HeartbeatLink> make_heartbeat_link();
  // Frees the communicators and, if MPI was started here, finalizes it. A
  // finalize that does not return within `seconds` (> 0) makes the process
  // say so and exit with `exit_status` (seen with Debian's MPICH over TCP,
  // after all of the job's work was done).
  void finish(int seconds, int exit_status);
  // finish() finalizes MPI even though the program started it: for a process
  // that exits without returning to the program (a cluster-mode worker), so
  // the program's own MPI_Finalize never runs. Open MPI's launcher reports a
  // process that exits without it as an abnormal end; MPICH's does not.
  void finalize_for_program() { finalize_for_program_ = true; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  bool finalize_for_program_ = false;
};

}  // namespace taskgrid::comm::mpi
