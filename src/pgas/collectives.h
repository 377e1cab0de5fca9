// Internal: what the host collectives (groups.cpp) share with the device
// collectives (device.cpp): finding a group, checking a root, the MPI types,
// the agreement check, and MPI's broadcast and all-reduce of host memory in
// pieces of at most 2^28 elements (MPI counts are ints).
#pragma once

#include <cstddef>
#include <cstdint>

#include "pgas/state.h"

namespace taskgrid::pgas {

// The live group behind `group`, or Error naming `call` (empty, unknown, freed).
GroupState& group_state(State& s, const Group& group, const char* call);
// ... of which this rank is a member.
GroupState& member_state(State& s, const Group& group, const char* call);
void check_root(const GroupState& g, int root, const char* call);
size_t type_size(DataType type);
// Throws Error naming the value for a type or reduction that does not exist.
void check_type_and_op(DataType type, ReduceOp op);
// Agrees on a data collective's arguments on `g` (ends the job on a mismatch).
void agree_collective(GroupState& g, CallKind kind, size_t count, DataType type, uint64_t op,
                      int root, const char* call);
// The MPI part of a collective (after the agreement), on host memory.
void mpi_broadcast(GroupState& g, void* data, size_t count, DataType type, int root,
                   const char* call);
void mpi_allreduce(GroupState& g, const void* send, void* recv, size_t count, DataType type,
                   ReduceOp op, const char* call);

}  // namespace taskgrid::pgas
