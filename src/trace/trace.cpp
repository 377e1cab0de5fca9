#include "trace/trace.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "comm/collectives.h"
#include "taskgrid/taskgrid.hpp"
#include "trace/task_graph.h"

namespace taskgrid::trace {
namespace {

using nlohmann::json;

struct Event {
  const char* category;
  const char* name;
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t id;
  int64_t peer;
  uint64_t bytes;
};

struct ThreadLog {
  int thread_index;
  std::string name;
  std::vector<Event> events;
};

// An output file, opened at start-up on rank 0 (so a bad path fails early)
// and written at the end.
struct OutputFile {
  const char* variable;
  std::string path;
  FILE* file = nullptr;
};

std::atomic<bool> tracing{false};
int trace_rank = 0;
OutputFile trace_file{"TASKGRID_TRACE", {}, nullptr};
OutputFile dot_file{"TASKGRID_DOT", {}, nullptr};
std::mutex logs_mutex;
std::vector<std::unique_ptr<ThreadLog>> logs;  // one per thread that recorded

// Receives posted and not yet arrived (tracing only), by version and kind.
struct Pending {
  uint64_t start_ns;
  int64_t source;
  uint64_t bytes;
};
std::mutex pending_mutex;
std::unordered_map<uint64_t, Pending> pending;

uint64_t pending_key(Arrival kind, uint64_t version) {
  return version * 4 + static_cast<uint64_t>(kind);
}

const char* arrival_name(Arrival kind) {
  switch (kind) {
    case Arrival::receive:
      return "receive";
    case Arrival::fetch:
      return "fetch receive";
    case Arrival::broadcast:
      return "broadcast received";
  }
  return "receive";
}

ThreadLog& this_thread_log() {
  thread_local ThreadLog* log = nullptr;
  if (!log) {
    std::lock_guard lock(logs_mutex);
    logs.push_back(std::make_unique<ThreadLog>());
    log = logs.back().get();
    log->thread_index = static_cast<int>(logs.size()) - 1;
    log->name = "thread " + std::to_string(log->thread_index);
    log->events.reserve(4096);
  }
  return *log;
}

double micros(uint64_t ns) { return static_cast<double>(ns) * 1e-3; }

// This rank's events as a JSON array (valid UTF-8 whatever the task names).
std::string rank_events_json() {
  json events = json::array();
  std::lock_guard lock(logs_mutex);
  events.push_back({{"ph", "M"},
                    {"name", "process_name"},
                    {"pid", trace_rank},
                    {"args", {{"name", "rank " + std::to_string(trace_rank)}}}});
  for (const auto& log : logs) {
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", trace_rank},
                      {"tid", log->thread_index},
                      {"args", {{"name", log->name}}}});
    for (const Event& e : log->events) {
      json args = {{"id", e.id}};
      if (e.peer >= 0) {
        args["peer"] = e.peer;
        args["bytes"] = e.bytes;
      }
      events.push_back({{"ph", "X"},
                        {"cat", e.category},
                        {"name", e.name},
                        {"pid", trace_rank},
                        {"tid", log->thread_index},
                        {"ts", micros(e.start_ns)},
                        {"dur", micros(e.end_ns - e.start_ns)},
                        {"args", std::move(args)}});
    }
  }
  return events.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Where a span is, for the ends of its flow arrows.
struct Place {
  int pid;
  int64_t tid;
  double ts;
  double dur;
};

// Just inside a span's end (1 ns before it), where a flow end binds to it.
double inside_end(const Place& at) { return at.ts + std::max(0.0, at.dur - 0.001); }

json flow_end(const char* phase, const char* category, uint64_t id, const Place& at, double ts) {
  json event = {{"ph", phase},   {"cat", category}, {"name", category}, {"id", id},
                {"pid", at.pid}, {"tid", at.tid},   {"ts", ts}};
  // "e": bound to the slice enclosing ts (the default is the next one).
  if (phase[0] == 'f') event["bp"] = "e";
  return event;
}

// The flow events of the job: send -> receive of each transfer, and
// producer task -> consumer task of each edge of the task graph.
json flows(const std::vector<json>& ranks) {
  using SendKey = std::tuple<int, uint64_t, int64_t>;  // source rank, version, destination
  std::map<SendKey, std::deque<Place>> sends;
  std::map<std::pair<int, uint64_t>, Place> group_sends;  // MPI broadcast roots
  struct Receive {
    Place at;
    uint64_t version;
    int64_t source;
  };
  std::vector<Receive> receives;
  std::unordered_map<uint64_t, Place> task_spans;
  for (const json& events : ranks) {
    for (const json& e : events) {
      if (e.value("ph", "") != "X") continue;
      const std::string category = e.value("cat", "");
      const Place at{e.at("pid").get<int>(), e.at("tid").get<int64_t>(), e.at("ts").get<double>(),
                     e.at("dur").get<double>()};
      const json& args = e.at("args");
      const uint64_t id = args.value("id", uint64_t{0});
      if (category == "task") {
        task_spans.emplace(id, at);
        continue;
      }
      if (category != "comm") continue;
      const std::string name = e.value("name", "");
      const int64_t peer = args.value("peer", int64_t{-1});
      if (name == "send" || name == "broadcast send") {
        if (peer >= 0) {
          sends[{at.pid, id, peer}].push_back(at);
        } else {
          group_sends.emplace(std::make_pair(at.pid, id), at);
        }
      } else if (peer >= 0) {
        receives.push_back({at, id, peer});
      }
    }
  }
  json out = json::array();
  uint64_t next_id = 1;
  for (const Receive& receive : receives) {
    const Place* from = nullptr;
    Place send;
    auto it = sends.find({static_cast<int>(receive.source), receive.version, receive.at.pid});
    if (it != sends.end() && !it->second.empty()) {
      send = it->second.front();
      it->second.pop_front();
      from = &send;
    } else {
      auto group =
          group_sends.find(std::make_pair(static_cast<int>(receive.source), receive.version));
      if (group != group_sends.end()) from = &group->second;
    }
    if (!from) continue;
    const uint64_t flow = next_id++;
    out.push_back(flow_end("s", "transfer", flow, *from, from->ts));
    // At the arrival (the receive span's end): the span opens when the
    // receive is posted, which may be long before the send.
    out.push_back(flow_end("f", "transfer", flow, receive.at, inside_end(receive.at)));
  }
  for (const TaskEdge& edge : recorded_edges()) {
    const auto producer = task_spans.find(edge.producer);
    const auto consumer = task_spans.find(edge.consumer);
    if (producer == task_spans.end() || consumer == task_spans.end()) continue;
    const Place& p = producer->second;
    const uint64_t flow = next_id++;
    out.push_back(flow_end("s", "dependency", flow, p, inside_end(p)));
    out.push_back(flow_end("f", "dependency", flow, consumer->second, consumer->second.ts));
  }
  return out;
}

// Opens `output` for writing (rank 0, at start-up); throws when it cannot.
void open_output(OutputFile& output) {
  const char* value = std::getenv(output.variable);
  output.path = value ? value : "";
  if (output.path.empty() || trace_rank != 0) return;
  output.file = std::fopen(output.path.c_str(), "w");
  if (!output.file)
    throw Error(std::string(output.variable) + "=" + output.path +
                ": cannot write: " + std::strerror(errno));
}

// Writes `text` to `output` and closes it; false (said on stderr) on failure.
bool write_output(OutputFile& output, const std::string& text) {
  FILE* file = output.file;
  output.file = nullptr;
  if (!file) return true;
  errno = 0;
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  ok = std::fflush(file) == 0 && ok;
  const int error = errno;
  ok = std::fclose(file) == 0 && ok;
  if (!ok)
    std::fprintf(stderr, "error: taskgrid: rank %d: %s=%s: cannot write: %s\n", trace_rank,
                 output.variable, output.path.c_str(),
                 std::strerror(error   ? error
                               : errno ? errno
                                       : EIO));
  return ok;
}

bool write_dot() {
  if (!dot_file.file) return true;
  const std::vector<TaskNode>& tasks = recorded_tasks();
  if (tasks.size() > kDotMaxTasks)
    std::fprintf(stderr,
                 "taskgrid: TASKGRID_DOT: the graph has %zu tasks; only the first %zu are "
                 "written\n",
                 tasks.size(), kDotMaxTasks);
  const bool ok = write_output(dot_file, dot_text(tasks, recorded_edges(), kDotMaxTasks));
  if (ok)
    std::fprintf(stderr, "taskgrid: task graph (%zu tasks) written to %s\n",
                 std::min(tasks.size(), kDotMaxTasks), dot_file.path.c_str());
  return ok;
}

}  // namespace

