// Task functions by name-derived identity, identical on every rank.
#pragma once

#include <cstdint>

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

// A hash of every registered function's id and name: two programs with
// the same task functions agree (a checkpoint names the program it is of).
uint64_t function_table_hash();

// Looks up a function by id; nullptr when unknown.
const RegisteredFunction* find_function(FunctionId id);

}  // namespace taskgrid::detail
