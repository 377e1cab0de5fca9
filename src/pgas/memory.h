// Internal: validating handles and ranges, and finding a rank's part of an
// allocation (memory.cpp); used by the one-sided operations.
#pragma once

#include "pgas/state.h"

namespace taskgrid::pgas {

struct Part {
  uint64_t offset;  // in that rank's segment
  uint64_t bytes;
};

// The live allocation behind `memory`, or Error naming `call` (freed, unknown).
Allocation& checked_allocation(State& s, Memory memory, const char* call);
void check_rank(const State& s, int rank, const char* call);
// `rank`'s part (an asymmetric one's descriptor is fetched once, then cached).
Part part_on(State& s, Allocation& a, int rank, const char* call);
// The window displacement of [offset, offset + bytes) of `memory` on `rank`,
// after checking that the range lies inside that rank's part.
uint64_t target_displacement(State& s, Memory memory, int rank, size_t offset, size_t bytes,
                             const char* call);

}  // namespace taskgrid::pgas
