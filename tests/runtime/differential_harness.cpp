// Differential random-graph harness (taskgrid-differential).
//
// Generates seeded random task graphs and runs each one twice, in lockstep:
//   - the reference: the same task functions run sequentially, in submission
//     order, on plain buffers (renaming semantics emulated by copies);
//   - TaskGrid: the tasks submitted through the public API, placed by the
//     scheduler named in TASKGRID_SCHEDULER, on every rank of the job.
// Every handle's bytes seen through fetch() and exit_data() must equal the
// reference bit for bit. On the first difference the harness prints the
// seed, the graph index and the first differing byte, and exits 1.
//
//   taskgrid-differential --graphs N --seed S [--tasks-max M] [--only G] [--verbose]
//                         [--hang-seconds T]
//
// --only G runs graph G of the sequence alone (same graph as in the full run:
// each graph has its own seed derived from S and G), --verbose prints each
// graph's operations, which is what a bug report needs. A watchdog aborts the
// job, naming the graph and the last operation, when a graph makes no
// progress for T seconds (default 30): a hang becomes a failure with a
// reproducer instead of a CTest timeout.
//
// Graphs: 1-12 handles of 0-4096 bytes (odd sizes included), 1-M tasks with
// 1-4 accesses each (handles repeated, in/out/inout, at most one writing
// access per handle), a 64-bit salt and the access modes and sizes as
// by-value arguments, some rank and cost hints, and between submissions now
// and then wait(h), wait_all(), fetch(h) (checked against the reference at
// that point), release(h) (checked by a fetch first, or unchecked), exit_data
// and a late enter_data.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <taskgrid/device.hpp>
#include <taskgrid/taskgrid.hpp>
#include <thread>
#include <vector>

// The reference run calls task functions outside the runtime (src/ header).
#include "core/task_context_access.h"
#include "differential_hash.h"
#include "program_args.h"
#include "progress_watchdog.h"

