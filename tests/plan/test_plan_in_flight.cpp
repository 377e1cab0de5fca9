// plan::InFlightTasks: the tasks a planner waits for, by task id, with the
// handle states their completions release; bounded however far ids run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "plan/in_flight.h"

namespace taskgrid::plan {
namespace {

// Stand-ins for the tracker's handle states: one per id, alive for the
// whole test program (as a state is while a task in flight names it).
graph::HandleState* state_of(uint64_t handle) {
  static std::map<uint64_t, std::unique_ptr<graph::HandleState>> states;
  std::unique_ptr<graph::HandleState>& state = states[handle];
  if (!state) {
    state = std::make_unique<graph::HandleState>();
    state->id = handle;
  }
  return state.get();
}

std::vector<graph::ResolvedAccess> accesses_of(std::vector<uint64_t> handles) {
  std::vector<graph::ResolvedAccess> accesses(handles.size());
  for (size_t i = 0; i < handles.size(); ++i) {
    accesses[i].handle = handles[i];
    accesses[i].state = state_of(handles[i]);
  }
  return accesses;
}

std::vector<uint64_t> complete(InFlightTasks& tasks, uint64_t id,
                               InFlightTasks::Done* done_out = nullptr) {
  std::vector<uint64_t> handles;
  InFlightTasks::Done done{};
  const bool known =
      tasks.complete(id, done, [&](graph::HandleState* h) { handles.push_back(h->id); });
  if (done_out) *done_out = done;
  if (!known) handles.push_back(~uint64_t{0});  // marks "unknown"
  return handles;
}

TEST(InFlightTasks, CompletionReturnsWhatWasAdded) {
  InFlightTasks tasks;
  const auto a = accesses_of({3, 1, 3});
  tasks.add(7, 42, 2, false, a.data(), a.size());
  tasks.add(8, 43, 1, true, nullptr, 0);
  EXPECT_EQ(tasks.submitted(), 2u);
  EXPECT_EQ(tasks.in_flight(), 2u);
  EXPECT_EQ(tasks.communicating(), 1u);
  InFlightTasks::Done done{};
  EXPECT_EQ(complete(tasks, 7, &done), (std::vector<uint64_t>{3, 1, 3}));
  EXPECT_EQ(done.function, 42u);
  EXPECT_EQ(done.rank, 2);
  EXPECT_FALSE(done.communicates);
  EXPECT_EQ(tasks.in_flight(), 1u);
  EXPECT_TRUE(complete(tasks, 8, &done).empty());
  EXPECT_TRUE(done.communicates);
  EXPECT_EQ(tasks.communicating(), 0u);
  EXPECT_EQ(tasks.completed(), 2u);
  EXPECT_EQ(tasks.in_flight(), 0u);
}

TEST(InFlightTasks, CountsTheBytesTheTasksWrite) {
  InFlightTasks tasks;
  std::vector<graph::ResolvedAccess> a = accesses_of({1, 2});
  a[0].bytes = 100;  // read only: not counted
  a[0].in_version = 5;
  a[1].bytes = 300;
  a[1].out_version = 9;
  tasks.add(1, 0, 0, false, a.data(), a.size());
  std::vector<graph::ResolvedAccess> b = accesses_of({3});
  b[0].bytes = 50;
  b[0].in_version = 6;
  b[0].out_version = 10;  // inout: counted
  tasks.add(2, 0, 0, false, b.data(), b.size());
  EXPECT_EQ(tasks.output_bytes(), 350u);
  complete(tasks, 1);
  EXPECT_EQ(tasks.output_bytes(), 50u);
  complete(tasks, 1);  // repeated: changes nothing
  EXPECT_EQ(tasks.output_bytes(), 50u);
  complete(tasks, 2);
  EXPECT_EQ(tasks.output_bytes(), 0u);
}

TEST(InFlightTasks, UnknownAndRepeatedCompletionsAreIgnored) {
  InFlightTasks tasks;
  const auto a = accesses_of({1});
  tasks.add(1, 1, 0, false, a.data(), a.size());
  EXPECT_EQ(complete(tasks, 2), std::vector<uint64_t>{~uint64_t{0}});
  EXPECT_EQ(complete(tasks, 1), std::vector<uint64_t>{1});
  EXPECT_EQ(complete(tasks, 1), std::vector<uint64_t>{~uint64_t{0}});
  EXPECT_EQ(tasks.completed(), 1u);
}

TEST(InFlightTasks, ManyAccessesAreKept) {
  InFlightTasks tasks;
  for (uint64_t n : {5u, 17u, 64u, 65u, 300u}) {
    std::vector<uint64_t> handles(n);
    for (uint64_t i = 0; i < n; ++i) handles[i] = 1000 + i * n;
    const auto a = accesses_of(handles);
    tasks.add(n, 1, 0, false, a.data(), a.size());
  }
  for (uint64_t n : {300u, 5u, 65u, 17u, 64u}) {
    const auto handles = complete(tasks, n);
    ASSERT_EQ(handles.size(), n);
    for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(handles[i], 1000 + i * n);
  }
  EXPECT_EQ(tasks.in_flight(), 0u);
}

TEST(InFlightTasks, OutOfOrderCompletions) {
  std::mt19937_64 random(7);
  InFlightTasks tasks;
  std::vector<uint64_t> pending;
  uint64_t next = 1;
  for (int round = 0; round < 200000; ++round) {
    if (pending.size() < 64 && random() % 2) {
      const uint64_t h = next % 10 + 1;
      const auto a = accesses_of({h, h + 100});
      tasks.add(next, static_cast<uint32_t>(next), 0, false, a.data(), a.size());
      pending.push_back(next++);
    } else if (!pending.empty()) {
      const size_t at = random() % std::min<size_t>(pending.size(), 16);
      const uint64_t id = pending[at];
      pending.erase(pending.begin() + static_cast<long>(at));
      InFlightTasks::Done done{};
      const auto handles = complete(tasks, id, &done);
      ASSERT_EQ(handles, (std::vector<uint64_t>{id % 10 + 1, id % 10 + 101}));
      ASSERT_EQ(done.function, static_cast<uint32_t>(id));
    }
    ASSERT_EQ(tasks.in_flight(), pending.size());
  }
}

TEST(InFlightTasks, ALongTaskDoesNotGrowTheTable) {
  // A channel task that waits for its peers while a million others finish.
  InFlightTasks tasks;
  const auto a = accesses_of({1, 2});
  tasks.add(1, 9, 0, true, a.data(), a.size());
  for (uint64_t id = 2; id < 1'000'000; ++id) {
    tasks.add(id, 1, 0, false, a.data(), 1);
    if (id > 41) {
      ASSERT_EQ(complete(tasks, id - 40).size(), 1u);
    }
  }
  EXPECT_LE(tasks.capacity(), 4096u);
  EXPECT_EQ(tasks.long_lived(), 1u);
  EXPECT_EQ(complete(tasks, 1), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(tasks.long_lived(), 0u);
}

TEST(InFlightTasks, SparseIdsOfOneRankStayBounded) {
  // spmd: one task in 1024 is this rank's.
  InFlightTasks tasks;
  const auto a = accesses_of({1});
  std::vector<uint64_t> pending;
  for (uint64_t id = 1024; id < 50'000'000; id += 1024) {
    tasks.add(id, 1, 0, false, a.data(), a.size());
    pending.push_back(id);
    if (pending.size() > 100) {
      ASSERT_EQ(complete(tasks, pending.front()).size(), 1u);
      pending.erase(pending.begin());
    }
  }
  EXPECT_LE(tasks.capacity(), 4096u);
  for (uint64_t id : pending) ASSERT_EQ(complete(tasks, id).size(), 1u);
  EXPECT_EQ(tasks.in_flight(), 0u);
}

}  // namespace
}  // namespace taskgrid::plan
