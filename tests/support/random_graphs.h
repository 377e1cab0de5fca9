// Seeded random task graphs for the tests of the planners and engines
// (loopback and S4U backends alike): handles of random sizes and owners, tasks
// that read and write random subsets of them, and the same tasks run
// sequentially for comparison. Include it in one file of a test executable
// (it registers loopback_task).
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "taskgrid/taskgrid.hpp"

namespace taskgrid::engine {

inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A task: a digest of its salt and of every byte it reads, written into
// every byte it writes (each output byte also depends on its position), so a
// wrong input, a stale version or a lost write shows in the result.
struct Args {
  uint64_t salt;
};

inline uint64_t digest_of(const std::vector<std::pair<const uint8_t*, size_t>>& inputs,
                          uint64_t salt) {
  uint64_t digest = mix(salt);
  for (const auto& [data, bytes] : inputs)
    for (size_t i = 0; i < bytes; ++i) digest = mix(digest ^ data[i]);
  return digest;
}

inline void write_outputs(uint8_t* data, size_t bytes, uint64_t digest) {
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(mix(digest + i) >> 56);
}

struct AccessSpec {
  size_t handle;
  AccessMode mode;
};
struct TaskSpec {
  std::vector<AccessSpec> accesses;
  uint64_t salt;
  int hint;  // -1: the planner places it
};
struct Graph {
  std::vector<size_t> sizes;  // per handle
  std::vector<int> owners;    // per handle
  std::vector<TaskSpec> tasks;
};

inline bool reads(AccessMode mode) { return mode != AccessMode::out; }
inline bool writes(AccessMode mode) { return mode != AccessMode::in; }

// The task's work on its buffers (host memory, or an emulated device's
// through its host view), given its packed arguments (pack()).
inline void compute(const std::vector<uint8_t*>& data, const std::vector<size_t>& sizes,
                    const std::vector<char>& args) {
  Args head;
  std::memcpy(&head, args.data(), sizeof head);
  const auto* modes = reinterpret_cast<const uint8_t*>(args.data()) + sizeof(Args);
  std::vector<std::pair<const uint8_t*, size_t>> inputs;
  for (size_t i = 0; i < data.size(); ++i)
    if (reads(static_cast<AccessMode>(modes[i]))) inputs.emplace_back(data[i], sizes[i]);
  const uint64_t digest = digest_of(inputs, head.salt);
  for (size_t i = 0; i < data.size(); ++i)
    if (writes(static_cast<AccessMode>(modes[i]))) write_outputs(data[i], sizes[i], digest + i);
}

inline std::vector<char> args_of(const TaskContext& ctx) {
  const auto* bytes = static_cast<const char*>(ctx.args());
  return std::vector<char>(bytes, bytes + ctx.args_size());
}

inline void loopback_task(TaskContext& ctx) {
  std::vector<uint8_t*> data;
  std::vector<size_t> sizes;
  for (size_t i = 0; i < ctx.num_data(); ++i) {
    data.push_back(ctx.data_as<uint8_t>(i));
    sizes.push_back(ctx.size(i));
  }
  compute(data, sizes, args_of(ctx));
}
TASKGRID_REGISTER(loopback_task);

inline Graph generate(uint64_t seed, int ranks, size_t max_tasks = 40) {
  std::mt19937_64 random(seed);
  Graph g;
  const size_t handles = 1 + random() % 8;
  for (size_t h = 0; h < handles; ++h) {
    g.sizes.push_back(random() % 5 == 0 ? 0 : 1 + random() % 300);
    g.owners.push_back(static_cast<int>(random() % static_cast<uint64_t>(ranks)));
  }
  const size_t tasks = 1 + random() % max_tasks;
  for (size_t t = 0; t < tasks; ++t) {
    TaskSpec task;
    task.salt = random();
    task.hint = random() % 3 == 0 ? static_cast<int>(random() % static_cast<uint64_t>(ranks)) : -1;
    const size_t count = 1 + random() % 3;
    std::vector<bool> used(handles, false);
    for (size_t a = 0; a < count; ++a) {
      const size_t h = random() % handles;
      if (used[h]) continue;  // one access per handle
      used[h] = true;
      const auto mode = static_cast<AccessMode>(1 + random() % 3);
      task.accesses.push_back({h, mode});
    }
    g.tasks.push_back(task);
  }
  return g;
}

inline std::vector<uint8_t> initial_bytes(size_t handle, size_t bytes) {
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(mix(handle * 1000 + i));
  return data;
}

inline std::vector<char> pack(const TaskSpec& task) {
  std::vector<char> args(sizeof(Args) + task.accesses.size());
  const Args head{task.salt};
  std::memcpy(args.data(), &head, sizeof head);
  for (size_t i = 0; i < task.accesses.size(); ++i)
    args[sizeof(Args) + i] = static_cast<char>(task.accesses[i].mode);
  return args;
}

// The same tasks in submission order on plain buffers.
inline std::vector<std::vector<uint8_t>> run_sequentially(const Graph& g) {
  std::vector<std::vector<uint8_t>> state;
  for (size_t h = 0; h < g.sizes.size(); ++h) state.push_back(initial_bytes(h, g.sizes[h]));
  for (const TaskSpec& task : g.tasks) {
    std::vector<std::pair<const uint8_t*, size_t>> inputs;
    for (const AccessSpec& a : task.accesses)
      if (reads(a.mode)) inputs.emplace_back(state[a.handle].data(), state[a.handle].size());
    const uint64_t digest = digest_of(inputs, task.salt);
    for (size_t i = 0; i < task.accesses.size(); ++i)
      if (writes(task.accesses[i].mode))
        write_outputs(state[task.accesses[i].handle].data(), state[task.accesses[i].handle].size(),
                      digest + i);
  }
  return state;
}

// Registers the graph's handles on `planner` (either planner type), each over
// a host buffer of its initial bytes appended to `memory`.
template <typename Planner>
std::vector<DataHandle> enter_graph(Planner& planner, const Graph& g,
                                    std::vector<std::vector<uint8_t>>& memory) {
  std::vector<DataHandle> handles;
  for (size_t h = 0; h < g.sizes.size(); ++h) {
    memory.push_back(initial_bytes(h, g.sizes[h]));
    handles.push_back(planner.enter_data(memory.back().data(), g.sizes[h], g.owners[h]));
  }
  return handles;
}

// Submits `task` as `function` with its accesses, arguments and rank hint.
template <typename Planner>
void submit_spec(Planner& planner, const TaskSpec& task, const std::vector<DataHandle>& handles,
                 FunctionId function, TaskOptions options = {}) {
  std::vector<DataAccess> accesses;
  for (const AccessSpec& a : task.accesses) accesses.push_back({handles[a.handle], a.mode});
  options.rank = task.hint;
  const std::vector<char> args = pack(task);
  planner.submit(function, accesses.data(), accesses.size(), options, args.data(), args.size());
}

}  // namespace taskgrid::engine