namespace {

// ----------------------------------------------------------- task functions --

using differential::Buffers;
using differential::digest_inputs;
using differential::fill_outputs;
using differential::kMaxAccesses;
using differential::mix64;
using differential::reads;
using differential::TaskArgs;
using differential::writes;
static_assert(differential::kModeIn == static_cast<uint8_t>(taskgrid::AccessMode::in));
static_assert(differential::kModeOut == static_cast<uint8_t>(taskgrid::AccessMode::out));

TaskArgs load_args(const taskgrid::TaskContext& ctx) {
  const auto args = ctx.arg<TaskArgs>();
  if (args.count != ctx.num_data())
    throw std::runtime_error("arguments name " + std::to_string(args.count) +
                             " accesses, the context has " + std::to_string(ctx.num_data()));
  for (size_t i = 0; i < args.count; ++i) {
    if (ctx.size(i) != args.sizes[i])
      throw std::runtime_error("access " + std::to_string(i) + " has " +
                               std::to_string(ctx.size(i)) + " bytes, expected " +
                               std::to_string(args.sizes[i]));
    if (args.sizes[i] > 0 && ctx.data(i) == nullptr)
      throw std::runtime_error("access " + std::to_string(i) + " has no buffer");
  }
  return args;
}

const uint8_t* bytes_of(const taskgrid::TaskContext& ctx, size_t i) {
  return static_cast<const uint8_t*>(ctx.data(i));
}
uint8_t* writable_bytes(const taskgrid::TaskContext& ctx, size_t i) {
  return static_cast<uint8_t*>(ctx.data(i));
}

Buffers buffers_of(const taskgrid::TaskContext& ctx) {
  Buffers buffers;
  for (size_t i = 0; i < ctx.num_data() && i < kMaxAccesses; ++i) {
    buffers.data[i] = static_cast<uint8_t*>(ctx.data(i));
    buffers.size[i] = ctx.size(i);
  }
  return buffers;
}

uint64_t digest_inputs(const taskgrid::TaskContext& ctx, const TaskArgs& args) {
  return digest_inputs(buffers_of(ctx), args);
}

void fill_outputs(const taskgrid::TaskContext& ctx, const TaskArgs& args, uint64_t digest) {
  fill_outputs(buffers_of(ctx), args, digest);
}

// Whole-input digest, then fill.
void diff_hash_fill(taskgrid::TaskContext& ctx) {
  const TaskArgs args = load_args(ctx);
  fill_outputs(ctx, args, digest_inputs(ctx, args));
}

// Position-wise: each output byte is a running state over the inputs at
// rotated positions (an off-by-one in a transfer shows up locally).
void diff_rolling(taskgrid::TaskContext& ctx) {
  const TaskArgs args = load_args(ctx);
  const auto stride = ctx.arg<uint32_t>(sizeof(TaskArgs));  // packed right after, unaligned
  // Snapshot the readable bytes of other accesses first: an inout buffer of
  // this task is overwritten while later outputs are computed.
  std::vector<std::vector<uint8_t>> inputs(args.count);
  for (size_t j = 0; j < args.count; ++j)
    if (reads(args.modes[j])) inputs[j].assign(bytes_of(ctx, j), bytes_of(ctx, j) + ctx.size(j));
  uint64_t state = args.salt;
  for (size_t k = 0; k < args.count; ++k) {
    if (!writes(args.modes[k])) continue;
    uint8_t* out = writable_bytes(ctx, k);
    for (size_t b = 0; b < ctx.size(k); ++b) {
      uint64_t acc = state;
      for (size_t j = 0; j < args.count; ++j) {
        if (inputs[j].empty()) continue;
        acc += static_cast<uint64_t>(inputs[j][(b * stride + k) % inputs[j].size()]) << (8 * j);
      }
      state = acc * 6364136223846793005ULL + 1442695040888963407ULL;
      out[b] = static_cast<uint8_t>(state >> 56);
    }
  }
}

// Mirror image: output byte b depends on input byte size-1-b of every input.
void diff_reverse(taskgrid::TaskContext& ctx) {
  const TaskArgs args = load_args(ctx);
  const uint64_t digest = digest_inputs(ctx, args);
  std::vector<std::vector<uint8_t>> inputs(args.count);
  for (size_t j = 0; j < args.count; ++j)
    if (reads(args.modes[j])) inputs[j].assign(bytes_of(ctx, j), bytes_of(ctx, j) + ctx.size(j));
  for (size_t k = 0; k < args.count; ++k) {
    if (!writes(args.modes[k])) continue;
    uint8_t* out = writable_bytes(ctx, k);
    const size_t n = ctx.size(k);
    for (size_t b = 0; b < n; ++b) {
      uint8_t value = static_cast<uint8_t>(digest >> (8 * ((b + k) % 8)));
      for (size_t j = 0; j < args.count; ++j) {
        if (inputs[j].empty()) continue;
        value ^= static_cast<uint8_t>(inputs[j][inputs[j].size() - 1 - b % inputs[j].size()] + j);
      }
      out[b] = value;
    }
  }
}

// Compute-heavy: a variable busy loop, so durations (and the cost model's
// view of them) differ between functions and tasks finish out of order.
void diff_spin(taskgrid::TaskContext& ctx) {
  const TaskArgs args = load_args(ctx);
  uint64_t digest = digest_inputs(ctx, args);
  for (uint32_t i = 0; i < args.spin; ++i) digest = mix64(digest + i);
  fill_outputs(ctx, args, digest);
}

// The same as diff_hash_fill with a device implementation (used where
// TASKGRID_DEVICE gives the ranks devices; the CPU one otherwise): on CUDA a
// one-thread kernel of the same body (differential_cuda.cu, where the build
// has nvcc); on the emulated device, host work on the task's stream through
// the buffers' host views, in the order of the stream's copies.
void diff_device_hash_fill_on_cpu(taskgrid::TaskContext& ctx) {
  const TaskArgs args = load_args(ctx);
  fill_outputs(ctx, args, digest_inputs(ctx, args) ^ 0xd);
}
void diff_device_hash_fill(taskgrid::TaskContext& ctx) {
  const TaskArgs args = load_args(ctx);
  if (taskgrid::device_kind(ctx) == taskgrid::DeviceKind::cuda) {
#ifdef TASKGRID_DIFFERENTIAL_CUDA
    if (!differential::launch_hash_fill_on_cuda(ctx.stream(), buffers_of(ctx), args, 0xd))
      throw std::runtime_error("diff_device_hash_fill: the CUDA kernel did not launch");
    return;
#else
    throw std::runtime_error("diff_device_hash_fill: built without nvcc, no CUDA kernel");
#endif
  }
  Buffers views;
  for (size_t i = 0; i < args.count; ++i) {
    views.data[i] = static_cast<uint8_t*>(ctx.size(i) ? taskgrid::emulated_view(ctx, i) : nullptr);
    views.size[i] = ctx.size(i);
  }
  taskgrid::launch_host_work(
      ctx, [views, args] { fill_outputs(views, args, digest_inputs(views, args) ^ 0xd); });
}

TASKGRID_REGISTER(diff_hash_fill);
TASKGRID_REGISTER(diff_rolling);
TASKGRID_REGISTER(diff_reverse);
TASKGRID_REGISTER(diff_spin);
const taskgrid::FunctionId diff_device_hash_fill_id = taskgrid::register_device_function(
    "diff_device_hash_fill", diff_device_hash_fill_on_cpu, diff_device_hash_fill);

// The sequential reference runs each task's CPU implementation.
constexpr taskgrid::TaskFunction kFunctions[] = {diff_hash_fill, diff_rolling, diff_reverse,
                                                 diff_spin, diff_device_hash_fill_on_cpu};
constexpr const char* kFunctionNames[] = {"diff_hash_fill", "diff_rolling", "diff_reverse",
                                          "diff_spin", "diff_device_hash_fill"};
constexpr size_t kNumFunctions = sizeof(kFunctions) / sizeof(kFunctions[0]);

// ---------------------------------------------------------------- graphs ----

enum class OpKind { task, wait, wait_all, fetch, fetch_release, exit_data, release, enter };

struct TaskSpec {
  size_t function = 0;
  size_t count = 0;
  size_t handles[kMaxAccesses] = {};  // indices into the graph's handle list
  taskgrid::AccessMode modes[kMaxAccesses] = {};
  uint64_t salt = 0;
  uint32_t spin = 0;
  uint32_t stride = 1;
  uint64_t rank_draw = 0;  // rank hint = rank_draw % ranks when has_rank
  bool has_rank = false;
  double cost = 0;
};

struct Op {
  OpKind kind = OpKind::task;
  size_t handle = 0;  // wait, fetch, release, exit_data, enter
  TaskSpec task;
};

struct Graph {
  uint64_t seed = 0;
  std::vector<size_t> sizes;           // per handle, in order of entry
  std::vector<uint64_t> content_seed;  // initial bytes
  std::vector<bool> null_host;         // size 0 entered with a null pointer
  size_t initial_handles = 0;          // entered before the first operation
  std::vector<Op> ops;
  size_t tasks = 0;
};

constexpr size_t kMaxHandles = 12;
constexpr size_t kMaxBytes = 4096;

size_t random_size(std::mt19937_64& rng) {
  const uint64_t pick = rng() % 100;
  if (pick < 3) return 0;
  if (pick < 30) return 1 + rng() % 16;
  if (pick < 70) return 17 + rng() % 496;
  return 513 + rng() % (kMaxBytes - 512);
}

Graph generate(uint64_t graph_seed, size_t tasks_max) {
  std::mt19937_64 rng(graph_seed);
  Graph g;
  g.seed = graph_seed;
  auto add_handle = [&] {
    const size_t size = random_size(rng);
    g.sizes.push_back(size);
    g.content_seed.push_back(rng());
    g.null_host.push_back(size == 0 && rng() % 2 == 0);
    return g.sizes.size() - 1;
  };
  g.initial_handles = 1 + rng() % kMaxHandles;
  std::vector<size_t> live;
  for (size_t i = 0; i < g.initial_handles; ++i) live.push_back(add_handle());
  const size_t num_tasks = 1 + rng() % tasks_max;

  auto pick_live = [&]() -> size_t { return static_cast<size_t>(rng() % live.size()); };
  while (g.tasks < num_tasks) {
    // Now and then an operation between submissions.
    const uint64_t event = rng() % 1000;
    Op op;
    if (event < 40) {
      op.kind = OpKind::wait;
      op.handle = live[pick_live()];
    } else if (event < 80) {
      op.kind = OpKind::fetch;
      op.handle = live[pick_live()];
    } else if (event < 90) {
      op.kind = OpKind::wait_all;
    } else if (event < 115 && live.size() > 1) {
      const size_t at = pick_live();
      op.handle = live[at];
      const uint64_t how = rng() % 4;
      op.kind = how < 2 ? OpKind::fetch_release : how == 2 ? OpKind::exit_data : OpKind::release;
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
    } else if (event < 125 && g.sizes.size() < kMaxHandles) {
      op.kind = OpKind::enter;
      op.handle = add_handle();
      live.push_back(op.handle);
    } else {
      op.kind = OpKind::task;
      TaskSpec& t = op.task;
      t.function = static_cast<size_t>(rng() % kNumFunctions);
      t.count = 1 + static_cast<size_t>(rng() % kMaxAccesses);
      for (size_t i = 0; i < t.count; ++i) {
        t.handles[i] = live[pick_live()];
        auto mode = static_cast<taskgrid::AccessMode>(1 + rng() % 3);
        if (mode != taskgrid::AccessMode::in) {
          // At most one writing access per handle in a task.
          for (size_t j = 0; j < i; ++j)
            if (t.handles[j] == t.handles[i] && t.modes[j] != taskgrid::AccessMode::in)
              mode = taskgrid::AccessMode::in;
        }
        t.modes[i] = mode;
      }
      t.salt = rng();
      t.spin = t.function == 3 ? static_cast<uint32_t>(rng() % 20000) : 0;
      t.stride = 1 + static_cast<uint32_t>(rng() % 7);
      t.has_rank = rng() % 5 == 0;
      t.rank_draw = rng();
      t.cost = rng() % 10 == 0 ? 1e-6 * static_cast<double>(1 + rng() % 1000) : 0.0;
      g.tasks += 1;
    }
    g.ops.push_back(op);
  }
  // The end: every live handle is checked, most through exit_data.
  for (size_t h : live) {
    Op op;
    op.handle = h;
    op.kind = rng() % 4 == 0 ? OpKind::fetch_release : OpKind::exit_data;
    g.ops.push_back(op);
  }
  return g;
}

const char* mode_name(taskgrid::AccessMode mode) {
  switch (mode) {
    case taskgrid::AccessMode::in:
      return "in";
    case taskgrid::AccessMode::out:
      return "out";
    case taskgrid::AccessMode::inout:
      return "inout";
  }
  return "?";
}

const char* op_name(OpKind kind) {
  switch (kind) {
    case OpKind::task:
      return "task";
    case OpKind::wait:
      return "wait";
    case OpKind::wait_all:
      return "wait_all";
    case OpKind::fetch:
      return "fetch";
    case OpKind::fetch_release:
      return "fetch+release";
    case OpKind::exit_data:
      return "exit_data";
    case OpKind::release:
      return "release";
    case OpKind::enter:
      return "enter_data";
  }
  return "?";
}

void print_graph(const Graph& g, size_t index, int ranks) {
  std::printf("graph %zu (graph seed %llu): %zu handles entered first, %zu tasks\n", index,
              static_cast<unsigned long long>(g.seed), g.initial_handles, g.tasks);
  for (size_t h = 0; h < g.initial_handles; ++h)
    std::printf("  h%zu: %zu bytes%s\n", h, g.sizes[h], g.null_host[h] ? " (null host)" : "");
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (op.kind != OpKind::task) {
      if (op.kind == OpKind::wait_all)
        std::printf("  op %zu: wait_all\n", i);
      else if (op.kind == OpKind::enter)
        std::printf("  op %zu: enter_data h%zu (%zu bytes)\n", i, op.handle, g.sizes[op.handle]);
      else
        std::printf("  op %zu: %s h%zu\n", i, op_name(op.kind), op.handle);
      continue;
    }
    const TaskSpec& t = op.task;
    std::printf("  op %zu: %s(", i, kFunctionNames[t.function]);
    for (size_t a = 0; a < t.count; ++a)
      std::printf("%s%s h%zu", a ? ", " : "", mode_name(t.modes[a]), t.handles[a]);
    std::printf(")");
    if (t.has_rank)
      std::printf(" rank %d", static_cast<int>(t.rank_draw % static_cast<uint64_t>(ranks)));
    if (t.cost > 0) std::printf(" cost %g", t.cost);
    std::printf("\n");
  }
  std::fflush(stdout);
}

