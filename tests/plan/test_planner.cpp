// The planner alone (no MPI, no engine): what it commands, checked through a
// sink that stands in for an engine taking no time (bench/planner/instant_sink.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "bench/planner/instant_sink.h"
#include "data/buffer_pool.h"
#include "plan/planner.h"

namespace taskgrid::plan {
namespace {

void planner_test_task(TaskContext&) {}
TASKGRID_REGISTER(planner_test_task);

// Calls on(kind, payload) for each command of `batch`.
template <typename OnCommand>
void for_each_command(const std::vector<char>& batch, OnCommand&& on) {
  comm::wire::BatchReader reader(batch.data(), batch.size());
  comm::wire::Header header;
  const char* payload = nullptr;
  while (reader.next(header, payload)) on(header.kind, payload);
}

// Records the commands addressed to each rank, then passes them on to the
// instant engine (which completes this rank's tasks).
class RecordingSink final : public core::CommandSink {
 public:
  explicit RecordingSink(int rank) : instant_(rank) {}
  void set_listener(core::EngineListener* listener) { instant_.set_listener(listener); }
  std::vector<char> post(int dest, std::vector<char>&& batch) override {
    for_each_command(batch, [&](comm::wire::Kind kind, const char* payload) {
      kinds[dest].push_back(kind);
      if (kind == comm::wire::Kind::send) {
        comm::wire::Send send;
        std::memcpy(&send, payload, sizeof send);
        sends.push_back(send);
      } else if (kind == comm::wire::Kind::task) {
        comm::wire::Task task;
        std::memcpy(&task, payload, sizeof task);
        for (uint32_t i = 0; i < task.num_accesses; ++i) {
          comm::wire::Access access;
          std::memcpy(&access, payload + sizeof task + i * sizeof access, sizeof access);
          accesses.push_back(access);
        }
      }
    });
    return instant_.post(dest, std::move(batch));
  }
  void prepare_broadcast_group(const std::vector<int32_t>&, int) override {}
  bench::InstantSink& instant() { return instant_; }

  std::map<int, std::vector<comm::wire::Kind>> kinds;
  std::vector<comm::wire::Send> sends;
  std::vector<comm::wire::Access> accesses;  // of every task, in order

