// Task execution contract of the Task Bench spec (section 7) and the
// -broadcast buffer check.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "core/kernels.h"
#include "core/task_contract.h"
#include "core/task_graph.h"
#include "test_support.h"

namespace {

using taskbench::InputView;
using taskbench::kScratchMarker;
using taskbench::TaskArgs;
using taskbench::TaskGraph;
using taskbench_test::parse;

int64_t read_i64(const char* data, size_t offset) {
  int64_t value;
  std::memcpy(&value, data + offset, sizeof value);
  return value;
}

void write_i64(char* data, size_t offset, int64_t value) {
  std::memcpy(data + offset, &value, sizeof value);
}

uint64_t read_u64(const char* data, size_t offset) {
  uint64_t value;
  std::memcpy(&value, data + offset, sizeof value);
  return value;
}

// True when `number` occurs in `text` as a whole number (not part of a
// longer digit string).
bool mentions_number(const std::string& text, int64_t number) {
  const std::regex re("(^|[^0-9])" + std::to_string(number) + "([^0-9]|$)");
  return std::regex_search(text, re);
}

// ---------------------------------------------------------------------------
// 7.3 Output generation.

TEST(FillOutput, RecordsAndUntouchedTrailingBytes) {
  std::vector<char> buffer(40, static_cast<char>(0xAB));
  taskbench::fill_output(buffer.data(), 40, 7, 3);
  EXPECT_EQ(read_i64(buffer.data(), 0), 7);
  EXPECT_EQ(read_i64(buffer.data(), 8), 3);
  EXPECT_EQ(read_i64(buffer.data(), 16), 7);
  EXPECT_EQ(read_i64(buffer.data(), 24), 3);
  for (size_t i = 32; i < 40; ++i)
    EXPECT_EQ(static_cast<unsigned char>(buffer[i]), 0xAB) << "byte " << i;
}

TEST(FillOutput, ExactMultipleAndTooSmall) {
  std::vector<char> buffer(64, static_cast<char>(0xAB));
  taskbench::fill_output(buffer.data(), 48, 123456789012, 42);
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(read_i64(buffer.data(), 16 * r), 123456789012);
    EXPECT_EQ(read_i64(buffer.data(), 16 * r + 8), 42);
  }
  for (size_t i = 48; i < 64; ++i) EXPECT_EQ(static_cast<unsigned char>(buffer[i]), 0xAB);

  std::vector<char> small(15, static_cast<char>(0xCD));
  taskbench::fill_output(small.data(), 15, 1, 1);  // no full record
  for (char c : small) EXPECT_EQ(static_cast<unsigned char>(c), 0xCD);
}

// ---------------------------------------------------------------------------
// 7.4 Scratch preparation.

TEST(PrepareScratch, MarkerInEveryWordAndNothingBeyond) {
  std::vector<char> scratch(72, static_cast<char>(0xCD));
  taskbench::prepare_scratch(scratch.data(), 64);
  for (size_t i = 0; i < 64; i += 8) EXPECT_EQ(read_u64(scratch.data(), i), kScratchMarker) << i;
  for (size_t i = 64; i < 72; ++i) EXPECT_EQ(static_cast<unsigned char>(scratch[i]), 0xCD);
  EXPECT_EQ(kScratchMarker, 0x5C4A7C8BULL);
  taskbench::prepare_scratch(nullptr, 0);  // no scratch: nothing to do
}

// ---------------------------------------------------------------------------
// 7.2 Input validation.

class CheckInputTest : public ::testing::Test {
 protected:
  // Graph index 3 of the run; stencil_1d, 48-byte outputs (3 records).
  TaskGraph graph = parse("-and -and -and -steps 40 -width 40 -type stencil_1d -output 48").graphs.at(3);
  static constexpr int64_t kT = 37;
  static constexpr int64_t kP = 23;
  // Effective inputs of (37, 23): 22, 23, 24; input 0 comes from 22.
  std::vector<char> buffer = make(kT - 1, 22, 48);

  static std::vector<char> make(int64_t t, int64_t q, size_t bytes) {
    std::vector<char> data(bytes, 0);
    taskbench::fill_output(data.data(), bytes, t, q);
    return data;
  }
  std::string check(size_t index, int64_t producer, const std::vector<char>& data) const {
    return taskbench::check_input(graph, kT, kP, index, producer, InputView{data.data(), data.size()});
  }
};

