// The task graph as the planner saw it: tasks (id, name, placement) and
// read-after-write edges (the task that wrote a version -> each task that
// reads it). Recorded on rank 0 only, and only when TASKGRID_TRACE or
// TASKGRID_DOT is set: the trace draws the edges as flow arrows, the DOT
// dump (TASKGRID_DOT=path) is the graph itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace taskgrid::graph {
struct ResolvedAccess;
}

namespace taskgrid::trace {

struct TaskNode {
  uint64_t id;
  std::string name;
  int rank;  // where the planner placed it (-1: unknown)
};

struct TaskEdge {
  uint64_t producer;
  uint64_t consumer;
  uint64_t handle;  // the data the consumer reads
};

// Whether the planner records the graph (one predictable branch when not).
bool graph_enabled();
void set_graph_enabled(bool on);

// The planner, at submission: task `task_id` (named `name`, or the
// registered function's name when null) placed on `rank`, with its accesses.
void record_task(uint64_t task_id, const char* name, uint32_t function, int rank,
                 const graph::ResolvedAccess* accesses, size_t count);

const std::vector<TaskNode>& recorded_tasks();
const std::vector<TaskEdge>& recorded_edges();

// The DOT text of a graph; beyond `max_tasks` tasks only the first are
// written (with the edges among them) and a comment says how many were left out.
std::string dot_text(const std::vector<TaskNode>& tasks, const std::vector<TaskEdge>& edges,
                     size_t max_tasks);
// The largest graph TASKGRID_DOT writes whole (bigger ones are cut, with a warning).
constexpr size_t kDotMaxTasks = 20000;

// `text` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string valid_utf8(const std::string& text);

}  // namespace taskgrid::trace
