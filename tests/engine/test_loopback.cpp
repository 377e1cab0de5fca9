// The real planners and engines of 1-8 ranks in one process, over the
// loopback transport (no MPI, no mpiexec), in spmd mode: seeded random task
// graphs, each rank's program thread submitting the same sequence, checked
// byte for byte against the same tasks run sequentially.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "comm/loopback/transport.h"
#include "device/emulated_backend.h"
#include "engine/engine.h"
#include "plan/planner.h"
#include "taskgrid/device.hpp"
#include "tests/support/counting_blocking.h"
#include "tests/support/random_graphs.h"

namespace taskgrid::engine {
namespace {

// The same task with a device implementation: on an emulated device it is
// host work on the task's stream, through the buffers' host views (the device
// pointers themselves fault). Its CPU implementation counts its runs, so a
// run with devices can check that none ran on a CPU.
std::atomic<uint64_t> device_task_cpu_runs{0};
void loopback_device_task_on_cpu(TaskContext& ctx) {
  device_task_cpu_runs += 1;
  loopback_task(ctx);
}
// With device hints (LoopbackRun::device_hints), the device a task asked for:
// (salt >> 8) modulo the devices per rank; runs on another device are counted.
std::atomic<int> hinted_devices{0};
std::atomic<uint64_t> hinted_runs{0};
std::atomic<uint64_t> runs_elsewhere{0};
int hinted_device(uint64_t salt, int devices) { return static_cast<int>((salt >> 8) % devices); }

void loopback_device_task(TaskContext& ctx) {
  if (device_kind(ctx) != DeviceKind::emulated || ctx.device() < 0 || !ctx.stream())
    throw Error("loopback_device_task: not on an emulated device");
  if (const int devices = hinted_devices.load(); devices > 0) {
    hinted_runs += 1;
    if (ctx.device() != hinted_device(ctx.arg<Args>().salt, devices)) runs_elsewhere += 1;
  }
  std::vector<uint8_t*> views;
  std::vector<size_t> sizes;
  for (size_t i = 0; i < ctx.num_data(); ++i) {
    views.push_back(static_cast<uint8_t*>(ctx.size(i) ? emulated_view(ctx, i) : nullptr));
    sizes.push_back(ctx.size(i));
  }
  launch_host_work(ctx, [views, sizes, args = args_of(ctx)] { compute(views, sizes, args); });
}
const FunctionId loopback_device_task_id = register_device_function(
    "loopback_device_task", loopback_device_task_on_cpu, loopback_device_task);

// Finishes only once the watched thread has gone to sleep in the seam's
// Blocking (see ThePlannerWaitsThroughTheTransportsBlocking).
comm::CountingBlocking* waited_by_program = nullptr;
void until_the_program_sleeps(TaskContext&) {
  while (waited_by_program->watched_waits() == 0) std::this_thread::yield();
}
TASKGRID_REGISTER(until_the_program_sleeps);

// How a graph is run on the loopback ranks.
struct LoopbackRun {
  int ranks = 1;
  int threads = 1;
  uint64_t window = 0;        // tasks in flight per rank before submit waits (0: no limit)
  uint64_t window_bytes = 0;  // bytes those tasks write before submit waits (0: no limit)
  coll::Strategy broadcast = coll::Strategy::none;
  bool program_drives = true;  // the thread model (Engine::set_program_drives)
  // Emulated devices per rank (0: none). With devices, tasks with an odd
  // salt have a device implementation (loopback_device_task).
  int devices = 0;
  uint64_t device_memory = 1 << 20;  // per device
  int device_streams = 2;
  bool device_hints = false;  // device tasks name their device (hinted_device)
};

std::ostream& operator<<(std::ostream& out, const LoopbackRun& run) {
  return out << "ranks " << run.ranks << ", threads " << run.threads << ", window " << run.window
             << ", window bytes " << run.window_bytes << ", strategy "
             << coll::strategy_name(run.broadcast) << ", program drives " << run.program_drives
             << ", devices " << run.devices << " of " << run.device_memory << " bytes";
}

// What the runs of a test moved between ranks, for its not-vacuous checks.
struct Traffic {
  uint64_t messages = 0;    // data messages
  uint64_t broadcasts = 0;  // broadcasts rooted or group broadcasts taken part in
  // Versions the engines still held at the end, after every handle was
  // released: each one a version some rank was never told to drop.
  uint64_t versions_left = 0;
  // Tasks the engines ran, and of those the ones their rank's planner built
  // in place (spmd: all of them, none encoded).
  uint64_t tasks_executed = 0;
  uint64_t tasks_built_in_place = 0;
  // On devices: tasks, bytes copied in, replicas reused and evicted, and the
  // device memory replicas still held at the end (each a replica leaked).
  uint64_t device_tasks = 0;
  uint64_t device_bytes_in = 0;
  uint64_t device_peer_bytes = 0;
  uint64_t device_replica_hits = 0;
  uint64_t device_evictions = 0;
  uint64_t device_bytes_left = 0;
  // Versions made on devices copied back to host memory (device_bytes_out
  // bytes), and of those, the ones copied before their last replica went.
  uint64_t device_write_backs = 0;
  uint64_t device_eviction_write_backs = 0;
  uint64_t device_bytes_out = 0;
};

// One rank: its engine (on its own thread) and its planner.
struct Rank {
  Rank(comm::Transport& transport, const LoopbackRun& run)
      : engine(transport, run.threads, transport.rank()) {
    const int ranks = run.ranks, threads = run.threads;
    const uint64_t window = run.window;
    plan::PlannerConfig config;
    config.mode = plan::PlannerMode::spmd;
    config.rank = transport.rank();
    config.ranks = ranks;
    config.threads_per_rank = threads;
    config.window = window;
    config.window_bytes = run.window_bytes;
    // Broadcasts of every version read on several ranks, in chunks of 64
    // bytes, so that routes, forwarding and group windows are all exercised.
    config.broadcast = run.broadcast;
    config.broadcast_min_bytes = 1;
    config.broadcast_chunk = 64;
    engine.set_engine_creates_groups(false);
    engine.set_program_drives(run.program_drives);
    engine.set_timing(false);
    if (run.devices > 0)
      engine.set_devices(std::make_unique<device::EmulatedBackend>(run.devices, run.device_memory),
                         run.device_streams);
    planner = std::make_unique<plan::Planner>(engine, config);
    engine.set_listener(planner.get());
    engine_thread = std::thread([this] { engine.run(); });
  }
  Engine engine;
  std::unique_ptr<plan::Planner> planner;
  std::thread engine_thread;
};

// Runs `g` as `run` says; returns each handle's bytes as fetched on its
// owner and adds what the ranks exchanged to `traffic`.
std::vector<std::vector<uint8_t>> run_on_loopback(const Graph& g, const LoopbackRun& run,
                                                  Traffic& traffic) {
  const int ranks = run.ranks;
  comm::loopback::LoopbackFabric fabric(ranks);
  std::vector<std::unique_ptr<Rank>> job;
  for (int r = 0; r < ranks; ++r) job.push_back(std::make_unique<Rank>(fabric.transport(r), run));
  // Each rank's program memory: the host buffers it registers and fetches into.
  std::vector<std::vector<std::vector<uint8_t>>> memory(static_cast<size_t>(ranks));
  std::vector<std::thread> programs;
  for (int r = 0; r < ranks; ++r) {
    programs.emplace_back([&, r] {
      plan::Planner& planner = *job[static_cast<size_t>(r)]->planner;
      auto& mine = memory[static_cast<size_t>(r)];
      const std::vector<DataHandle> handles = enter_graph(planner, g, mine);
      for (const TaskSpec& task : g.tasks) {
        TaskOptions options;
        const bool on_device = run.devices > 0 && task.salt % 2 == 1;
        const FunctionId function =
            on_device ? loopback_device_task_id : function_id(loopback_task);
        if (on_device && run.device_hints) options.device = hinted_device(task.salt, run.devices);
        submit_spec(planner, task, handles, function, options);
      }
      for (const DataHandle h : handles) planner.fetch(h);
      for (const DataHandle h : handles) planner.release(h);
      planner.shutdown();
    });
  }
  for (auto& program : programs) program.join();
  for (auto& rank : job) rank->engine_thread.join();
  traffic.messages += fabric.data_messages();
  for (auto& rank : job) {
    const EngineStats stats = rank->engine.stats();
    traffic.broadcasts += stats.broadcasts_rooted + stats.mpi_broadcasts;
    traffic.versions_left += stats.versions_live;
    traffic.tasks_executed += stats.tasks_executed;
    traffic.tasks_built_in_place += stats.tasks_built_in_place;
    traffic.device_tasks += stats.device_tasks;
    traffic.device_bytes_in += stats.device_bytes_in;
    traffic.device_peer_bytes += stats.device_peer_bytes;
    traffic.device_replica_hits += stats.device_replica_hits;
    traffic.device_evictions += stats.device_evictions;
    traffic.device_bytes_left += stats.device_replica_bytes;
    traffic.device_write_backs += stats.device_write_backs;
    traffic.device_eviction_write_backs += stats.device_eviction_write_backs;
    traffic.device_bytes_out += stats.device_bytes_out;
  }
  std::vector<std::vector<uint8_t>> result;
  for (size_t h = 0; h < g.sizes.size(); ++h)
    result.push_back(memory[static_cast<size_t>(g.owners[h])][h]);
  return result;
}

// Runs `g` and compares every handle with the same tasks run sequentially.
::testing::AssertionResult matches_sequential(const Graph& g, const LoopbackRun& run,
                                              Traffic& traffic) {
  const auto expected = run_sequentially(g);
  const uint64_t left_before = traffic.versions_left;
  const auto got = run_on_loopback(g, run, traffic);
  if (traffic.device_bytes_left != 0)
    return ::testing::AssertionFailure()
           << "the devices kept " << traffic.device_bytes_left << " bytes of replicas after every "
           << "handle was released (" << g.tasks.size() << " tasks, " << run << ")";
  if (traffic.versions_left != left_before)
    return ::testing::AssertionFailure()
           << "the engines kept " << traffic.versions_left - left_before
           << " versions after every handle was released (" << g.tasks.size() << " tasks, " << run
           << ")";
  for (size_t h = 0; h < expected.size(); ++h)
    if (got[h] != expected[h])
      return ::testing::AssertionFailure()
             << "handle " << h << " differs (" << g.tasks.size() << " tasks, " << run << ")";
  return ::testing::AssertionSuccess();
}

// The seam's thread primitive (comm::Blocking) is the only way the
// planner's program thread sleeps: its task runs on a worker and cannot end
// until the program sleeps through the transport's Blocking, so a wait that
// went around the seam (a plain condition variable) would hang here.
TEST(LoopbackSeam, ThePlannerWaitsThroughTheTransportsBlocking) {
  comm::CountingBlocking blocking;
  waited_by_program = &blocking;
  comm::loopback::LoopbackFabric fabric(1);
  fabric.set_blocking(blocking);
  Engine engine(fabric.transport(0), /*threads=*/2, 0);
  engine.set_program_drives(false);  // the program sleeps while it waits
  plan::PlannerConfig config;
  config.mode = plan::PlannerMode::spmd;
  plan::Planner planner(engine, config);
  engine.set_listener(&planner);
  std::thread engine_thread([&] { engine.run(); });
  blocking.watch(std::this_thread::get_id());
  double value = 0;
  const DataHandle handle = planner.enter_data(&value, sizeof value, 0);
  const DataAccess access = inout(handle);
  planner.submit(function_id(until_the_program_sleeps), &access, 1, TaskOptions{}, nullptr, 0);
  planner.wait_all();
  planner.release(handle);
  planner.shutdown();
  engine_thread.join();
  EXPECT_GE(blocking.watched_waits(), 1u);
  EXPECT_GE(blocking.wakes(), 1u);  // the completion woke it
  waited_by_program = nullptr;
}

// A waiter that cannot drive the loop (the engine thread does) sleeps
// between its looks through the seam, never spinning or yielding on a core
// the engine thread may need: pauses double from 1 µs to 64 µs, so it looks
// at most 7 times plus once per 64 µs.
TEST(LoopbackSeam, AWaiterThatCannotDriveSleepsBetweenLooks) {
  comm::loopback::LoopbackFabric fabric(1);
  Engine engine(fabric.transport(0), /*threads=*/1, 0);
  std::atomic<bool> done{false};
  uint64_t looks = 0;
  const auto start = std::chrono::steady_clock::now();
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    done.store(true);
  });
  engine.wait_while_driven([&] {
    looks += 1;
    return done.load();
  });
  const auto waited = std::chrono::steady_clock::now() - start;
  setter.join();
  EXPECT_GE(waited, std::chrono::milliseconds(5));
  const auto waited_us =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(waited).count());
  EXPECT_LE(looks, 8 + waited_us / 64 + 1) << "in " << waited_us << " us";
}