 private:
  bench::InstantSink instant_;
};

PlannerConfig spmd_config(int rank, int ranks) {
  PlannerConfig config;
  config.mode = PlannerMode::spmd;
  config.rank = rank;
  config.ranks = ranks;
  return config;
}

// Cluster mode's head (rank 0) placing round-robin unless hinted.
PlannerConfig head_config(int ranks) {
  PlannerConfig config;
  config.mode = PlannerMode::cluster;
  config.rank = 0;
  config.ranks = ranks;
  config.scheduler = sched::Scheduler::round_robin;
  return config;
}

size_t count(const std::vector<comm::wire::Kind>& kinds, comm::wire::Kind kind) {
  return static_cast<size_t>(std::count(kinds.begin(), kinds.end(), kind));
}

// An engine thread for the planner's waits: delivers completions until stopped.
class EngineThread {
 public:
  explicit EngineThread(bench::InstantSink& sink)
      : thread_([this, &sink] {
          while (!stop_.load()) {
            sink.deliver();
            std::this_thread::yield();
          }
        }) {}
  ~EngineThread() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(Planner, SpmdEmitsOnlyThisRanksCommands) {
  RecordingSink sink(1);
  Planner planner(sink, spmd_config(1, 4));
  sink.set_listener(&planner);
  double values[4] = {};
  std::vector<DataHandle> handles;
  for (int owner = 0; owner < 4; ++owner)
    handles.push_back(planner.enter_data(&values[owner], sizeof(double), owner));
  // One task per rank on its own data (placed on the data's owner).
  for (int r = 0; r < 4; ++r) {
    const DataAccess access = inout(handles[static_cast<size_t>(r)]);
    planner.submit(function_id(planner_test_task), &access, 1, TaskOptions{}, nullptr, 0);
  }
  {
    EngineThread engine(sink.instant());
    planner.wait_all();
  }
  ASSERT_EQ(sink.kinds.size(), 1u);  // rank 1's engine only
  const auto& mine = sink.kinds[1];
  EXPECT_EQ(count(mine, comm::wire::Kind::create), 1u);  // its own data
  EXPECT_EQ(count(mine, comm::wire::Kind::task), 1u);    // its own task
  EXPECT_EQ(sink.instant().tasks(), 1u);
}

// In spmd mode a rank's own tasks are one in `ranks` of the task ids. Its
// table of tasks in flight is keyed by its own count of them, so a deep window
// of them stays in the table's ring; keyed by task id, all but 4096/8 of them
// went to the table's side map (a hash map) once the ring stopped growing.
TEST(Planner, SpmdOwnTasksInFlightStayInTheRingWhenTheyAreOneInEight) {
  bench::InstantSink sink(0);
  Planner planner(sink, spmd_config(0, 8));
  sink.set_listener(&planner);
  constexpr int kTasks = 8 * 6000;
  for (int i = 0; i < kTasks; ++i) {
    TaskOptions options;
    options.rank = i % 8;
    planner.submit(function_id(planner_test_task), nullptr, 0, options, nullptr, 0);
  }
  planner.flush_for_tests();
  EXPECT_EQ(sink.tasks(), static_cast<uint64_t>(kTasks / 8));
  EXPECT_EQ(planner.in_flight_for_tests(), static_cast<uint64_t>(kTasks / 8));
  EXPECT_EQ(planner.in_flight_moved_aside_for_tests(), 0u);
  {
    EngineThread engine(sink);
    planner.wait_all();
  }
  EXPECT_EQ(planner.in_flight_for_tests(), 0u);
}

// Rank 0 produces a version that a task on rank 1 reads: rank 0's planner
// orders the send, rank 1's planner makes its task expect it from rank 0 with
// the same tag (both plan the same sequence independently).
TEST(Planner, SpmdProducerSendsToTheConsumerWithTheConsumersTag) {
  std::vector<std::unique_ptr<RecordingSink>> sinks;
  std::vector<std::unique_ptr<Planner>> planners;
  for (int rank = 0; rank < 2; ++rank) {
    sinks.push_back(std::make_unique<RecordingSink>(rank));
    planners.push_back(std::make_unique<Planner>(*sinks.back(), spmd_config(rank, 2)));
    sinks.back()->set_listener(planners.back().get());
  }
  double value = 1.0;
  for (int rank = 0; rank < 2; ++rank) {
    Planner& planner = *planners[static_cast<size_t>(rank)];
    const DataHandle h = planner.enter_data(&value, sizeof value, 0);
    const DataAccess write = inout(h), read = in(h);
    planner.submit(function_id(planner_test_task), &write, 1, TaskOptions{}, nullptr, 0);
    TaskOptions on_one;
    on_one.rank = 1;
    planner.submit(function_id(planner_test_task), &read, 1, on_one, nullptr, 0);
    EngineThread engine(sinks[static_cast<size_t>(rank)]->instant());
    planner.wait_all();
  }
  ASSERT_EQ(sinks[0]->sends.size(), 1u);
  const comm::wire::Send send = sinks[0]->sends[0];
  EXPECT_EQ(send.dest, 1);
  EXPECT_TRUE(sinks[1]->sends.empty());
  ASSERT_EQ(sinks[1]->accesses.size(), 1u);  // rank 1 runs only the reader
  const comm::wire::Access input = sinks[1]->accesses[0];
  EXPECT_EQ(input.in_version, send.version);
  EXPECT_EQ(input.source, 0);
  EXPECT_EQ(input.tag, send.tag);
}

// A task that reads a version and writes its successor (inout) retires that
// version on its own rank through its access (kRetiresInput), not with a
// retire command; the other holders still get one, and so does the rank of
// a task that only writes (out: it never had the old version linked).
TEST(Planner, AnInoutTaskRetiresItsInputOnItsRankThroughItsAccess) {
  RecordingSink sink(0);
  Planner planner(sink, head_config(3));
  sink.set_listener(&planner);
  double value = 0;
  const DataHandle h = planner.enter_data(&value, sizeof value, -1);  // on the head
  const auto on = [](int rank) {
    TaskOptions options;
    options.rank = rank;
    return options;
  };
  const DataAccess update = inout(h), overwrite = out(h);
  // Three updates on rank 1: the first reads the head's version (sent to
  // rank 1, which then holds it too), the others rank 1's own.
  for (int i = 0; i < 3; ++i)
    planner.submit(function_id(planner_test_task), &update, 1, on(1), nullptr, 0);
  planner.submit(function_id(planner_test_task), &overwrite, 1, on(1), nullptr, 0);
  planner.flush_for_tests();

  ASSERT_EQ(sink.accesses.size(), 4u);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(sink.accesses[static_cast<size_t>(i)].flags, comm::wire::kRetiresInput) << i;
  EXPECT_EQ(sink.accesses[3].flags, 0u) << "out: no input to retire";
  EXPECT_EQ(count(sink.kinds[0], comm::wire::Kind::retire), 1u)
      << "the head held the first version too: its retire command remains";
  EXPECT_EQ(count(sink.kinds[1], comm::wire::Kind::retire), 1u)
      << "rank 1: only the version the out task supersedes, by command";
  EXPECT_EQ(count(sink.kinds[2], comm::wire::Kind::retire), 0u);
  sink.instant().deliver();
}

// Submissions' cost must not grow with the job: a task that concerns neither
// this rank's data nor its placement emits nothing for this rank.
TEST(Planner, SpmdForeignTasksEmitNothingHere) {
  RecordingSink sink(0);
  Planner planner(sink, spmd_config(0, 1024));
  sink.set_listener(&planner);
  double value = 0;
  const DataHandle h = planner.enter_data(&value, sizeof value, 700);
  const DataAccess access = inout(h);
  for (int i = 0; i < 1000; ++i)
    planner.submit(function_id(planner_test_task), &access, 1, TaskOptions{}, nullptr, 0);
  planner.wait_all();  // nothing of this rank's to wait for
  EXPECT_TRUE(sink.kinds.empty());
}

// A version that is never superseded (read-only data) outlives hundreds of
// thousands of newer ones: the directory moves it out of its ring, and it
// still knows where the version is (one transfer to each reader rank, ever).
TEST(Planner, ALongLivedVersionIsSentOncePerReaderRank) {
  RecordingSink sink(0);
  Planner planner(sink, spmd_config(0, 2));
  sink.set_listener(&planner);
  double constant = 1, values[2] = {};
  const DataHandle shared = planner.enter_data(&constant, sizeof constant, 0);
  const DataHandle mine = planner.enter_data(&values[0], sizeof(double), 0);
  const DataHandle theirs = planner.enter_data(&values[1], sizeof(double), 1);
  for (int i = 0; i < 200000; ++i) {
    const DataAccess accesses[2] = {in(shared), inout(i % 2 ? theirs : mine)};
    planner.submit(function_id(planner_test_task), accesses, 2, TaskOptions{}, nullptr, 0);
    if (i % 64 == 0) sink.instant().deliver();
  }
  {
    EngineThread engine(sink.instant());
    planner.wait_all();
  }
  // Rank 0 holds `shared` and sends it to rank 1 once; its own 100000 tasks.
  ASSERT_EQ(sink.sends.size(), 1u);
  EXPECT_EQ(sink.sends[0].dest, 1);
  EXPECT_EQ(sink.instant().tasks(), 100000u);
}

// A sink that builds its own rank's tasks in place (as the engine does): it
// keeps each built task's fields and accesses, and records the commands of
// every batch. Its tasks complete when the test says.
class BuildingSink final : public core::CommandSink, public core::LocalTaskBuilder {
 public:
  struct Built {
    comm::wire::Task task;
    std::vector<comm::wire::Access> accesses;
  };
  explicit BuildingSink(int rank) : rank_(rank) {}
  void set_listener(core::EngineListener* listener) { listener_ = listener; }
  core::LocalTaskBuilder* local_task_builder() override { return this; }
  Slot open(const comm::wire::Task& task, const void*, const char*) override {
    built.push_back(std::make_unique<Built>(Built{task, {}}));
    built.back()->accesses.resize(task.num_accesses);
    return {built.back().get(), built.back()->accesses.data()};
  }
  std::vector<char> post(int dest, std::vector<char>&& batch) override {
    for_each_command(batch, [&](comm::wire::Kind kind, const char* payload) {
      kinds[dest].push_back(kind);
      if (kind == comm::wire::Kind::local_task) {
        EXPECT_EQ(dest, rank_) << "a record's address may only go to this process's engine";
        const auto* task =
            static_cast<const Built*>(comm::wire::read<comm::wire::LocalTask>(payload).record);
        in_place_order.push_back(task);
        completed.push_back({task->task.task_id, 0, task->task.completion_key});
      } else if (kind == comm::wire::Kind::send) {
        sends.emplace_back(dest, comm::wire::read<comm::wire::Send>(payload));
      } else if (kind == comm::wire::Kind::task) {
        const comm::wire::Task task = comm::wire::read<comm::wire::Task>(payload);
        encoded.push_back(task);
        completed.push_back({task.task_id, 0, task.completion_key});
      } else if (kind == comm::wire::Kind::create) {
        data::release_buffer(
            comm::wire::read<comm::wire::Create>(payload).buffer);  // the engine's to free
      }
    });
    batch.clear();
    return std::move(batch);
  }
  void prepare_broadcast_group(const std::vector<int32_t>&, int) override {}
  void complete_all() {
    if (!completed.empty()) listener_->on_completed(completed.data(), completed.size());
    completed.clear();
  }