TEST_F(CheckInputTest, ValidInputs) {
  ASSERT_EQ(graph.graph_index, 3);
  EXPECT_EQ(check(0, 22, buffer), "");
  EXPECT_EQ(check(1, 23, make(kT - 1, 23, 48)), "");
  EXPECT_EQ(check(2, 24, make(kT - 1, 24, 48)), "");
}

TEST_F(CheckInputTest, WrongTimestepInLastRecord) {
  write_i64(buffer.data(), 32, 987654);
  const std::string message = check(0, 22, buffer);
  ASSERT_FALSE(message.empty());
  EXPECT_TRUE(mentions_number(message, 3)) << "graph index: " << message;
  EXPECT_TRUE(mentions_number(message, kT)) << "timestep: " << message;
  EXPECT_TRUE(mentions_number(message, kP)) << "point: " << message;
  EXPECT_TRUE(mentions_number(message, 0)) << "input index: " << message;
  EXPECT_TRUE(mentions_number(message, kT - 1)) << "expected timestep: " << message;
  EXPECT_TRUE(mentions_number(message, 22)) << "expected point: " << message;
  EXPECT_TRUE(mentions_number(message, 987654)) << "found value: " << message;
}

TEST_F(CheckInputTest, WrongPointInLastRecord) {
  write_i64(buffer.data(), 40, 555);
  const std::string message = check(0, 22, buffer);
  ASSERT_FALSE(message.empty());
  EXPECT_TRUE(mentions_number(message, 3)) << "graph index: " << message;
  EXPECT_TRUE(mentions_number(message, kT)) << "timestep: " << message;
  EXPECT_TRUE(mentions_number(message, kP)) << "point: " << message;
  EXPECT_TRUE(mentions_number(message, 0)) << "input index: " << message;
  EXPECT_TRUE(mentions_number(message, kT - 1)) << "expected timestep: " << message;
  EXPECT_TRUE(mentions_number(message, 22)) << "expected point: " << message;
  EXPECT_TRUE(mentions_number(message, 555)) << "found value: " << message;
}

TEST_F(CheckInputTest, InputIndexIsNamed) {
  std::vector<char> data = make(kT - 1, 24, 48);
  write_i64(data.data(), 8, 777);
  const std::string message = check(2, 24, data);
  ASSERT_FALSE(message.empty());
  EXPECT_TRUE(mentions_number(message, 2)) << "input index: " << message;
  EXPECT_TRUE(mentions_number(message, 24)) << message;
  EXPECT_TRUE(mentions_number(message, 777)) << message;
}

TEST_F(CheckInputTest, EveryRecordIsChecked) {
  for (size_t offset : {0u, 8u, 16u, 24u, 32u, 40u}) {
    std::vector<char> data = make(kT - 1, 22, 48);
    write_i64(data.data(), offset, read_i64(data.data(), offset) + 1);
    EXPECT_FALSE(check(0, 22, data).empty()) << "corrupted at byte " << offset;
  }
}

TEST_F(CheckInputTest, WrongProducer) {
  // Output of point 23 handed in as input 0 (which must come from 22).
  EXPECT_FALSE(check(0, 22, make(kT - 1, 23, 48)).empty());
  // Output of the wrong timestep.
  EXPECT_FALSE(check(0, 22, make(kT - 2, 22, 48)).empty());
}

TEST_F(CheckInputTest, SizeMustEqualOutputBytes) {
  EXPECT_FALSE(check(0, 22, make(kT - 1, 22, 32)).empty());  // too small
  EXPECT_FALSE(check(0, 22, make(kT - 1, 22, 8)).empty());   // below one record
  EXPECT_FALSE(check(0, 22, make(kT - 1, 22, 64)).empty());  // too large
  EXPECT_FALSE(check(0, 22, std::vector<char>()).empty());   // empty
}

