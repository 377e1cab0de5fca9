// Task-aware communication inside the engine: the operations a task body
// records (taskgrid/task_comm.hpp) and their posting. Bodies only record; the
// engine thread posts each channel's operations in submission order, which is
// what makes matching deterministic across ranks (see docs/architecture.md).
#pragma once

#include <mpi.h>

#include <vector>

namespace taskgrid::comm::mpi {

struct CommOperation {
  enum class Kind { send, receive, broadcast, allreduce } kind;
  const void* send_buffer;
  void* receive_buffer;
  int count;
  MPI_Datatype datatype;
  int peer;  // destination, source or root
  int tag;
  MPI_Op op;
};

// What a running task can reach through detail::TaskContextAccess::binding().
struct TaskBinding {
  int channel = -1;
  int rank = 0;
  MPI_Comm communicator = MPI_COMM_NULL;
  std::vector<CommOperation>* operations = nullptr;
};

// Posts one operation on `comm`; returns the MPI error code.
int post_operation(const CommOperation& operation, MPI_Comm comm, MPI_Request* request);
// Tests the requests; true when all are complete. Fails loudly on MPI errors.
bool requests_complete(std::vector<MPI_Request>& requests, int& error);

}  // namespace taskgrid::comm::mpi
