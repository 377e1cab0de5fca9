#include "comm/mpi/backend.h"

#include <dlfcn.h>
#include <mpi.h>

#include <stdexcept>

#include "comm/mpi/collectives.h"
#include "comm/mpi/family.h"
#include "comm/mpi/heartbeat.h"
#include "comm/mpi/task_channels.h"
#include "comm/mpi/transport.h"
#include "core/failure.h"

namespace taskgrid::comm::mpi {

struct MpiBackend::State {
  bool started_mpi = false;
  int thread_level = 0;
  std::unique_ptr<MpiTransport> transport;
  std::unique_ptr<MpiCollectives> collectives;
};

MpiStart start_mpi(int* argc, char*** argv) {
  MpiStart start;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    prepare_mpi_start();
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &start.thread_level);
    start.started_here = true;
  } else {
    MPI_Query_thread(&start.thread_level);
  }
  return start;
}

MpiBackend::MpiBackend(int* argc, char*** argv, size_t max_chunk)
    : state_(std::make_unique<State>()) {
  const MpiStart start = start_mpi(argc, argv);
  state_->started_mpi = start.started_here;
  state_->thread_level = start.thread_level;
  const int provided = start.thread_level;
  // One thread drives the engine at a time, but a program thread may drive it
  // while the engine thread exists, and a failing task aborts from its own
  // thread: the program's MPI calls must not interleave with ours.
  if (provided < MPI_THREAD_SERIALIZED)
    throw std::runtime_error("MPI provides thread level " + std::to_string(provided) +
                             "; TaskGrid needs MPI_THREAD_MULTIPLE (initialise MPI with "
                             "MPI_Init_thread)");
  state_->transport = std::make_unique<MpiTransport>(MPI_COMM_WORLD, max_chunk);
  state_->collectives = std::make_unique<MpiCollectives>(MPI_COMM_WORLD);
}

MpiBackend::~MpiBackend() = default;

Transport& MpiBackend::transport() { return *state_->transport; }
Collectives& MpiBackend::collectives() { return *state_->collectives; }
const std::vector<int32_t>& MpiBackend::node_of_rank() const {
  return state_->transport->node_of_rank();
}

std::unique_ptr<exec::TaskChannels> MpiBackend::make_channels(int count,
                                                              void (*fail)(int,
                                                                           const std::string&)) {
  return make_task_channels(state_->transport->communicator(), count, state_->transport->rank(),
                            fail);
}

bool MpiBackend::thread_multiple() const { return state_->thread_level >= MPI_THREAD_MULTIPLE; }

bool MpiBackend::reads_cuda_memory() const {
  // Looked up, not called by name: each query exists in one MPI family only,
  // and the program must link with either.
  using OpenMpiQuery = int (*)();
  using MpichQuery = int (*)(int, int*);
  if (void* query = dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support"))
    return reinterpret_cast<OpenMpiQuery>(query)() == 1;
  if (void* query = dlsym(RTLD_DEFAULT, "MPIX_GPU_query_support")) {
    constexpr int kCuda = 0;  // MPICH's MPIX_GPU_SUPPORT_CUDA
    int supported = 0;
    return reinterpret_cast<MpichQuery>(query)(kCuda, &supported) == MPI_SUCCESS && supported != 0;
  }
  return false;
}

std::unique_ptr<HeartbeatLink> MpiBackend::make_heartbeat_link() {
  return make_mpi_heartbeat_link();
}

void MpiBackend::finish(int seconds, int exit_status) {
  const int rank = state_->transport->rank();
  state_->collectives.reset();
  state_->transport.reset();
  if (!state_->started_mpi && !finalize_for_program_) return;
  if (seconds > 0)
    core::exit_after(seconds, rank,
                     "MPI_Finalize did not return within " + std::to_string(seconds) +
                         " s (TASKGRID_FINALIZE_TIMEOUT)",
                     exit_status);
  MPI_Finalize();
}

}  // namespace taskgrid::comm::mpi