TEST(CheckInput, TrailingBytesAreNotChecked) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type stencil_1d -output 40").graphs[0];
  std::vector<char> data(40, 0);
  taskbench::fill_output(data.data(), 40, 1, 2);
  std::memset(data.data() + 32, 0x5A, 8);
  EXPECT_EQ(taskbench::check_input(graph, 2, 2, 1, 2, InputView{data.data(), 40}), "");
}

// ---------------------------------------------------------------------------
// -broadcast buffer.

TEST(Broadcast, RoundTripAndFlippedBytes) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{4099}}) {
    std::vector<char> a(size + 1, 0), b(size + 1, 0);
    taskbench::fill_broadcast(a.data(), size);
    taskbench::fill_broadcast(b.data(), size);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), size), 0) << "deterministic, size " << size;
    EXPECT_EQ(taskbench::check_broadcast(a.data(), size), "") << "size " << size;
    if (size == 0) continue;
    for (size_t position : {size_t{0}, size / 2, size - 1}) {
      std::vector<char> bad = a;
      bad[position] = static_cast<char>(bad[position] ^ 0xFF);
      EXPECT_FALSE(taskbench::check_broadcast(bad.data(), size).empty())
          << "size " << size << " flipped byte " << position;
      bad[position] = static_cast<char>(bad[position] ^ 0x01);
      EXPECT_FALSE(taskbench::check_broadcast(bad.data(), size).empty())
          << "size " << size << " changed byte " << position;
    }
  }
}

TEST(Broadcast, NeverReceivedBufferIsRejected) {
  // A receive buffer that was never filled (all zero) must not pass.
  std::vector<char> zeros(4099, 0);
  EXPECT_FALSE(taskbench::check_broadcast(zeros.data(), zeros.size()).empty());
}

// ---------------------------------------------------------------------------
// execute_task: 7.1 - 7.5 and the fatal handler.

// Buffers for one task of `graph`, valid unless a test breaks them.
struct TaskSetup {
  TaskGraph graph;
  int64_t timestep;
  int64_t point;
  std::vector<int64_t> points;
  std::vector<std::vector<char>> buffers;
  std::vector<InputView> views;
  std::vector<char> output;
  std::vector<char> scratch;
  std::vector<char> broadcast;

  TaskSetup(const TaskGraph& g, int64_t t, int64_t p) : graph(g), timestep(t), point(p) {
    graph.effective_inputs(t, p, points);
    for (int64_t q : points) {
      buffers.emplace_back(static_cast<size_t>(graph.output_bytes), 0);
      taskbench::fill_output(buffers.back().data(), buffers.back().size(), t - 1, q);
    }
    output.assign(static_cast<size_t>(graph.output_bytes), 0);
    scratch.assign(static_cast<size_t>(graph.scratch_bytes), 0);
    taskbench::prepare_scratch(scratch.data(), scratch.size());
  }

  TaskArgs args() {
    views.clear();
    for (const auto& buffer : buffers) views.push_back({buffer.data(), buffer.size()});
    return TaskArgs{&graph,
                    timestep,
                    point,
                    output.data(),
                    output.size(),
                    views.data(),
                    points.data(),
                    views.size(),
                    scratch.empty() ? nullptr : scratch.data(),
                    scratch.size(),
                    broadcast.empty() ? nullptr : broadcast.data(),
                    broadcast.size()};
  }
};

class ExecuteTaskDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST(ExecuteTask, ValidTaskWritesOutputAndReturnsKernelResult) {
  const TaskGraph graph =
      parse("-steps 4 -width 4 -type stencil_1d -kernel busy_wait -iter 10 -output 40").graphs[0];
  TaskSetup setup(graph, 2, 1);
  ASSERT_EQ(setup.points.size(), 3u);
  std::fill(setup.output.begin(), setup.output.end(), static_cast<char>(0xAB));
  const double result = taskbench::execute_task(setup.args());
  EXPECT_EQ(result, taskbench::kernel_busy_wait(10));
  EXPECT_EQ(read_i64(setup.output.data(), 0), 2);
  EXPECT_EQ(read_i64(setup.output.data(), 8), 1);
  EXPECT_EQ(read_i64(setup.output.data(), 16), 2);
  EXPECT_EQ(read_i64(setup.output.data(), 24), 1);
  for (size_t i = 32; i < 40; ++i) EXPECT_EQ(static_cast<unsigned char>(setup.output[i]), 0xAB);
}

