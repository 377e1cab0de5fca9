// Calls for TaskGrid's own front ends (src/offload/), beside the public API:
// not installed, no stability promise.
#pragma once

#include <cstddef>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::detail {

// taskgrid::enter_data(host, bytes) without the copy: the runtime's first
// version is uninitialised and `host` (null allowed) only receives fetches.
// For data whose first access writes all of it.
DataHandle enter_data_unfilled(void* host, size_t bytes);

}  // namespace taskgrid::detail
