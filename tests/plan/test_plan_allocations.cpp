// The planner's per-task path allocates nothing in steady state, nor per
// batch: the sink hands each flushed batch's buffer back (as the engine does
// with the batches it applied), and the next batch is written into it. Only
// the table of tasks in flight may grow to a new high-water mark, by timing.
// Counted with a replaced global operator new, so these tests have an
// executable of their own (taskgrid_plan_tests).
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "bench/planner/instant_sink.h"
#include "engine/in_place_tasks.h"
#include "plan/planner.h"

namespace {
thread_local bool counting = false;
thread_local size_t allocations = 0;

void* counted(size_t bytes, size_t alignment) {
  if (counting) ++allocations;
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(bytes ? bytes : 1)
                : std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(size_t bytes) { return counted(bytes, 0); }
void* operator new(size_t bytes, std::align_val_t alignment) {
  return counted(bytes, static_cast<size_t>(alignment));
}
// These operator new take their memory from malloc, so free is the match; GCC
// does not see through the replacement (-Wmismatched-new-delete at -O1).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace taskgrid::plan {
namespace {

void allocation_test_task(TaskContext&) {}
TASKGRID_REGISTER(allocation_test_task);

struct Counts {
  size_t allocations;
  uint64_t batches;
};

// Submits `tasks` tasks, task i on rank_of(i), each reading one handle and
// updating another of the handles rank data_of(i) owns, completing them every
// 64 submissions; counts the second `tasks` (the first reach steady state).
template <typename RankOf, typename DataOf>
Counts steady_state(PlannerMode mode, int ranks, RankOf rank_of, DataOf data_of, int tasks) {
  bench::InstantSink sink(0);
  PlannerConfig config;
  config.mode = mode;
  config.rank = 0;
  config.ranks = ranks;
  config.scheduler = taskgrid::sched::Scheduler::heft;  // cluster mode's default policy
  Planner planner(sink, config);
  sink.set_listener(&planner);
  constexpr int kPerRank = 8;
  std::vector<double> host(static_cast<size_t>(ranks * kPerRank));
  std::vector<DataHandle> handles;
  for (int owner = 0; owner < ranks; ++owner)
    for (int i = 0; i < kPerRank; ++i)
      handles.push_back(planner.enter_data(&host[handles.size()], sizeof(double), owner));
  const FunctionId function = function_id(allocation_test_task);
  Counts counts{0, 0};
  for (int pass = 0; pass < 2; ++pass) {
    const uint64_t batches_before = sink.batches();
    allocations = 0;
    counting = pass == 1;
    for (int i = 0; i < tasks; ++i) {
      const int owner = data_of(i);
      const int slot = i % kPerRank;
      TaskOptions options;
      options.rank = rank_of(i);
      const DataAccess accesses[2] = {
          in(handles[static_cast<size_t>(owner * kPerRank + (slot + 1) % kPerRank)]),
          inout(handles[static_cast<size_t>(owner * kPerRank + slot)])};
      planner.submit(function, accesses, 2, options, &i, sizeof i);
      if ((i + 1) % 64 == 0) sink.deliver();
    }
    counting = false;
    counts = Counts{allocations, sink.batches() - batches_before};
  }
  return counts;
}

TEST(PlannerAllocations, TheCountSeesAllocations) {
  allocations = 0;
  counting = true;
  auto* object = new std::vector<int>(100);
  // The pair escapes: a compiler may drop new/delete pairs that nothing reads
  // (GCC does at -O1 here).
  __asm__ __volatile__("" : : "g"(object), "g"(object->data()) : "memory");
  counting = false;
  delete object;
  EXPECT_EQ(allocations, 2u);  // the vector and its elements
}

TEST(PlannerAllocations, SpmdLocalTasksAllocateNothingPerBatch) {
  const auto on_zero = [](int) { return 0; };
  const Counts counts = steady_state(PlannerMode::spmd, 4, on_zero, on_zero, 50000);
  EXPECT_GT(counts.batches, 100u);
  EXPECT_LT(counts.allocations, counts.batches / 10);  // see SpmdBalancedTasks...
}

// The records a planner builds its rank's tasks in (engine/in_place_tasks.h),
// named ones included: a name is interned once, not per task.
TEST(PlannerAllocations, InPlaceTasksAllocateNothingOnceWarm) {
  engine::InPlaceTasks builder(comm::system_blocking());
  const FunctionId function = function_id(allocation_test_task);
  const char* names[2] = {"a task name longer than a short string", "another long task name"};
  const uint64_t args[4] = {1, 2, 3, 4};
  for (int pass = 0; pass < 2; ++pass) {
    allocations = 0;
    counting = pass == 1;
    for (int i = 0; i < 1000; ++i) {
      comm::wire::Task header{};
      header.task_id = static_cast<uint64_t>(i + 1);
      header.function = function.value;
      header.num_accesses = 1 + i % 4;
      header.args_bytes = sizeof args;
      header.channel = -1;
      // Runs of one name, as a program submits them, and a change now and then.
      const core::LocalTaskBuilder::Slot slot = builder.open(header, args, names[(i / 100) % 2]);
      builder.give_back(static_cast<engine::Task*>(slot.record));
      builder.hand_over();
    }
    counting = false;
  }
  EXPECT_EQ(allocations, 0u);
}

TEST(PlannerAllocations, SpmdForeignTasksAllocateNothing) {
  const auto elsewhere = [](int i) { return 1 + i % 63; };
  const Counts counts = steady_state(PlannerMode::spmd, 64, elsewhere, elsewhere, 50000);
  EXPECT_EQ(counts.batches, 0u);
  EXPECT_EQ(counts.allocations, 0u);
}

TEST(PlannerAllocations, SpmdBalancedTasksAllocateNothingPerBatch) {
  const auto spread = [](int i) { return i % 16; };
  const Counts counts = steady_state(PlannerMode::spmd, 16, spread, spread, 50000);
  // Hundreds of batches, and no allocation per batch. The table of tasks in
  // flight may still double a few times: how many tasks are in flight here
  // depends on when batches are flushed by age, i.e. on timing (seen under
  // load: 6 doublings, 8 KiB to 256 KiB, in one run of 40).
  EXPECT_GT(counts.batches, 100u);
  EXPECT_LT(counts.allocations, counts.batches / 10);
}

TEST(PlannerAllocations, ClusterTasksWithTransfersAllocateNothingPerBatch) {
  // Tasks and their data change ranks all the time: sends, retirements.
  const Counts counts = steady_state(
      PlannerMode::cluster, 4, [](int i) { return i % 4; }, [](int i) { return (i / 3) % 4; },
      50000);
  EXPECT_GT(counts.batches, 100u);
  EXPECT_LT(counts.allocations, counts.batches / 10);  // see SpmdBalancedTasks...
}

}  // namespace
}  // namespace taskgrid::plan