void fill_initial(std::vector<uint8_t>& bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng() >> 56);
}

// ------------------------------------------------------------- reference ----

// A difference from the reference ("MISMATCH"), or an error the harness
// caught on the way ("ERROR": an exception from the API or a harness bug).
struct Failure {
  std::string message;
  const char* kind = "MISMATCH";
};

TaskArgs make_args(const TaskSpec& t, const std::vector<size_t>& sizes) {
  TaskArgs args{};
  args.salt = t.salt;
  args.spin = t.spin;
  args.count = static_cast<uint8_t>(t.count);
  for (size_t i = 0; i < t.count; ++i) {
    args.sizes[i] = static_cast<uint16_t>(sizes[t.handles[i]]);
    args.modes[i] = static_cast<uint8_t>(t.modes[i]);
  }
  return args;
}

std::vector<char> pack_args(const TaskSpec& t, const std::vector<size_t>& sizes) {
  const TaskArgs args = make_args(t, sizes);
  std::vector<char> packed(sizeof args + (t.function == 1 ? sizeof(uint32_t) : 0));
  std::memcpy(packed.data(), &args, sizeof args);
  if (t.function == 1) std::memcpy(packed.data() + sizeof args, &t.stride, sizeof t.stride);
  return packed;
}

// One run of a task on private copies: `in` and `inout` buffers copy the
// current state, `out` buffers hold `garbage` (the function must not read it).
std::vector<std::vector<uint8_t>> run_reference_task(const TaskSpec& t,
                                                     const std::vector<std::vector<uint8_t>>& state,
                                                     const std::vector<char>& packed,
                                                     uint8_t garbage) {
  std::vector<std::vector<uint8_t>> buffers(t.count);
  std::vector<taskgrid::detail::TaskContextAccess::Buffer> views(t.count);
  for (size_t i = 0; i < t.count; ++i) {
    const std::vector<uint8_t>& current = state[t.handles[i]];
    if (t.modes[i] == taskgrid::AccessMode::out) {
      buffers[i].assign(current.size(), garbage);
    } else {
      buffers[i] = current;
    }
    buffers[i].reserve(1);  // a real pointer also for empty buffers
    views[i] = {buffers[i].data(), current.size()};
  }
  taskgrid::TaskContext ctx = taskgrid::detail::TaskContextAccess::make(
      views.data(), views.size(), packed.data(), packed.size(), 0, 0);
  kFunctions[t.function](ctx);
  for (size_t i = 0; i < t.count; ++i) {
    if (t.modes[i] == taskgrid::AccessMode::in && buffers[i] != state[t.handles[i]])
      throw Failure{
          std::string("harness bug: ") + kFunctionNames[t.function] + " wrote to an 'in' buffer",
          "ERROR"};
  }
  return buffers;
}