TEST(ExecuteTask, ContractAloneChecksAndWritesButRunsNoKernel) {
  // A kernel that would take minutes: execute_contract must not run it.
  const TaskGraph graph = parse(
                              "-steps 4 -width 4 -type stencil_1d -kernel gpu_compute_bound "
                              "-gpu-lanes 100000000 -iter 100000000 -output 32")
                              .graphs[0];
  TaskSetup setup(graph, 2, 1);
  taskbench::execute_contract(setup.args());
  EXPECT_EQ(read_i64(setup.output.data(), 0), 2);
  EXPECT_EQ(read_i64(setup.output.data(), 8), 1);
  EXPECT_EQ(read_i64(setup.output.data(), 16), 2);
  EXPECT_EQ(read_i64(setup.output.data(), 24), 1);
}

TEST_F(ExecuteTaskDeathTest, ContractAloneStillChecksInputs) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type stencil_1d").graphs[0];
  TaskSetup setup(graph, 2, 1);
  setup.buffers[1][0] = 9;
  EXPECT_EXIT(taskbench::execute_contract(setup.args()), ::testing::ExitedWithCode(1),
              "input 1 \\(from point 1\\) record 0");
}

TEST(ExecuteTask, TimestepZeroHasNoInputs) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type all_to_all").graphs[0];
  TaskSetup setup(graph, 0, 3);
  EXPECT_TRUE(setup.points.empty());
  taskbench::execute_task(setup.args());
  EXPECT_EQ(read_i64(setup.output.data(), 0), 0);
  EXPECT_EQ(read_i64(setup.output.data(), 8), 3);
}

TEST(ExecuteTask, MemoryKernelWithPreparedScratchRunsRepeatedly) {
  const TaskGraph graph =
      parse("-steps 6 -width 2 -type no_comm -kernel memory_bound -scratch 256 -sample 8 -iter 5")
          .graphs[0];
  std::vector<char> scratch(256);
  taskbench::prepare_scratch(scratch.data(), scratch.size());
  for (int64_t t = 0; t < 6; ++t) {
    TaskSetup setup(graph, t, 1);
    setup.scratch = scratch;
    taskbench::execute_task(setup.args());
    scratch = setup.scratch;
    EXPECT_EQ(read_u64(scratch.data(), 0), kScratchMarker) << "t " << t;
  }
}

TEST(ExecuteTask, ExtraInputsBeyondTheDependenciesAreTolerated) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type no_comm").graphs[0];
  TaskSetup setup(graph, 1, 2);
  ASSERT_EQ(setup.points.size(), 1u);
  setup.points.push_back(0);
  setup.buffers.emplace_back(16, static_cast<char>(0x77));  // garbage, not checked
  taskbench::execute_task(setup.args());
  EXPECT_EQ(read_i64(setup.output.data(), 8), 2);
}

TEST(ExecuteTask, ValidBroadcastIsAccepted) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type stencil_1d").graphs[0];
  TaskSetup setup(graph, 1, 1);
  setup.broadcast.resize(4099);
  taskbench::fill_broadcast(setup.broadcast.data(), setup.broadcast.size());
  taskbench::execute_task(setup.args());
  EXPECT_EQ(read_i64(setup.output.data(), 0), 1);
}

TEST_F(ExecuteTaskDeathTest, CorruptedInputDies) {
  const TaskGraph graph =
      parse("-and -steps 40 -width 40 -type stencil_1d -output 48").graphs.at(1);
  TaskSetup setup(graph, 37, 23);
  ASSERT_EQ(setup.points.size(), 3u);
  write_i64(setup.buffers[2].data(), 32, 987654);  // last record of input 2
  EXPECT_EXIT(taskbench::execute_task(setup.args()), ::testing::ExitedWithCode(1),
              "error: .*987654");
}

TEST_F(ExecuteTaskDeathTest, InputsInWrongOrderDie) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type stencil_1d").graphs[0];
  TaskSetup setup(graph, 2, 1);
  std::swap(setup.buffers[0], setup.buffers[2]);
  EXPECT_EXIT(taskbench::execute_task(setup.args()), ::testing::ExitedWithCode(1), "error: ");
}

