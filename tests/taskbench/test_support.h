// Helpers shared by the Task Bench core tests: build a BenchConfig from a
// flag string exactly as a system's main() would see it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/task_graph.h"

namespace taskbench_test {

inline std::vector<std::string> split_words(const std::string& flags) {
  std::istringstream in(flags);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// argv = {"taskbench", args...}; args are passed verbatim (may contain spaces).
inline taskbench::BenchConfig parse_args(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"taskbench"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  argv.push_back(nullptr);
  return taskbench::parse_options(static_cast<int>(argv.size() - 1), argv.data());
}

inline taskbench::BenchConfig parse(const std::string& flags) {
  return parse_args(split_words(flags));
}

// The UsageError message for `args`, or "<no error>" / "<other exception>".
inline std::string usage_error_args(const std::vector<std::string>& args) {
  try {
    parse_args(args);
  } catch (const taskbench::UsageError& error) {
    return error.what();
  } catch (...) {
    return "<other exception>";
  }
  return "<no error>";
}

inline std::string usage_error(const std::string& flags) {
  return usage_error_args(split_words(flags));
}

// Points of timestep t that are active, ascending.
inline std::vector<int64_t> active_points(const taskbench::TaskGraph& graph, int64_t timestep) {
  std::vector<int64_t> points;
  const int64_t offset = graph.offset_at(timestep);
  for (int64_t p = offset; p < offset + graph.width_at(timestep); ++p) points.push_back(p);
  return points;
}

inline std::vector<int64_t> inputs_of(const taskbench::TaskGraph& graph, int64_t timestep,
                                      int64_t point) {
  std::vector<int64_t> out{-12345};  // must be cleared by the callee
  graph.effective_inputs(timestep, point, out);
  return out;
}

inline std::vector<int64_t> consumers_of(const taskbench::TaskGraph& graph, int64_t timestep,
                                         int64_t point) {
  std::vector<int64_t> out{-12345};  // must be cleared by the callee
  graph.effective_consumers(timestep, point, out);
  return out;
}

// "0 1 2" -> {0, 1, 2}; "" -> {}.
inline std::vector<int64_t> ints(const std::string& text) {
  std::istringstream in(text);
  std::vector<int64_t> values;
  for (int64_t v; in >> v;) values.push_back(v);
  return values;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// True when `expected` appears in `lines` as an ordered subsequence (each
// expected line equal to some later line).
inline ::testing::AssertionResult contains_in_order(const std::string& text,
                                                    const std::vector<std::string>& expected) {
  const std::vector<std::string> lines = lines_of(text);
  size_t next = 0;
  for (const std::string& want : expected) {
    while (next < lines.size() && lines[next] != want) ++next;
    if (next == lines.size())
      return ::testing::AssertionFailure()
             << "line not found (in order): \"" << want << "\"\n--- text ---\n"
             << text;
    ++next;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace taskbench_test