void run_reference(const TaskSpec& t, std::vector<std::vector<uint8_t>>& state,
                   const std::vector<char>& packed) {
  auto first = run_reference_task(t, state, packed, 0xA5);
  auto second = run_reference_task(t, state, packed, 0x3C);
  if (first != second)
    throw Failure{std::string("harness bug: ") + kFunctionNames[t.function] +
                      " reads its 'out' buffer (results depend on its prior content)",
                  "ERROR"};
  for (size_t i = 0; i < t.count; ++i)
    if (t.modes[i] != taskgrid::AccessMode::in) state[t.handles[i]] = std::move(first[i]);
}

// ----------------------------------------------------------------- driver ----

struct Options {
  size_t graphs = 100;
  uint64_t seed = 1;
  size_t tasks_max = 60;
  long only = -1;
  bool verbose = false;
  int hang_seconds = 30;
};

[[noreturn]] void usage(const char* problem) {
  std::fprintf(stderr,
               "taskgrid-differential: %s\n"
               "usage: taskgrid-differential --graphs N --seed S [--tasks-max M] [--only G] "
               "[--verbose] [--hang-seconds T]\n",
               problem);
  std::exit(2);
}

uint64_t parse_number(const char* text, const char* flag, uint64_t min, uint64_t max) {
  std::string problem;
  const auto value = taskgrid::testing::parse_whole_number(text, flag, min, max, problem);
  if (!value) usage(problem.c_str());
  return *value;
}

