// Task priorities (TaskOptions::priority): the ready queue alone, the engine's
// task table, and a planner and engine over the loopback transport where
// every task is ready at once, so the order they run in is deterministic.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "comm/loopback/transport.h"
#include "engine/engine.h"
#include "engine/task_table.h"
#include "exec/ready_queue.h"
#include "plan/planner.h"

namespace taskgrid::engine {
namespace {

struct Item {
  int priority = 0;
  int id = 0;
};

// The ids in the order the queue gives them.
std::vector<int> drain(exec::ReadyQueue<Item>& queue) {
  std::vector<int> ids;
  while (Item* item = queue.pop()) ids.push_back(item->id);
  return ids;
}

// What the queue must give: by priority, highest first, stable (FIFO among equals).
std::vector<int> expected_order(const std::vector<Item>& items) {
  std::vector<Item> sorted = items;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Item& a, const Item& b) { return a.priority > b.priority; });
  std::vector<int> ids;
  for (const Item& item : sorted) ids.push_back(item.id);
  return ids;
}

TEST(ReadyQueue, AllZeroPrioritiesIsAPlainFifo) {
  std::vector<Item> items(3000);
  for (size_t i = 0; i < items.size(); ++i) items[i].id = static_cast<int>(i);
  exec::ReadyQueue<Item> queue;
  // Interleaved pushes and pops (the compaction of a queue that never drains).
  std::vector<int> ids;
  for (size_t i = 0; i < items.size(); ++i) {
    queue.push(&items[i]);
    if (i % 3 == 2) ids.push_back(queue.pop()->id);
  }
  EXPECT_EQ(queue.size(), items.size() - ids.size());
  for (int id : drain(queue)) ids.push_back(id);
  EXPECT_EQ(ids, expected_order(items));
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.pop(), nullptr);
}

TEST(ReadyQueue, PopsByPriorityThenFifo) {
  std::vector<Item> items;
  const int priorities[] = {0, 3, -1, 0, 3, 7, -1, 0, 7, -5, 1, 0};
  for (int p : priorities) items.push_back({p, static_cast<int>(items.size())});
  exec::ReadyQueue<Item> queue;
  for (Item& item : items) queue.push(&item);
  EXPECT_EQ(queue.size(), items.size());
  EXPECT_EQ(drain(queue), expected_order(items));
}

TEST(ReadyQueue, LaterArrivalsJoinInPriorityOrder) {
  std::vector<Item> items;
  for (int i = 0; i < 40; ++i) items.push_back({(i * 7) % 5 - 2, i});
  exec::ReadyQueue<Item> queue;
  for (int i = 0; i < 20; ++i) queue.push(&items[static_cast<size_t>(i)]);
  // The first pop sees only the first 20.
  const std::vector<Item> first(items.begin(), items.begin() + 20);
  EXPECT_EQ(queue.pop()->id, expected_order(first).front());
  for (int i = 20; i < 40; ++i) queue.push(&items[static_cast<size_t>(i)]);
  std::vector<Item> rest;
  for (const Item& item : items)
    if (item.id != expected_order(first).front()) rest.push_back(item);
  EXPECT_EQ(drain(queue), expected_order(rest));
}

TEST(TaskTable, ReadyTasksPopByPriorityFifoAmongEquals) {
  TaskTable table;
  std::vector<Task*> tasks;
  const int priorities[] = {0, 2, 0, -3, 2, 0, 9, -3};
  for (int p : priorities) {
    Task* task = table.acquire();
    task->id = tasks.size() + 1;
    task->priority = p;
    tasks.push_back(task);
  }
  for (Task* task : tasks) table.push_ready(task);
  EXPECT_TRUE(table.has_ready());
  std::vector<uint64_t> ids;
  while (Task* task = table.pop_ready()) ids.push_back(task->id);
  EXPECT_EQ(ids, (std::vector<uint64_t>{7, 2, 5, 1, 3, 6, 4, 8}));
  EXPECT_FALSE(table.has_ready());
}

