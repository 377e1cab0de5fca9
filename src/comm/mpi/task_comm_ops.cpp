#include "comm/mpi/task_comm_ops.h"

namespace taskgrid::comm::mpi {

int post_operation(const CommOperation& o, MPI_Comm comm, MPI_Request* request) {
  switch (o.kind) {
    case CommOperation::Kind::send:
      return MPI_Isend(o.send_buffer, o.count, o.datatype, o.peer, o.tag, comm, request);
    case CommOperation::Kind::receive:
      return MPI_Irecv(o.receive_buffer, o.count, o.datatype, o.peer, o.tag, comm, request);
    case CommOperation::Kind::broadcast:
      return MPI_Ibcast(o.receive_buffer, o.count, o.datatype, o.peer, comm, request);
    case CommOperation::Kind::allreduce:
      return MPI_Iallreduce(o.send_buffer, o.receive_buffer, o.count, o.datatype, o.op, comm,
                            request);
  }
  return MPI_ERR_OTHER;
}

bool requests_complete(std::vector<MPI_Request>& requests, int& error) {
  if (requests.empty()) return true;
  int done = 0;
  error =
      MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
  return error == MPI_SUCCESS && done;
}

}  // namespace taskgrid::comm::mpi
