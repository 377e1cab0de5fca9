// The replicated (spmd) planner alone, with an engine that takes no time
// (instant_sink.h): what planning costs per task on one rank of a job of 4,
// 64 or 1024 ranks, for a task this rank runs ("local") and for one that
// concerns neither its data nor its placement ("foreign": in spmd every rank
// sees every task, so this is the cost that grows with the job).
//
//   build/bin/taskgrid-planner-bench [--benchmark_filter=Foreign]
//
// Time per iteration is time per submitted task. Instructions per task, which
// do not drift with the machine's load: run it under
// `valgrind --tool=callgrind` with --benchmark_min_time and compare two
// iteration counts (bench/overhead/README.md has the method).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "bench/planner/instant_sink.h"
#include "plan/planner.h"
#include "taskgrid/taskgrid.hpp"

namespace {

using taskgrid::plan::Planner;
using taskgrid::plan::PlannerConfig;
using taskgrid::plan::PlannerMode;

void empty_task(taskgrid::TaskContext&) {}
TASKGRID_REGISTER(empty_task);

constexpr int kMe = 0;              // the rank whose planner is measured
constexpr int kHandlesPerRank = 8;  // chains per rank: tasks depend on earlier ones
constexpr int kFlushEvery = 64;     // submissions between engine polls

struct Job {
  explicit Job(int ranks) : sink(kMe) {
    PlannerConfig config;
    config.mode = PlannerMode::spmd;
    config.rank = kMe;
    config.ranks = ranks;
    planner = std::make_unique<Planner>(sink, config);
    sink.set_listener(planner.get());
    // kHandlesPerRank handles owned by each of the first ranks (all of them up to 64).
    const int owners = ranks < 64 ? ranks : 64;
    host.resize(static_cast<size_t>(owners * kHandlesPerRank));
    for (int owner = 0; owner < owners; ++owner)
      for (int i = 0; i < kHandlesPerRank; ++i)
        handles.push_back(planner->enter_data(
            &host[static_cast<size_t>(owner * kHandlesPerRank + i)], sizeof(double), owner));
  }
  taskgrid::DataHandle handle(int owner, int index) const {
    return handles[static_cast<size_t>(owner * kHandlesPerRank + index)];
  }
  taskgrid::bench::InstantSink sink;
  std::unique_ptr<Planner> planner;
  std::vector<double> host;
  std::vector<taskgrid::DataHandle> handles;
};

// Each task reads one handle of its rank and updates another (a stencil-like
// chain), on rank `rank_of(i)`.
// The engine reports completions every `deliver_every` submissions.
template <typename RankOf>
void submit_tasks(benchmark::State& state, RankOf rank_of, int64_t deliver_every = kFlushEvery) {
  Job job(static_cast<int>(state.range(0)));
  const taskgrid::FunctionId function = taskgrid::function_id(empty_task);
  int64_t i = 0;
  for (auto _ : state) {
    const int rank = rank_of(i);
    const int slot = static_cast<int>(i % kHandlesPerRank);
    taskgrid::TaskOptions options;
    options.rank = rank;
    const taskgrid::DataAccess accesses[2] = {
        taskgrid::in(job.handle(rank, (slot + 1) % kHandlesPerRank)),
        taskgrid::inout(job.handle(rank, slot))};
    job.planner->submit(function, accesses, 2, options, &i, sizeof i);
    if (++i % deliver_every == 0) job.sink.deliver();
  }
  job.sink.deliver();
  state.counters["local_tasks"] = static_cast<double>(job.sink.tasks());
  state.counters["batches"] = static_cast<double>(job.sink.batches());
}

void Local(benchmark::State& state) {
  submit_tasks(state, [](int64_t) { return kMe; });
}

// Tasks on the other ranks (up to 63 of them), on their own data.
void Foreign(benchmark::State& state) {
  const int others = static_cast<int>(std::min<int64_t>(state.range(0), 64)) - 1;
  submit_tasks(state, [others](int64_t i) { return 1 + static_cast<int>(i % others); });
}

// One task in `ranks` is this rank's: what a rank of a balanced job plans.
void Balanced(benchmark::State& state) {
  const int owners = static_cast<int>(std::min<int64_t>(state.range(0), 64));
  submit_tasks(state, [owners](int64_t i) { return static_cast<int>(i % owners); });
}

// Balanced, with up to kDeepWindow of this rank's tasks in flight (a
// submission window of 4096, the default before 512): the planner's in-flight
// table then holds thousands of tasks that are one in `ranks` of all task ids.
constexpr int64_t kDeepWindow = 4096;
void BalancedDeepWindow(benchmark::State& state) {
  const int owners = static_cast<int>(std::min<int64_t>(state.range(0), 64));
  submit_tasks(
      state, [owners](int64_t i) { return static_cast<int>(i % owners); }, kDeepWindow * owners);
}

// Cluster mode's head: every task unhinted, placed by heft over all ranks
// (each of kHandlesPerRank x 8 chains reads one handle and updates another,
// so inputs are where earlier tasks put them). The stand-in engine reports
// completions as above; nothing is measured, so durations stay estimates.
void head_places_all(benchmark::State& state, taskgrid::sched::Scheduler scheduler) {
  const int ranks = static_cast<int>(state.range(0));
  taskgrid::bench::InstantSink sink(kMe);
  PlannerConfig config;
  config.mode = PlannerMode::cluster;
  config.rank = kMe;
  config.ranks = ranks;
  config.threads_per_rank = 4;
  config.scheduler = scheduler;
  Planner planner(sink, config);
  sink.set_listener(&planner);
  constexpr int kHandles = kHandlesPerRank * 8;
  std::vector<double> host(kHandles);
  std::vector<taskgrid::DataHandle> handles;
  for (double& value : host) handles.push_back(planner.enter_data(&value, sizeof value, -1));
  const taskgrid::FunctionId function = taskgrid::function_id(empty_task);
  int64_t i = 0;
  for (auto _ : state) {
    const int slot = static_cast<int>(i % kHandles);
    const taskgrid::DataAccess accesses[2] = {
        taskgrid::in(handles[static_cast<size_t>((slot + 1) % kHandles)]),
        taskgrid::inout(handles[static_cast<size_t>(slot)])};
    planner.submit(function, accesses, 2, taskgrid::TaskOptions{}, &i, sizeof i);
    if (++i % kFlushEvery == 0) sink.deliver();
  }
  sink.deliver();
  state.counters["batches"] = static_cast<double>(sink.batches());
}
void HeadPlacesAll(benchmark::State& state) {
  head_places_all(state, taskgrid::sched::Scheduler::heft);
}
// The same with TASKGRID_SCHEDULER=locality.
void HeadPlacesAllLocality(benchmark::State& state) {
  head_places_all(state, taskgrid::sched::Scheduler::locality);
}

BENCHMARK(Local)->Arg(4)->Arg(64)->Arg(1024);
BENCHMARK(Foreign)->Arg(4)->Arg(64)->Arg(1024);
BENCHMARK(Balanced)->Arg(4)->Arg(64)->Arg(1024);
BENCHMARK(BalancedDeepWindow)->Arg(4)->Arg(16)->Arg(64);
BENCHMARK(HeadPlacesAll)->Arg(1)->Arg(4)->Arg(64)->Arg(1024);
BENCHMARK(HeadPlacesAllLocality)->Arg(1)->Arg(4)->Arg(64)->Arg(1024);

}  // namespace

BENCHMARK_MAIN();
