// Task functions by name-derived identity, identical on every rank.
#pragma once

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::detail {

struct RegisteredFunction {
  TaskFunction function;  // on a CPU; nullptr for a device-only function
  const char* name;
  TaskFunction device_function = nullptr;  // register_device_function
};

// Whether any function has a device implementation (the runtime opens a
// device backend only then).
bool any_device_function();

// Looks up a function by id; nullptr when unknown.
const RegisteredFunction* find_function(FunctionId id);

}  // namespace taskgrid::detail