TEST_F(ExecuteTaskDeathTest, TooFewInputsDie) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type stencil_1d").graphs[0];
  TaskSetup setup(graph, 2, 1);
  setup.buffers.pop_back();
  setup.points.pop_back();
  EXPECT_EXIT(taskbench::execute_task(setup.args()), ::testing::ExitedWithCode(1), "error: ");
}

TEST_F(ExecuteTaskDeathTest, WrongInputSizeDies) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type stencil_1d -output 32").graphs[0];
  TaskSetup setup(graph, 2, 1);
  setup.buffers[1].resize(16);  // still one valid record, wrong size
  EXPECT_EXIT(taskbench::execute_task(setup.args()), ::testing::ExitedWithCode(1), "error: ");
}

TEST_F(ExecuteTaskDeathTest, WrongScratchMarkerDies) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type stencil_1d -scratch 64").graphs[0];
  TaskSetup setup(graph, 1, 1);
  std::fill(setup.scratch.begin(), setup.scratch.end(), 0);
  EXPECT_EXIT(taskbench::execute_task(setup.args()), ::testing::ExitedWithCode(1), "error: ");
}

TEST_F(ExecuteTaskDeathTest, WrongOutputSizeDies) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type stencil_1d -output 32").graphs[0];
  TaskSetup setup(graph, 1, 1);
  setup.output.resize(16);
  EXPECT_EXIT(taskbench::execute_task(setup.args()), ::testing::ExitedWithCode(1), "error: ");
}

TEST_F(ExecuteTaskDeathTest, WrongScratchSizeDies) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type stencil_1d -scratch 64").graphs[0];
  TaskSetup setup(graph, 1, 1);
  setup.scratch.resize(32);
  EXPECT_EXIT(taskbench::execute_task(setup.args()), ::testing::ExitedWithCode(1), "error: ");
}

TEST_F(ExecuteTaskDeathTest, InactivePointDies) {
  const TaskGraph graph = parse("-steps 6 -width 4 -type dom").graphs[0];
  TaskSetup setup(graph, 0, 2);  // only point 0 is active at t = 0
  EXPECT_EXIT(taskbench::execute_task(setup.args()), ::testing::ExitedWithCode(1), "error: ");
}

TEST_F(ExecuteTaskDeathTest, TimestepOutOfRangeDies) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type trivial").graphs[0];
  TaskSetup setup(graph, 4, 0);
  EXPECT_EXIT(taskbench::execute_task(setup.args()), ::testing::ExitedWithCode(1), "error: ");
}

TEST_F(ExecuteTaskDeathTest, CorruptedBroadcastDies) {
  const TaskGraph graph = parse("-steps 4 -width 4 -type trivial").graphs[0];
  TaskSetup setup(graph, 1, 1);
  setup.broadcast.resize(4099);
  taskbench::fill_broadcast(setup.broadcast.data(), setup.broadcast.size());
  setup.broadcast[2048] = static_cast<char>(setup.broadcast[2048] ^ 0x10);
  EXPECT_EXIT(taskbench::execute_task(setup.args()), ::testing::ExitedWithCode(1), "error: ");
}

TEST_F(ExecuteTaskDeathTest, DefaultFatalHandlerPrintsAndExits1) {
  EXPECT_EXIT(taskbench::fatal("something broke 4242"), ::testing::ExitedWithCode(1),
              "error: something broke 4242");
}

[[noreturn]] void exit_42(const std::string& diagnostic) {
  const std::string line = "custom: " + diagnostic + "\n";
  (void)!write(2, line.data(), line.size());
  _exit(42);
}

TEST_F(ExecuteTaskDeathTest, CustomFatalHandlerIsUsed) {
  EXPECT_EXIT(
      {
        taskbench::set_fatal_handler(exit_42);
        const TaskGraph graph = parse("-steps 4 -width 4 -type stencil_1d").graphs[0];
        TaskSetup setup(graph, 2, 1);
        write_i64(setup.buffers[0].data(), 0, 99);
        taskbench::execute_task(setup.args());
      },
      ::testing::ExitedWithCode(42), "custom: ");
}

}  // namespace