Options parse(int argc, char** argv) {
  Options o;
  bool have_graphs = false, have_seed = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage((flag + " needs a value").c_str());
      return argv[++i];
    };
    if (flag == "--graphs") {
      o.graphs = parse_number(value(), "--graphs", 1, 100'000'000);
      have_graphs = true;
    } else if (flag == "--seed") {
      o.seed = parse_number(value(), "--seed", 0, UINT64_MAX);
      have_seed = true;
    } else if (flag == "--tasks-max") {
      o.tasks_max = parse_number(value(), "--tasks-max", 1, 100'000);
    } else if (flag == "--only") {
      o.only = static_cast<long>(parse_number(value(), "--only", 0, 100'000'000));
    } else if (flag == "--hang-seconds") {
      o.hang_seconds = static_cast<int>(parse_number(value(), "--hang-seconds", 1, 86'400));
    } else if (flag == "--verbose") {
      o.verbose = true;
    } else {
      usage(("unknown argument \"" + flag + "\"").c_str());
    }
  }
  if (!have_graphs || !have_seed) usage("--graphs and --seed are required");
  if (o.only >= 0 && static_cast<size_t>(o.only) >= o.graphs)
    usage("--only G needs G < --graphs N");
  return o;
}

uint64_t graph_seed(uint64_t seed, size_t index) {
  return mix64(seed ^ mix64(static_cast<uint64_t>(index) + 0x243f6a8885a308d3ULL));
}

// Compares what TaskGrid returned with the reference.
void compare(const uint8_t* got, const std::vector<uint8_t>& expected, const std::string& what) {
  for (size_t b = 0; b < expected.size(); ++b) {
    if (got[b] == expected[b]) continue;
    char text[160];
    std::snprintf(text, sizeof text,
                  ": first differing byte at offset %zu of %zu: expected 0x%02x, got 0x%02x", b,
                  expected.size(), expected[b], got[b]);
    throw Failure{what + text};
  }
}

struct Counts {
  size_t tasks = 0;
  size_t checks = 0;
};

void run_graph(const Graph& g, size_t index, int ranks, const std::string& context,
               taskgrid::testing::ProgressWatchdog& watchdog, Counts& counts) {
  std::vector<std::vector<uint8_t>> reference(g.sizes.size());
  std::vector<std::vector<uint8_t>> host(g.sizes.size());
  std::vector<taskgrid::DataHandle> handles(g.sizes.size());
  // spmd: fetch fills the owner's host buffer; the other ranks only wait.
  std::vector<bool> checked_here(g.sizes.size(), true);
  auto enter = [&](size_t h) {
    reference[h].resize(g.sizes[h]);
    fill_initial(reference[h], g.content_seed[h]);
    host[h] = reference[h];
    void* pointer = g.null_host[h] ? nullptr : host[h].data();
    handles[h] = taskgrid::enter_data(pointer, g.sizes[h]);
    if (!handles[h]) throw Failure{"enter_data returned the null handle", "ERROR"};
    checked_here[h] = !taskgrid::is_spmd() || taskgrid::owner(handles[h]) == taskgrid::rank();
    // map(to:) copied the bytes: the program may reuse its buffer at once.
    std::fill(host[h].begin(), host[h].end(), uint8_t{0xEE});
  };
  auto check = [&](size_t h, size_t op) {
    if (!checked_here[h]) return;
    compare(host[h].data(), reference[h],
            "handle h" + std::to_string(h) + " (" + std::to_string(g.sizes[h]) +
                " bytes) after op " + std::to_string(op) + " (" + op_name(g.ops[op].kind) + ")");
    std::fill(host[h].begin(), host[h].end(), uint8_t{0xEE});  // the next fetch must rewrite it
    counts.checks += 1;
  };
  for (size_t h = 0; h < g.initial_handles; ++h) enter(h);

  std::vector<taskgrid::DataAccess> accesses;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    watchdog.progress(context + ": graph " + std::to_string(index) + " op " + std::to_string(i) +
                      " (" + op_name(op.kind) + ")");
    switch (op.kind) {
      case OpKind::task: {
        const TaskSpec& t = op.task;
        const std::vector<char> packed = pack_args(t, g.sizes);
        accesses.clear();
        for (size_t a = 0; a < t.count; ++a)
          accesses.push_back({handles[t.handles[a]], t.modes[a]});
        taskgrid::TaskOptions options;
        if (t.has_rank) options.rank = static_cast<int>(t.rank_draw % static_cast<uint64_t>(ranks));
        options.cost = t.cost;
        taskgrid::submit_packed(taskgrid::function_id(kFunctions[t.function]), accesses.data(),
                                accesses.size(), options, packed.data(), packed.size());
        run_reference(t, reference, packed);
        counts.tasks += 1;
        break;
      }
      case OpKind::wait:
        taskgrid::wait(handles[op.handle]);
        break;
      case OpKind::wait_all:
        taskgrid::wait_all();
        break;
      case OpKind::fetch:
        taskgrid::fetch(handles[op.handle]);
        check(op.handle, i);
        break;
      case OpKind::fetch_release:
        taskgrid::fetch(handles[op.handle]);
        check(op.handle, i);
        taskgrid::release(handles[op.handle]);
        break;
      case OpKind::exit_data:
        taskgrid::exit_data(handles[op.handle]);
        check(op.handle, i);
        break;
      case OpKind::release:
        taskgrid::release(handles[op.handle]);
        break;
      case OpKind::enter:
        enter(op.handle);
        break;
    }
  }
}

