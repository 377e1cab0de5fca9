// The public task-aware calls: validate, then record for the engine.
#include "taskgrid/task_comm.hpp"

#include <string>

#include "comm/mpi/task_comm_ops.h"
#include "core/task_context_access.h"

namespace taskgrid::task_comm {
namespace {

comm::mpi::TaskBinding& binding_of(TaskContext& ctx, const char* call) {
  auto* binding = static_cast<comm::mpi::TaskBinding*>(detail::TaskContextAccess::binding(ctx));
  if (!binding) throw Error(std::string("taskgrid::task_comm::") + call + ": not inside a task");
  if (binding->channel < 0)
    throw Error(std::string("taskgrid::task_comm::") + call +
                ": the task was submitted without a channel (set TaskOptions::channel)");
  return *binding;
}

void record(TaskContext& ctx, const char* call, const comm::mpi::CommOperation& operation) {
  comm::mpi::TaskBinding& binding = binding_of(ctx, call);
  if (operation.count < 0)
    throw Error(std::string("taskgrid::task_comm::") + call + ": negative count");
  binding.operations->push_back(operation);
}

}  // namespace

void isend(TaskContext& ctx, const void* buffer, int count, MPI_Datatype type, int dest, int tag) {
  record(
      ctx, "isend",
      {comm::mpi::CommOperation::Kind::send, buffer, nullptr, count, type, dest, tag, MPI_OP_NULL});
}

void irecv(TaskContext& ctx, void* buffer, int count, MPI_Datatype type, int source, int tag) {
  record(ctx, "irecv",
         {comm::mpi::CommOperation::Kind::receive, nullptr, buffer, count, type, source, tag,
          MPI_OP_NULL});
}

void ibcast(TaskContext& ctx, void* buffer, int count, MPI_Datatype type, int root) {
  record(ctx, "ibcast",
         {comm::mpi::CommOperation::Kind::broadcast, nullptr, buffer, count, type, root, 0,
          MPI_OP_NULL});
}

void iallreduce(TaskContext& ctx, const void* send, void* receive, int count, MPI_Datatype type,
                MPI_Op op) {
  record(ctx, "iallreduce",
         {comm::mpi::CommOperation::Kind::allreduce, send, receive, count, type, 0, 0, op});
}

MPI_Comm communicator(TaskContext& ctx) { return binding_of(ctx, "communicator").communicator; }

}  // namespace taskgrid::task_comm
