#include "trace/trace.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/collectives.h"

namespace taskgrid::trace {
namespace {

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

std::atomic<bool> tracing{false};
std::string trace_path;
int trace_rank = 0;
std::mutex logs_mutex;
std::vector<std::unique_ptr<ThreadLog>> logs;  // one per thread that recorded

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

void append_escaped(std::string& out, const char* text) {
  for (const char* c = text; *c; ++c) {
    if (*c == '"' || *c == '\\') out += '\\';
    if (static_cast<unsigned char>(*c) >= 0x20) out += *c;
  }
}

// This rank's events as JSON objects, each followed by ",\n".
std::string rank_events_json() {
  std::string out;
  char number[512];
  std::lock_guard lock(logs_mutex);
  std::snprintf(
      number, sizeof number,
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}},\n",
      trace_rank, trace_rank);
  out += number;
  for (const auto& log : logs) {
    out += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(trace_rank) +
           ",\"tid\":" + std::to_string(log->thread_index) + ",\"args\":{\"name\":\"";
    append_escaped(out, log->name.c_str());
    out += "\"}},\n";
    for (const Event& e : log->events) {
      out += "{\"ph\":\"X\",\"cat\":\"";
      append_escaped(out, e.category);
      out += "\",\"name\":\"";
      append_escaped(out, e.name);
      std::snprintf(number, sizeof number,
                    "\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"id\":%llu",
                    trace_rank, log->thread_index, static_cast<double>(e.start_ns) * 1e-3,
                    static_cast<double>(e.end_ns - e.start_ns) * 1e-3,
                    static_cast<unsigned long long>(e.id));
      out += number;
      if (e.peer >= 0) {
        std::snprintf(number, sizeof number, ",\"peer\":%lld,\"bytes\":%llu",
                      static_cast<long long>(e.peer), static_cast<unsigned long long>(e.bytes));
        out += number;
      }
      out += "}},\n";
    }
  }
  return out;
}

}  // namespace

void configure(int rank) {
  trace_rank = rank;
  const char* path = std::getenv("TASKGRID_TRACE");
  trace_path = path ? path : "";
  tracing.store(!trace_path.empty());
}

bool enabled() { return tracing.load(std::memory_order_relaxed); }

uint64_t now_ns() {
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

void write_job_trace(comm::Collectives& collectives) {
  if (!enabled()) return;
  const std::string mine = rank_events_json();
  const std::vector<std::vector<char>> events = collectives.gather(0, mine.data(), mine.size());
  if (collectives.rank() != 0) return;
  std::string all;
  for (const std::vector<char>& rank_events : events)
    all.append(rank_events.begin(), rank_events.end());
  // Clocks are per rank (steady_clock); on one machine they agree.
  if (all.size() >= 2) all.resize(all.size() - 2);  // drop the last ",\n"
  FILE* file = std::fopen(trace_path.c_str(), "w");
  if (!file) {
    std::fprintf(stderr, "error: taskgrid: cannot write the trace to %s\n", trace_path.c_str());
    return;
  }
  std::fprintf(file, "{\"traceEvents\":[\n%s\n],\"displayTimeUnit\":\"ns\"}\n", all.c_str());
  std::fclose(file);
  std::fprintf(stderr, "taskgrid: trace of %d ranks written to %s\n", collectives.size(),
               trace_path.c_str());
}

}  // namespace taskgrid::trace