  std::vector<std::unique_ptr<Built>> built;            // in the order they were opened
  std::vector<const Built*> in_place_order;             // in the order their commands came
  std::vector<comm::wire::Task> encoded;                // task commands (other ranks')
  std::vector<std::pair<int, comm::wire::Send>> sends;  // (the holder told to send, the send)
  std::map<int, std::vector<comm::wire::Kind>> kinds;   // every command, per destination
  std::vector<comm::wire::Completed> completed;

 private:
  const int rank_;
  core::EngineListener* listener_ = nullptr;
};

// Cluster mode: the head builds its own tasks in its engine's records and
// encodes the others'. A built task carries what its command would: its
// fields, its key, and accesses routed like an encoded task's (an input
// produced on another rank comes from there, with the send's tag).
TEST(Planner, TheHeadBuildsItsOwnTasksInPlaceAndEncodesTheOthers) {
  BuildingSink sink(0);
  Planner planner(sink, head_config(3));
  sink.set_listener(&planner);
  double value = 0;
  const DataHandle h = planner.enter_data(&value, sizeof value, -1);
  const uint64_t args = 0x5eed;
  // inout on rank 1, then on rank 0 (reads rank 1's version), then on rank 2.
  for (const int rank : {1, 0, 2}) {
    TaskOptions options;
    options.rank = rank;
    const DataAccess access = inout(h);
    planner.submit(function_id(planner_test_task), &access, 1, options, &args, sizeof args);
  }
  planner.flush_for_tests();

  ASSERT_EQ(sink.built.size(), 1u) << "only the head's own task is built";
  ASSERT_EQ(sink.in_place_order.size(), 1u);
  EXPECT_EQ(sink.in_place_order[0], sink.built[0].get());
  EXPECT_EQ(count(sink.kinds[0], comm::wire::Kind::task), 0u)
      << "nothing encoded for the head itself";
  EXPECT_EQ(count(sink.kinds[1], comm::wire::Kind::local_task), 0u);
  EXPECT_EQ(count(sink.kinds[2], comm::wire::Kind::local_task), 0u);
  ASSERT_EQ(sink.encoded.size(), 2u);
  const BuildingSink::Built& mine = *sink.built[0];
  EXPECT_EQ(mine.task.function, function_id(planner_test_task).value);
  EXPECT_EQ(mine.task.args_bytes, sizeof args);
  EXPECT_EQ(mine.task.num_accesses, 1u);
  EXPECT_EQ(mine.task.task_id, 2u) << "the second submission";
  const std::vector<uint64_t> keys = {sink.encoded[0].completion_key, mine.task.completion_key,
                                      sink.encoded[1].completion_key};
  EXPECT_EQ(keys, (std::vector<uint64_t>{1, 2, 3})) << "one key sequence over both paths";
  ASSERT_EQ(mine.accesses.size(), 1u);
  const comm::wire::Access& input = mine.accesses[0];
  EXPECT_EQ(input.source, 1) << "rank 1 wrote the version it reads";
  EXPECT_NE(input.in_version, 0u);
  EXPECT_NE(input.out_version, 0u);
  EXPECT_EQ(input.bytes, sizeof value);
  EXPECT_EQ(input.mode, static_cast<uint8_t>(AccessMode::inout));
  // The send that delivers it: rank 1 sends that version to the head, with
  // that tag (the first send took the entered data from the head to rank 1).
  const auto to_head = std::find_if(sink.sends.begin(), sink.sends.end(),
                                    [](const auto& sent) { return sent.second.dest == 0; });
  ASSERT_NE(to_head, sink.sends.end());
  EXPECT_EQ(to_head->first, 1);
  EXPECT_EQ(to_head->second.version, input.in_version);
  EXPECT_EQ(to_head->second.tag, input.tag);

  sink.complete_all();
  EXPECT_EQ(planner.in_flight_for_tests(), 0u) << "completions of both paths are counted";
  planner.release(h);
}

}  // namespace
}  // namespace taskgrid::plan