const char* scheduler_name() {
  // From the environment: this is also called after finish().
  const char* mode = std::getenv("TASKGRID_MODE");
  if (mode && std::string(mode) == "spmd") return "spmd";
  const char* name = std::getenv("TASKGRID_SCHEDULER");
  return name && *name ? name : "heft";
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  // Both modes, TASKGRID_MODE picks. Cluster mode: ranks > 0 serve inside
  // start() and exit there. spmd: every rank generates and submits the same graphs.
  taskgrid::start(&argc, &argv, taskgrid::Mode::from_environment);
  const int ranks = taskgrid::num_ranks();

  Counts counts;
  size_t graphs_run = 0;
  std::string failure;
  const char* failure_kind = "";
  size_t index = 0;
  {
    taskgrid::testing::ProgressWatchdog watchdog(options.hang_seconds, "differential");
    const std::string context = "seed " + std::to_string(options.seed) + ", graphs " +
                                std::to_string(options.graphs) + ", tasks-max " +
                                std::to_string(options.tasks_max) + ", scheduler " +
                                scheduler_name() + ", ranks " + std::to_string(ranks);
    const size_t first = options.only >= 0 ? static_cast<size_t>(options.only) : 0;
    const size_t last = options.only >= 0 ? first + 1 : options.graphs;
    for (index = first; index < last && failure.empty(); ++index) {
      const Graph g = generate(graph_seed(options.seed, index), options.tasks_max);
      if (options.verbose) print_graph(g, index, ranks);
      try {
        run_graph(g, index, ranks, context, watchdog, counts);
        graphs_run += 1;
      } catch (const Failure& f) {
        failure = f.message;
        failure_kind = f.kind;
      } catch (const std::exception& e) {
        failure = std::string("exception: ") + e.what();
        failure_kind = "ERROR";
      }
      if (!failure.empty()) {
        std::fprintf(stderr,
                     "differential: %s: seed %llu graph %zu (graph seed %llu), scheduler %s, "
                     "ranks %d: %s\n"
                     "differential: reproduce with: TASKGRID_SCHEDULER=%s mpiexec -n %d "
                     "taskgrid-differential --graphs %zu --seed %llu --tasks-max %zu --only %zu "
                     "--verbose\n",
                     failure_kind, static_cast<unsigned long long>(options.seed), index,
                     static_cast<unsigned long long>(g.seed), scheduler_name(), ranks,
                     failure.c_str(), scheduler_name(), ranks, options.graphs,
                     static_cast<unsigned long long>(options.seed), options.tasks_max, index);
        std::fflush(stderr);
      }
    }
    watchdog.progress(context + (failure.empty()
                                     ? ": finish() (every graph compared equal; the job did "
                                       "not shut down)"
                                     : ": finish() after the failure above"));
    taskgrid::finish();
  }
  if (!failure.empty()) return 1;
  // spmd: every rank ran the program; one summary line is enough.
  if (std::getenv("TASKGRID_MODE") && std::string(std::getenv("TASKGRID_MODE")) == "spmd" &&
      std::getenv("PMI_RANK") && std::string(std::getenv("PMI_RANK")) != "0")
    return 0;
  std::printf("differential: %zu graphs, %zu tasks, scheduler %s, ranks %d: all equal\n",
              graphs_run, counts.tasks, scheduler_name(), ranks);
  return 0;
}