class Loopback : public ::testing::TestWithParam<int> {};

TEST_P(Loopback, RandomGraphsMatchSequentialExecution) {
  const int ranks = GetParam();
  Traffic traffic;
  for (uint64_t graph = 0; graph < 60; ++graph) {
    const uint64_t seed = mix(static_cast<uint64_t>(ranks) * 7919 + graph);
    LoopbackRun run;
    run.ranks = ranks;
    run.threads = 1 + static_cast<int>(graph % 2);
    // Tiny windows make programs wait for their tasks mid-graph, at different
    // points on different ranks: it must never deadlock.
    run.window = graph % 3 == 0 ? 0 : 1 + graph % 4;
    // And byte windows (some below one version's size): the same.
    run.window_bytes = graph % 5 == 1 ? 64 << (graph % 3) : 0;
    // Both thread models: the waiting program drives its engine, or sleeps.
    run.program_drives = graph % 4 < 2;
    ASSERT_TRUE(matches_sequential(generate(seed, ranks), run, traffic))
        << "graph " << graph << " (seed " << seed << ")";
  }
  // Not vacuous: with several ranks, versions really travelled between them.
  if (ranks > 1) {
    EXPECT_GT(traffic.messages, 60u);
  }
  EXPECT_GT(traffic.tasks_executed, 0u);
  EXPECT_EQ(traffic.tasks_built_in_place, traffic.tasks_executed)
      << "spmd: each rank's planner builds its own tasks in its engine's records";
}

