// Task-aware communication (the TAMPI model): non-blocking MPI operations
// issued from inside a task and bound to it. The task's outputs are released
// (and its successors start) only once its operations have completed; the
// worker thread that ran the body goes on with other tasks meanwhile.
//
//   void exchange(taskgrid::TaskContext& ctx) {
//     auto peer = ctx.arg<int>();
//     taskgrid::task_comm::isend(ctx, ctx.data(0), n, MPI_DOUBLE, peer, 0);
//     taskgrid::task_comm::irecv(ctx, ctx.data(1), n, MPI_DOUBLE, peer, 0);
//   }
//   taskgrid::submit(exchange, {in(mine), out(halo)}, {.channel = 0}, peer);
//
// A communicating task names a channel (TaskOptions::channel, 0 ..
// TASKGRID_CHANNELS-1). Each channel has its own communicator, and each rank
// posts a channel's operations in the order its tasks were submitted
// (operations of one task in call order), however the tasks happen to run.
// So in an SPMD program the k-th send to a peer with a tag meets the peer's
// k-th receive from this rank with that tag, even when many concurrent tasks
// use the same tag, and collectives on a channel happen in submission order
// on every rank. Channels are independent streams: use several to let
// unrelated exchanges post out of order. Buffers must stay valid until the
// task completes (a task's data buffers do).
#pragma once

#include <mpi.h>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::task_comm {

void isend(TaskContext& ctx, const void* buffer, int count, MPI_Datatype type, int dest, int tag);
void irecv(TaskContext& ctx, void* buffer, int count, MPI_Datatype type, int source, int tag);
void ibcast(TaskContext& ctx, void* buffer, int count, MPI_Datatype type, int root);
void iallreduce(TaskContext& ctx, const void* send, void* receive, int count, MPI_Datatype type,
                MPI_Op op);
// The task's channel communicator (for MPI_Comm_size, ranks; do not block on it).
MPI_Comm communicator(TaskContext& ctx);

}  // namespace taskgrid::task_comm
