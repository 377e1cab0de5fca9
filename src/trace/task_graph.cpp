#include "trace/task_graph.h"

#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include "core/function_registry.h"
#include "graph/dependency_tracker.h"

namespace taskgrid::trace {
namespace {

std::atomic<bool> recording{false};
// Written by the planner under its lock, read at shutdown after the planner
// has stopped: no lock of its own.
std::vector<TaskNode> tasks;
std::vector<TaskEdge> edges;
// The task that wrote each live version (entered data has none).
std::unordered_map<uint64_t, uint64_t> writer_of;

// The length of the valid UTF-8 sequence at `at` (0: invalid).
size_t utf8_sequence(const unsigned char* at, const unsigned char* end) {
  const unsigned char c = at[0];
  if (c < 0x80) return 1;
  size_t length = 0;
  uint32_t min = 0;
  uint32_t code = 0;
  if ((c & 0xE0) == 0xC0) {
    length = 2, min = 0x80, code = c & 0x1Fu;
  } else if ((c & 0xF0) == 0xE0) {
    length = 3, min = 0x800, code = c & 0x0Fu;
  } else if ((c & 0xF8) == 0xF0) {
    length = 4, min = 0x10000, code = c & 0x07u;
  } else {
    return 0;
  }
  if (static_cast<size_t>(end - at) < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((at[i] & 0xC0) != 0x80) return 0;
    code = (code << 6) | (at[i] & 0x3Fu);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are invalid too.
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

// A DOT double-quoted string's body: valid UTF-8, quotes and backslashes escaped.
void append_dot_escaped(std::string& out, const std::string& text) {
  for (const char c : valid_utf8(text)) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) >= 0x20) {
      out += c;
    }
  }
}

}  // namespace

bool graph_enabled() { return recording.load(std::memory_order_relaxed); }
void set_graph_enabled(bool on) { recording.store(on); }

void record_task(uint64_t task_id, const char* name, uint32_t function, int rank,
                 const graph::ResolvedAccess* accesses, size_t count) {
  if (!name) {
    const detail::RegisteredFunction* registered = detail::find_function(FunctionId{function});
    name = registered ? registered->name : "task";
  }
  tasks.push_back({task_id, name, rank});
  for (size_t i = 0; i < count; ++i) {
    const graph::ResolvedAccess& access = accesses[i];
    if (access.in_version) {
      const auto writer = writer_of.find(access.in_version);
      if (writer != writer_of.end()) edges.push_back({writer->second, task_id, access.handle});
    }
    if (access.out_version) {
      // The replaced version gets no new readers: forget its writer.
      if (access.superseded) writer_of.erase(access.superseded);
      if (access.in_version) writer_of.erase(access.in_version);
      writer_of[access.out_version] = task_id;
    }
  }
}

const std::vector<TaskNode>& recorded_tasks() { return tasks; }
const std::vector<TaskEdge>& recorded_edges() { return edges; }

std::string valid_utf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  const auto* at = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = at + text.size();
  while (at < end) {
    const size_t length = utf8_sequence(at, end);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++at;
    } else {
      out.append(reinterpret_cast<const char*>(at), length);
      at += length;
    }
  }
  return out;
}

std::string dot_text(const std::vector<TaskNode>& all_tasks, const std::vector<TaskEdge>& all_edges,
                     size_t max_tasks) {
  std::string out = "digraph taskgrid {\n  node [shape=box];\n";
  const size_t kept = std::min(all_tasks.size(), max_tasks);
  if (kept < all_tasks.size())
    out += "  // " + std::to_string(all_tasks.size() - kept) + " of " +
           std::to_string(all_tasks.size()) + " tasks left out (the first " +
           std::to_string(max_tasks) + " are written)\n";
  std::unordered_set<uint64_t> written;
  written.reserve(kept);
  for (size_t i = 0; i < kept; ++i) {
    const TaskNode& task = all_tasks[i];
    written.insert(task.id);
    out += "  t" + std::to_string(task.id) + " [label=\"";
    append_dot_escaped(out, task.name);
    out += "\\n#" + std::to_string(task.id);
    if (task.rank >= 0) out += "\\nrank " + std::to_string(task.rank);
    out += "\"];\n";
  }
  for (const TaskEdge& edge : all_edges) {
    if (!written.count(edge.producer) || !written.count(edge.consumer)) continue;
    out += "  t" + std::to_string(edge.producer) + " -> t" + std::to_string(edge.consumer) +
           " [label=\"h" + std::to_string(edge.handle) + "\"];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace taskgrid::trace