INSTANTIATE_TEST_SUITE_P(Ranks, Loopback, ::testing::Values(1, 2, 3, 4, 5, 8));

// Long graphs: a submitting program runs a pass of its engine every 64
// submissions (CommandSink::help) and the engine thread sleeps meanwhile; with
// small windows the program also drives while it waits. Both thread models.
class LoopbackLong : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(LoopbackLong, LongGraphsMatchSequentialExecution) {
  const auto [ranks, program_drives] = GetParam();
  Traffic traffic;
  for (uint64_t graph = 0; graph < 6; ++graph) {
    const uint64_t seed = mix(static_cast<uint64_t>(ranks) * 15485863 + graph);
    LoopbackRun run;
    run.ranks = ranks;
    run.threads = 1 + static_cast<int>(graph % 2);
    run.window = graph % 3 == 0 ? 0 : 8 << (graph % 3);
    run.program_drives = program_drives;
    ASSERT_TRUE(matches_sequential(generate(seed, ranks, 600), run, traffic))
        << "graph " << graph << " (seed " << seed << ")";
  }
  if (ranks > 1) {
    EXPECT_GT(traffic.messages, 100u);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, LoopbackLong,
                         ::testing::Combine(::testing::Values(1, 2, 4), ::testing::Bool()));

// Every broadcast strategy, the transport's group broadcast (`mpi`) included,
// on graphs where versions are read on several ranks.
class LoopbackBroadcast : public ::testing::TestWithParam<std::tuple<int, coll::Strategy>> {};

TEST_P(LoopbackBroadcast, RandomGraphsMatchSequentialExecution) {
  const auto [ranks, strategy] = GetParam();
  Traffic traffic;
  for (uint64_t graph = 0; graph < 40; ++graph) {
    const uint64_t seed = mix(static_cast<uint64_t>(ranks) * 104729 + graph);
    LoopbackRun run;
    run.ranks = ranks;
    run.threads = 1 + static_cast<int>(graph % 2);
    run.window = graph % 3 == 0 ? 0 : 1 + graph % 4;
    run.broadcast = strategy;
    ASSERT_TRUE(matches_sequential(generate(seed, ranks), run, traffic))
        << "graph " << graph << " (seed " << seed << ")";
  }
  EXPECT_GT(traffic.messages, 40u);
  // Not vacuous: versions really went out by the strategy.
  EXPECT_GT(traffic.broadcasts, 10u);
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, LoopbackBroadcast,
    ::testing::Combine(::testing::Values(3, 4, 7),
                       ::testing::Values(coll::Strategy::tree, coll::Strategy::pipeline,
                                         coll::Strategy::p2p, coll::Strategy::mpi)));

// Tasks with a device implementation on emulated devices (memory the host
// cannot touch, streams on threads), mixed with CPU tasks on the same data:
// inputs staged to devices, outputs written through to host memory, replicas
// reused by later device tasks, and evicted under a small memory limit.
class LoopbackDevices : public ::testing::TestWithParam<int> {};

TEST_P(LoopbackDevices, RandomGraphsMatchSequentialExecution) {
  const int ranks = GetParam();
  Traffic traffic;
  const uint64_t cpu_runs_before = device_task_cpu_runs;
  for (uint64_t graph = 0; graph < 40; ++graph) {
    const uint64_t seed = mix(static_cast<uint64_t>(ranks) * 1299709 + graph);
    LoopbackRun run;
    run.ranks = ranks;
    run.threads = 1 + static_cast<int>(graph % 2);
    run.window = graph % 3 == 0 ? 0 : 1 + graph % 4;
    run.program_drives = graph % 4 < 2;
    run.devices = 1 + static_cast<int>(graph % 3);
    run.device_streams = 1 + static_cast<int>(graph % 2);
    ASSERT_TRUE(matches_sequential(generate(seed, ranks, 60), run, traffic))
        << "graph " << graph << " (seed " << seed << ")";
  }
  // Not vacuous: tasks ran on the devices (never on a CPU), copied data in
  // and found replicas there.
  EXPECT_GT(traffic.device_tasks, 100u);
  EXPECT_LT(traffic.device_tasks, traffic.tasks_executed);  // CPU tasks too
  EXPECT_EQ(device_task_cpu_runs, cpu_runs_before);
  EXPECT_GT(traffic.device_bytes_in, 0u);
  EXPECT_GT(traffic.device_replica_hits, 0u);
  EXPECT_GT(traffic.device_peer_bytes, 0u);   // copies between two devices of a rank
  EXPECT_GT(traffic.device_write_backs, 0u);  // outputs CPU tasks, sends or fetches needed
}

// A chain of device tasks updating one handle in place: every version stays
// on the device, and only the last is copied back, for the program's fetch.
TEST_P(LoopbackDevices, ADeviceChainStaysOnTheDevice) {
  const int ranks = GetParam();
  Graph g;
  for (int r = 0; r < ranks; ++r) {
    g.sizes.push_back(1000);
    g.owners.push_back(r);
  }
  uint64_t salt = 1;  // odd: a device task
  for (int step = 0; step < 20; ++step) {
    for (size_t h = 0; h < g.sizes.size(); ++h) {
      g.tasks.push_back({{{h, AccessMode::inout}}, salt, g.owners[h]});
      salt += 2;
    }
  }
  Traffic traffic;
  LoopbackRun run;
  run.ranks = ranks;
  run.devices = 1;
  ASSERT_TRUE(matches_sequential(g, run, traffic));
  EXPECT_EQ(traffic.device_tasks, 20u * static_cast<uint64_t>(ranks));
  EXPECT_EQ(traffic.device_bytes_in, 1000u * static_cast<uint64_t>(ranks));  // the first reads
  EXPECT_EQ(traffic.device_write_backs, static_cast<uint64_t>(ranks));       // the fetches
  EXPECT_EQ(traffic.device_bytes_out, 1000u * static_cast<uint64_t>(ranks));
  EXPECT_EQ(traffic.device_eviction_write_backs, 0u);
}

// On every rank, device tasks write 12 handles of 300 bytes, then device
// tasks read each back: 3,600 bytes of current versions, whose replicas stay
// until evicted, so a 2 KiB device must evict whatever the timing.
Graph crowded_device_graph(int ranks) {
  Graph g;
  for (int r = 0; r < ranks; ++r) {
    for (int i = 0; i < 12; ++i) {
      g.sizes.push_back(300);
      g.owners.push_back(r);
    }
  }
  uint64_t salt = 1;  // odd: a device task
  for (AccessMode mode : {AccessMode::out, AccessMode::in}) {
    for (size_t h = 0; h < g.sizes.size(); ++h) {
      g.tasks.push_back({{{h, mode}}, salt, g.owners[h]});
      salt += 2;
    }
  }
  return g;
}

TEST_P(LoopbackDevices, ASmallDeviceEvictsAndStillMatches) {
  // 2 KiB per device: a task's accesses fit (at most three of 320 bytes,
  // with an inout's input beside its output), a graph's versions do not.
  const int ranks = GetParam();
  Traffic crowded;
  LoopbackRun small;
  small.ranks = ranks;
  small.devices = 1;
  small.device_memory = 2048;
  ASSERT_TRUE(matches_sequential(crowded_device_graph(ranks), small, crowded));
  EXPECT_GE(crowded.device_tasks, 24u * static_cast<uint64_t>(ranks));
  EXPECT_GT(crowded.device_evictions, 0u);
  // The versions the first tasks made were only on the device: evicting
  // them wrote them back first.
  EXPECT_GT(crowded.device_eviction_write_backs, 0u);
  // Random graphs: evictions there depend on when superseded versions go.
  Traffic traffic;
  for (uint64_t graph = 0; graph < 20; ++graph) {
    const uint64_t seed = mix(static_cast<uint64_t>(ranks) * 15487469 + graph);
    LoopbackRun run;
    run.ranks = ranks;
    run.threads = 1 + static_cast<int>(graph % 2);
    run.devices = 1;
    run.device_memory = 2048;
    run.device_streams = 1 + static_cast<int>(graph % 3);
    ASSERT_TRUE(matches_sequential(generate(seed, ranks, 120), run, traffic))
        << "graph " << graph << " (seed " << seed << ")";
  }
  EXPECT_GT(traffic.device_tasks, 100u);
}

TEST_P(LoopbackDevices, TasksRunOnTheDeviceTheyAskFor) {
  const int ranks = GetParam();
  Traffic traffic;
  hinted_runs = 0;
  runs_elsewhere = 0;
  for (uint64_t graph = 0; graph < 10; ++graph) {
    const uint64_t seed = mix(static_cast<uint64_t>(ranks) * 32452843 + graph);
    LoopbackRun run;
    run.ranks = ranks;
    run.threads = 1 + static_cast<int>(graph % 2);
    run.devices = 2 + static_cast<int>(graph % 2);
    run.device_hints = true;
    hinted_devices = run.devices;
    ASSERT_TRUE(matches_sequential(generate(seed, ranks, 60), run, traffic))
        << "graph " << graph << " (seed " << seed << ")";
  }
  hinted_devices = 0;
  EXPECT_GT(hinted_runs, 50u);
  EXPECT_EQ(runs_elsewhere, 0u);
}

INSTANTIATE_TEST_SUITE_P(Ranks, LoopbackDevices, ::testing::Values(1, 2, 4));

// Cluster mode: a worker that has nothing left sends its completions to the
// head at once, not when the batch's delay has passed. Here the delay never
// passes, so without that the head's wait would last until shutdown.
// ------------------------------------------- short tasks and workers ----

std::vector<std::thread::id> hop_ran_on;  // hop_task's thread, by its index

void hop_task(TaskContext& ctx) {
  hop_ran_on.at(static_cast<size_t>(ctx.arg<int>())) = std::this_thread::get_id();
  *ctx.data_as<uint64_t>(0) += 1;
}
TASKGRID_REGISTER(hop_task);

// Sanitizers slow a task past Engine::kKeepShortTaskNs: none is short then.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

TEST(LoopbackThreads, AShortTaskOnTheCriticalPathStaysWithTheThreadThatReadiesIt) {
  if (kSanitized) GTEST_SKIP() << "a sanitized task is not short";
  // A chain alternating between two ranks (taskgrid-hop-bench's), each rank
  // with a worker beside its driving thread and a core for each (the worker
  // spins). Each task is readied by its input's arrival, while the next
  // transfer is already posted: without keeping short tasks, the driver left
  // every one to its waiting worker (Engine::run_ready_tasks), a hand-off
  // there and back per hop. Kept, a task runs on the thread that drives its
  // rank: the program's (while it waits) or the engine thread.
  constexpr int kHops = 600;
  LoopbackRun run;
  run.ranks = 2;
  run.threads = 2;
  comm::loopback::LoopbackFabric fabric(run.ranks);
  fabric.set_cores_per_rank(run.threads);
  std::vector<std::unique_ptr<Rank>> job;
  for (int r = 0; r < run.ranks; ++r)
    job.push_back(std::make_unique<Rank>(fabric.transport(r), run));
  hop_ran_on.assign(kHops, std::thread::id{});
  std::array<std::set<std::thread::id>, 2> drivers;
  std::array<uint64_t, 2> value = {0, 0};
  std::vector<std::thread> programs;
  for (int r = 0; r < run.ranks; ++r) {
    const auto mine = static_cast<size_t>(r);
    programs.emplace_back([&, mine] {
      plan::Planner& planner = *job[mine]->planner;
      const DataHandle h = planner.enter_data(&value[mine], sizeof(uint64_t), 0);
      for (int i = 0; i < kHops; ++i) {
        TaskOptions options;
        options.rank = i % 2;
        const DataAccess access{h, AccessMode::inout};
        planner.submit(function_id(hop_task), &access, 1, options, &i, sizeof i);
      }
      planner.fetch(h);
      planner.release(h);
      planner.shutdown();
    });
    drivers[mine] = {job[mine]->engine_thread.get_id(), programs.back().get_id()};
  }
  for (auto& program : programs) program.join();
  for (auto& rank : job) rank->engine_thread.join();
  EXPECT_EQ(value[0], static_cast<uint64_t>(kHops));  // fetched on the owner, rank 0
  int on_drivers = 0;
  for (int i = 0; i < kHops; ++i)
    on_drivers +=
        drivers[static_cast<size_t>(i % 2)].count(hop_ran_on[static_cast<size_t>(i)]) ? 1 : 0;
  // A task measured over 2 µs (a preemption) sends the next ones to the
  // workers until one measures short again: most, not all, stay.
  EXPECT_GE(on_drivers, kHops * 9 / 10);
}

// Cluster mode with heft beyond 8 ranks, where it searches the ranks by
// their earliest free slot instead of estimating each (sched/placement.cpp):
// random graphs, unhinted, must match sequential execution, and spread.
TEST(LoopbackCluster, HeftOverManyRanksMatchesSequentialExecution) {
  constexpr int kRanks = 12;
  int ranks_with_tasks = 0;
  for (uint64_t graph = 0; graph < 12; ++graph) {
    const Graph g = generate(mix(graph * 7727 + 5), kRanks);
    comm::loopback::LoopbackFabric fabric(kRanks);
    std::vector<std::unique_ptr<Engine>> engines;
    for (int r = 0; r < kRanks; ++r)
      engines.push_back(std::make_unique<Engine>(fabric.transport(r), 1, 0));
    plan::PlannerConfig config;
    config.mode = plan::PlannerMode::cluster;
    config.rank = 0;
    config.ranks = kRanks;
    config.scheduler = taskgrid::sched::Scheduler::heft;
    plan::Planner planner(*engines[0], config);
    engines[0]->set_listener(&planner);
    std::vector<std::thread> threads;
    for (auto& engine : engines) threads.emplace_back([&engine] { engine->run(); });
    std::vector<std::vector<uint8_t>> memory;
    const std::vector<DataHandle> handles = enter_graph(planner, g, memory);
    for (const TaskSpec& task : g.tasks)
      submit_spec(planner, task, handles, function_id(loopback_task), TaskOptions{});
    for (const DataHandle h : handles) planner.fetch(h);
    for (const DataHandle h : handles) planner.release(h);
    planner.shutdown();
    for (auto& thread : threads) thread.join();
    ASSERT_EQ(memory, run_sequentially(g)) << "graph " << graph;
    if (graph == 0)
      for (auto& engine : engines) ranks_with_tasks += engine->stats().tasks_executed > 0;
  }
  EXPECT_GE(ranks_with_tasks, 3) << "heft kept the first graph on too few ranks to test it";
}

TEST(LoopbackCluster, ASettledWorkerSendsItsCompletionsAtOnce) {
  comm::loopback::LoopbackFabric fabric(2);
  Engine head(fabric.transport(0), 1, 0);
  Engine worker(fabric.transport(1), 1, 0);
  for (Engine* engine : {&head, &worker}) {
    engine->set_timing(false);
    engine->set_engine_creates_groups(true);
    engine->set_completion_delay_ns(UINT64_MAX);
  }
  plan::PlannerConfig config;
  config.mode = plan::PlannerMode::cluster;
  config.rank = 0;
  config.ranks = 2;
  config.scheduler = taskgrid::sched::Scheduler::round_robin;
  plan::Planner planner(head, config);
  head.set_listener(&planner);
  std::thread head_thread([&] { head.run(); });
  std::thread worker_thread([&] { worker.run(); });

  std::vector<uint8_t> bytes = initial_bytes(0, 64);
  const DataHandle h = planner.enter_data(bytes.data(), bytes.size(), -1);
  TaskSpec task{{{0, AccessMode::inout}}, 7, 1};
  const std::vector<char> args = pack(task);
  TaskOptions options;
  options.rank = 1;
  const DataAccess access = inout(h);
  planner.submit(function_id(loopback_task), &access, 1, options, args.data(), args.size());
  std::promise<void> waited;
  std::thread program([&] {
    planner.wait(h);
    waited.set_value();
  });
  // A bound for a failure, not a timing: the completion either comes or not.
  const bool arrived =
      waited.get_future().wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  if (!arrived) {
    ADD_FAILURE() << "the worker held its completion back while it had nothing left to do";
    std::fflush(nullptr);
    std::_Exit(1);  // the wait would last for ever: no clean way out
  }
  program.join();
  planner.fetch(h);
  planner.release(h);
  planner.shutdown();
  head_thread.join();
  worker_thread.join();
  Graph g;
  g.sizes = {64};
  g.owners = {0};
  g.tasks = {task};
  EXPECT_EQ(bytes, run_sequentially(g)[0]);
}

}  // namespace
}  // namespace taskgrid::engine
