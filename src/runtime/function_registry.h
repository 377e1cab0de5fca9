// Task functions by name-derived identity, identical on every rank.
#pragma once

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::detail {

struct RegisteredFunction {
  TaskFunction function;
  const char* name;
};

// Looks up a function by id; nullptr when unknown.
const RegisteredFunction* find_function(FunctionId id);

}  // namespace taskgrid::detail
