// Checked mode's argument types (TASKGRID_CHECK=1). submit() knows each
// by-value argument's type at compile time (taskgrid::detail::ArgSignature);
// in checked mode the runtime appends them, encoded here, after the
// argument bytes (comm::wire::Task::signature_bytes: pointers do not travel
// to other ranks), and TaskContext::arg<T> compares the type it reads as.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::core {

// Appends the encoding of `types` (submit()'s table) to `out`.
void append_arg_signature(std::vector<char>& out, const detail::ArgType* types, size_t count);

// "" when reading `size` bytes at `offset` as the type named `type_name`
// (hash `type_hash`) reads an argument submitted as that type; otherwise
// what is wrong, e.g. "read argument 0 at offset 0 as 'int' but it was
// submitted as 'float'".
std::string arg_mismatch(const void* signature, size_t signature_bytes, size_t offset, size_t size,
                         uint64_t type_hash, std::string_view type_name);

}  // namespace taskgrid::core