// ------------------------------------------------- planner and engine ----

std::vector<int> ran;  // the ids of record_task, in the order they ran

void record_task(TaskContext& ctx) { ran.push_back(ctx.arg<int>()); }
TASKGRID_REGISTER(record_task);

// One rank (spmd planner, engine with `threads`) over the loopback transport,
// without an engine thread until started: nothing runs before the program
// waits, and then every command is already posted.
struct OneRank {
  explicit OneRank(int threads) : fabric(1), engine(fabric.transport(0), threads, 0) {
    plan::PlannerConfig config;
    config.mode = plan::PlannerMode::spmd;
    config.threads_per_rank = threads;
    engine.set_engine_creates_groups(false);
    engine.set_program_drives(true);
    engine.set_timing(false);
    planner = std::make_unique<plan::Planner>(engine, config);
    engine.set_listener(planner.get());
  }
  void shutdown() {
    std::thread engine_thread([this] { engine.run(); });
    planner->shutdown();
    engine_thread.join();
  }
  comm::loopback::LoopbackFabric fabric;
  Engine engine;
  std::unique_ptr<plan::Planner> planner;
};

TEST(PriorityEndToEnd, TasksReadyTogetherRunByPriority) {
  // Under 64 submissions (Planner::kHelpEvery): no engine pass runs while the
  // program submits, so all the tasks become ready in the same pass.
  constexpr int kTasks = 40;
  OneRank rank(1);
  std::vector<Item> items;
  ran.clear();
  for (int i = 0; i < kTasks; ++i) {
    TaskOptions options;
    options.priority = (i * 7) % 5 - 2;
    items.push_back({options.priority, i});
    rank.planner->submit(function_id(record_task), nullptr, 0, options, &i, sizeof i);
  }
  rank.planner->wait_all();  // the program thread drives the engine here
  std::vector<int> submission_order(kTasks);
  for (int i = 0; i < kTasks; ++i) submission_order[static_cast<size_t>(i)] = i;
  ASSERT_NE(expected_order(items), submission_order);  // not vacuous: a FIFO fails
  EXPECT_EQ(ran, expected_order(items));
  rank.shutdown();
}

TEST(PriorityEndToEnd, PrioritiesDoNotReorderDependentTasks) {
  // A chain on one buffer, the later tasks with the higher priorities: they
  // still run in submission order (the buffer's value says so).
  OneRank rank(1);
  uint64_t value = 1;
  const DataHandle h = rank.planner->enter_data(&value, sizeof value, 0);
  ran.clear();
  for (int i = 0; i < 20; ++i) {
    TaskOptions options;
    options.priority = i;
    const DataAccess access{h, AccessMode::inout};
    rank.planner->submit(function_id(record_task), &access, 1, options, &i, sizeof i);
  }
  rank.planner->wait_all();
  std::vector<int> in_order(20);
  for (int i = 0; i < 20; ++i) in_order[static_cast<size_t>(i)] = i;
  EXPECT_EQ(ran, in_order);
  rank.shutdown();
}

std::array<std::atomic<int>, 200> counts;  // count_task runs per id

void count_task(TaskContext& ctx) { counts.at(static_cast<size_t>(ctx.arg<int>())) += 1; }
TASKGRID_REGISTER(count_task);

TEST(PriorityEndToEnd, WorkersRunEveryPrioritizedTask) {
  // With workers the order between threads is not fixed: every task runs once.
  OneRank rank(3);
  for (auto& count : counts) count = 0;
  for (int i = 0; i < static_cast<int>(counts.size()); ++i) {
    TaskOptions options;
    options.priority = i % 4 == 0 ? 0 : i % 7 - 3;
    rank.planner->submit(function_id(count_task), nullptr, 0, options, &i, sizeof i);
  }
  rank.planner->wait_all();
  for (const auto& count : counts) EXPECT_EQ(count.load(), 1);
  rank.shutdown();
}

}  // namespace
}  // namespace taskgrid::engine
