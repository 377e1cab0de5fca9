// Command-line pieces shared by the runtime's multi-rank test programs.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace taskgrid::testing {

// `text` as a whole number in [min, max] (decimal, 0x hex or 0 octal); else
// nullopt, with `problem` saying why in terms of `flag`.
inline std::optional<uint64_t> parse_whole_number(const char* text, const std::string& flag,
                                                  uint64_t min, uint64_t max,
                                                  std::string& problem) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 0);
  if (!*text || *end || errno || text[0] == '-' || value < min || value > max) {
    problem = flag + " needs a whole number from " + std::to_string(min) + " to " +
              std::to_string(max) + ", got \"" + text + "\"";
    return std::nullopt;
  }
  return value;
}

}  // namespace taskgrid::testing