void configure(int rank) {
  trace_rank = rank;
  open_output(trace_file);
  open_output(dot_file);
  tracing.store(!trace_file.path.empty());
  // The planner of rank 0 sees every task (cluster: it plans them all; spmd:
  // every rank plans the same sequence, rank 0's record is enough).
  set_graph_enabled(rank == 0 && (!trace_file.path.empty() || !dot_file.path.empty()));
}

bool enabled() { return tracing.load(std::memory_order_relaxed); }

namespace {
uint64_t (*clock_override)() = nullptr;
}  // namespace

void set_clock(uint64_t (*clock)()) { clock_override = clock; }

uint64_t now_ns() {
  if (clock_override) [[unlikely]]
    return clock_override();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void name_thread(const std::string& name) {
  if (!enabled()) return;
  ThreadLog& log = this_thread_log();
  std::lock_guard lock(logs_mutex);
  log.name = name;
}

void span(const char* category, const char* name, uint64_t start_ns, uint64_t end_ns, uint64_t id,
          int64_t peer, uint64_t bytes) {
  if (!enabled()) return;
  this_thread_log().events.push_back({category, name, start_ns, end_ns, id, peer, bytes});
}

void receive_posted(Arrival kind, uint64_t version, int64_t source, uint64_t bytes) {
  if (!enabled()) return;
  const uint64_t now = now_ns();
  std::lock_guard lock(pending_mutex);
  pending[pending_key(kind, version)] = {now, source, bytes};
}

void receive_done(Arrival kind, uint64_t version) {
  if (!enabled()) return;
  Pending posted;
  {
    std::lock_guard lock(pending_mutex);
    const auto it = pending.find(pending_key(kind, version));
    if (it == pending.end()) return;
    posted = it->second;
    pending.erase(it);
  }
  span("comm", arrival_name(kind), posted.start_ns, now_ns(), version, posted.source, posted.bytes);
}

bool write_job_trace(comm::Collectives& collectives) {
  bool ok = write_dot();
  if (!enabled()) return ok;
  const std::string mine = rank_events_json();
  const std::vector<std::vector<char>> gathered = collectives.gather(0, mine.data(), mine.size());
  if (collectives.rank() != 0) return ok;
  std::vector<json> ranks;
  ranks.reserve(gathered.size());
  std::string body;
  for (const std::vector<char>& text : gathered) {
    ranks.push_back(json::parse(text.begin(), text.end()));
    // Each rank's array without its brackets, as it came: no second dump.
    if (text.size() <= 2) continue;
    if (!body.empty()) body += ",\n";
    body.append(text.begin() + 1, text.end() - 1);
  }
  const json arrows = flows(ranks);
  for (const json& flow : arrows) {
    if (!body.empty()) body += ",\n";
    body += flow.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  // Clocks are per rank (steady_clock); on one machine they agree.
  const std::string text = "{\"traceEvents\":[\n" + body + "\n],\"displayTimeUnit\":\"ns\"}\n";
  if (!write_output(trace_file, text)) return false;
  std::fprintf(stderr, "taskgrid: trace of %d ranks written to %s\n", collectives.size(),
               trace_file.path.c_str());
  return ok;
}

}  // namespace taskgrid::trace
