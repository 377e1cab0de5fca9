// How messages name an access mode: "in", "out" or "inout".
#pragma once

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::core {

inline const char* access_mode_name(AccessMode mode) {
  switch (mode) {
    case AccessMode::in:
      return "in";
    case AccessMode::out:
      return "out";
    case AccessMode::inout:
      return "inout";
  }
  return "?";
}

}  // namespace taskgrid::core
