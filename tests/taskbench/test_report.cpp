// Output of the Task Bench spec (section 8): configuration block, -v/-vv
// listing, report lines, execution-count check and the -json file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/options.h"
#include "core/report.h"
#include "test_support.h"

namespace {

using taskbench::BenchConfig;
using taskbench::ExecutionCounts;
using taskbench::RunInfo;
using taskbench_test::contains_in_order;
using taskbench_test::parse;

const char* const kSampleFlags =
    "-steps 100 -width 2 -type stencil_1d -kernel compute_bound -iter 1024";

const char* const kSampleConfiguration =
    "Running Task Benchmark\n"
    "  Configuration:\n"
    "    Task Graph 1:\n"
    "      Time Steps: 100\n"
    "      Max Width: 2\n"
    "      Dependence Type: stencil_1d\n"
    "      Radix: 3\n"
    "      Period: 0\n"
    "      Fraction Connected: 0.250000\n"
    "      Kernel:\n"
    "        Type: compute_bound\n"
    "        Iterations: 1024\n"
    "        Samples: 16\n"
    "        Imbalance: 0.000000\n"
    "      Output Bytes: 16\n"
    "      Scratch Bytes: 0\n";

TEST(ConfigurationText, SpecSample) {
  EXPECT_EQ(taskbench::configuration_text(parse(kSampleFlags)), kSampleConfiguration);
}

TEST(ConfigurationText, MultipleGraphsAreNumberedFromOne) {
  const BenchConfig config = parse(
      "-steps 5 -and -steps 6 -width 3 -type random_nearest -radix 5 -fraction 0.5 -kernel "
      "load_imbalance -iter 77 -imbalance 1.5 -sample 8 -output 32 -scratch 64 -field 2");
  const std::string expected =
      "Running Task Benchmark\n"
      "  Configuration:\n"
      "    Task Graph 1:\n"
      "      Time Steps: 5\n"
      "      Max Width: 4\n"
      "      Dependence Type: trivial\n"
      "      Radix: 3\n"
      "      Period: 0\n"
      "      Fraction Connected: 0.250000\n"
      "      Kernel:\n"
      "        Type: empty\n"
      "        Iterations: 0\n"
      "        Samples: 16\n"
      "        Imbalance: 0.000000\n"
      "      Output Bytes: 16\n"
      "      Scratch Bytes: 0\n"
      "    Task Graph 2:\n"
      "      Time Steps: 6\n"
      "      Max Width: 3\n"
      "      Dependence Type: random_nearest\n"
      "      Radix: 5\n"
      "      Period: 3\n"
      "      Fraction Connected: 0.500000\n"
      "      Kernel:\n"
      "        Type: load_imbalance\n"
      "        Iterations: 77\n"
      "        Samples: 8\n"
      "        Imbalance: 1.500000\n"
      "      Output Bytes: 32\n"
      "      Scratch Bytes: 64\n";
  EXPECT_EQ(taskbench::configuration_text(config), expected);
}

const char* const kStencilHeader =
    "Running Task Benchmark\n"
    "  Configuration:\n"
    "    Task Graph 1:\n"
    "      Time Steps: 3\n"
    "      Max Width: 4\n"
    "      Dependence Type: stencil_1d\n"
    "      Radix: 3\n"
    "      Period: 0\n"
    "      Fraction Connected: 0.250000\n"
    "      Kernel:\n"
    "        Type: empty\n"
    "        Iterations: 0\n"
    "        Samples: 16\n"
    "        Imbalance: 0.000000\n"
    "      Output Bytes: 16\n"
    "      Scratch Bytes: 0\n";

TEST(ConfigurationText, VerboseListing) {
  const std::string expected = std::string(kStencilHeader) +
                               "      Timestep 0 (offset 0, width 4, last offset 0, last width 0):\n"
                               "        Points: 0 1 2 3\n"
                               "        Dependencies:\n"
                               "          Point 0:\n"
                               "          Point 1:\n"
                               "          Point 2:\n"
                               "          Point 3:\n"
                               "      Timestep 1 (offset 0, width 4, last offset 0, last width 4):\n"
                               "        Points: 0 1 2 3\n"
                               "        Dependencies:\n"
                               "          Point 0: 0 1\n"
                               "          Point 1: 0 1 2\n"
                               "          Point 2: 1 2 3\n"
                               "          Point 3: 2 3\n"
                               "      Timestep 2 (offset 0, width 4, last offset 0, last width 4):\n"
                               "        Points: 0 1 2 3\n"
                               "        Dependencies:\n"
                               "          Point 0: 0 1\n"
                               "          Point 1: 0 1 2\n"
                               "          Point 2: 1 2 3\n"
                               "          Point 3: 2 3\n";
  EXPECT_EQ(taskbench::configuration_text(parse("-steps 3 -width 4 -type stencil_1d -v")), expected);
}

TEST(ConfigurationText, VeryVerboseAddsReverseDependencies) {
  const std::string expected = std::string(kStencilHeader) +
                               "      Timestep 0 (offset 0, width 4, last offset 0, last width 0):\n"
                               "        Points: 0 1 2 3\n"
                               "        Dependencies:\n"
                               "          Point 0:\n"
                               "          Point 1:\n"
                               "          Point 2:\n"
                               "          Point 3:\n"
                               "        Reverse Dependencies:\n"
                               "      Timestep 1 (offset 0, width 4, last offset 0, last width 4):\n"
                               "        Points: 0 1 2 3\n"
                               "        Dependencies:\n"
                               "          Point 0: 0 1\n"
                               "          Point 1: 0 1 2\n"
                               "          Point 2: 1 2 3\n"
                               "          Point 3: 2 3\n"
                               "        Reverse Dependencies:\n"
                               "          Point 0: 0 1\n"
                               "          Point 1: 0 1 2\n"
                               "          Point 2: 1 2 3\n"
                               "          Point 3: 2 3\n"
                               "      Timestep 2 (offset 0, width 4, last offset 0, last width 4):\n"
                               "        Points: 0 1 2 3\n"
                               "        Dependencies:\n"
                               "          Point 0: 0 1\n"
                               "          Point 1: 0 1 2\n"
                               "          Point 2: 1 2 3\n"
                               "          Point 3: 2 3\n"
                               "        Reverse Dependencies:\n"
                               "          Point 0: 0 1\n"
                               "          Point 1: 0 1 2\n"
                               "          Point 2: 1 2 3\n"
                               "          Point 3: 2 3\n";
  EXPECT_EQ(taskbench::configuration_text(parse("-steps 3 -width 4 -type stencil_1d -vv")),
            expected);
  // -v -v is verbosity 2 as well.
  EXPECT_EQ(taskbench::configuration_text(parse("-v -steps 3 -width 4 -v -type stencil_1d")),
            expected);
}

TEST(ConfigurationText, VerboseDomShowsOffsetsAndReverseOfConsumerStep) {
  const std::string text = taskbench::configuration_text(parse("-steps 6 -width 4 -type dom -vv"));
  EXPECT_TRUE(contains_in_order(text, {
                                          "      Timestep 3 (offset 1, width 3, last offset 0, "
                                          "last width 3):",
                                          "        Points: 1 2 3",
                                          "        Dependencies:",
                                          "          Point 1: 0 1",
                                          "          Point 2: 1 2",
                                          "          Point 3: 2",
                                          "        Reverse Dependencies:",
                                          "          Point 0: 1",
                                          "          Point 1: 1 2",
                                          "          Point 2: 2 3",
                                          "      Timestep 4 (offset 2, width 2, last offset 1, "
                                          "last width 3):",
                                          "        Points: 2 3",
                                      }));
  EXPECT_TRUE(contains_in_order(text, {
                                          "      Timestep 5 (offset 3, width 1, last offset 2, "
                                          "last width 2):",
                                          "        Points: 3",
                                          "        Dependencies:",
                                          "          Point 3: 2 3",
                                          "        Reverse Dependencies:",
                                          "          Point 2: 3",
                                          "          Point 3: 3",
                                      }));
}

TEST(ConfigurationText, NotVerboseHasNoListing) {
  const std::string text = taskbench::configuration_text(parse("-steps 3 -type stencil_1d"));
  EXPECT_EQ(text.find("Timestep"), std::string::npos);
}

// ---------------------------------------------------------------------------
// Report (8.2).

TEST(ReportText, SpecSampleWithHalfASecond) {
  const std::string expected =
      "Total Tasks 200\n"
      "Total Dependencies 396\n"
      "  Unable to estimate local/nonlocal dependencies\n"
      "Total FLOPs 26227200\n"
      "Total Bytes 0\n"
      "Elapsed Time 5.000000e-01 seconds\n"
      "FLOP/s 5.245440e+07\n"
      "B/s 0.000000e+00\n"
      "Transfer (estimated):\n"
      "  Unable to estimate local/nonlocal transfer\n";
  EXPECT_EQ(taskbench::report_text(parse(kSampleFlags), 0.5), expected);
}

TEST(ReportText, BytesAndSmallTimes) {
  const std::string text = taskbench::report_text(
      parse("-steps 6 -width 4 -type no_comm -kernel memory_bound -scratch 65536 -sample 16 -iter "
            "40"),
      2.0);
  EXPECT_TRUE(contains_in_order(text, {"Total Tasks 24", "Total Dependencies 20",
                                       "Total FLOPs 0", "Total Bytes 3932160",
                                       "Elapsed Time 2.000000e+00 seconds",
                                       "FLOP/s 0.000000e+00", "B/s 1.966080e+06"}));
  const std::string fast = taskbench::report_text(parse(kSampleFlags), 1.25e-4);
  EXPECT_TRUE(contains_in_order(fast, {"Elapsed Time 1.250000e-04 seconds",
                                       "FLOP/s 2.098176e+11"}));
}

TEST(ReportText, TotalsAreSummedOverGraphs) {
  const std::string text = taskbench::report_text(
      parse("-steps 100 -width 8 -type stencil_1d -kernel compute_bound -iter 64 -and -steps 50 "
            "-width 4 -type fft -kernel compute_bound -iter 32"),
      1.0);
  EXPECT_TRUE(contains_in_order(
      text, {"Total Tasks 1000", "Total Dependencies 2620", "Total FLOPs 7436800", "Total Bytes 0",
             "Elapsed Time 1.000000e+00 seconds", "FLOP/s 7.436800e+06"}));
}

// ---------------------------------------------------------------------------
// Execution counts.

TEST(ExecutionCounts, MatchAndMismatch) {
  const BenchConfig config = parse("-steps 4 -width 4 -type stencil_1d");  // 16 tasks, 30 deps
  EXPECT_EQ(taskbench::check_execution_counts(config, ExecutionCounts{16, 30}), "");
  EXPECT_NE(taskbench::check_execution_counts(config, ExecutionCounts{15, 30}), "");
  EXPECT_NE(taskbench::check_execution_counts(config, ExecutionCounts{17, 30}), "");
  EXPECT_NE(taskbench::check_execution_counts(config, ExecutionCounts{16, 29}), "");
  EXPECT_NE(taskbench::check_execution_counts(config, ExecutionCounts{16, 31}), "");
  EXPECT_NE(taskbench::check_execution_counts(config, ExecutionCounts{0, 0}), "");
}

TEST(ExecutionCounts, SummedOverGraphs) {
  // 16 + 31 tasks (tree T=6 W=8: 1+2+4+8+8+8), 30 + 30 deps.
  const BenchConfig config = parse("-steps 4 -width 4 -type stencil_1d -and -steps 6 -width 8 -type tree");
  EXPECT_EQ(taskbench::check_execution_counts(config, ExecutionCounts{47, 60}), "");
  EXPECT_NE(taskbench::check_execution_counts(config, ExecutionCounts{16, 30}), "");
  EXPECT_NE(taskbench::check_execution_counts(config, ExecutionCounts{47, 59}), "");
}

// ---------------------------------------------------------------------------
// -json

class JsonReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "taskbench-json-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  nlohmann::json read(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << path;
    return nlohmann::json::parse(in);  // throws on invalid JSON
  }
  std::filesystem::path dir_;
};

TEST_F(JsonReportTest, FieldsOfASingleGraphRun) {
  const BenchConfig config = parse(kSampleFlags);
  const RunInfo info{"omp", 2, 4, 0.5, ExecutionCounts{200, 396}};
  const std::string path = (dir_ / "report.json").string();
  taskbench::write_json_report(config, info, path);
  const nlohmann::json j = read(path);
  EXPECT_EQ(j.at("system"), "omp");
  EXPECT_EQ(j.at("ranks"), 2);
  EXPECT_EQ(j.at("threads_per_rank"), 4);
  EXPECT_DOUBLE_EQ(j.at("elapsed_seconds").get<double>(), 0.5);
  EXPECT_EQ(j.at("total_tasks").get<int64_t>(), 200);
  EXPECT_EQ(j.at("total_dependencies").get<int64_t>(), 396);
  EXPECT_EQ(j.at("total_flops").get<int64_t>(), 26227200);
  EXPECT_EQ(j.at("total_bytes").get<int64_t>(), 0);
  EXPECT_DOUBLE_EQ(j.at("flops_per_second").get<double>(), 52454400.0);
  EXPECT_DOUBLE_EQ(j.at("bytes_per_second").get<double>(), 0.0);
  ASSERT_TRUE(j.at("graphs").is_array());
  ASSERT_EQ(j.at("graphs").size(), 1u);
  const nlohmann::json& g = j.at("graphs")[0];
  EXPECT_EQ(g.at("index"), 0);
  EXPECT_EQ(g.at("timesteps"), 100);
  EXPECT_EQ(g.at("max_width"), 2);
  EXPECT_EQ(g.at("dependence"), "stencil_1d");
  EXPECT_EQ(g.at("radix"), 3);
  EXPECT_EQ(g.at("period"), 0);
  EXPECT_DOUBLE_EQ(g.at("fraction").get<double>(), 0.25);
  EXPECT_EQ(g.at("kernel"), "compute_bound");
  EXPECT_EQ(g.at("iterations"), 1024);
  EXPECT_EQ(g.at("samples"), 16);
  EXPECT_DOUBLE_EQ(g.at("imbalance").get<double>(), 0.0);
  EXPECT_EQ(g.at("output_bytes"), 16);
  EXPECT_EQ(g.at("scratch_bytes"), 0);
}

TEST_F(JsonReportTest, MultipleGraphsAndBytes) {
  const BenchConfig config = parse(
      "-steps 6 -width 4 -type no_comm -kernel memory_bound -scratch 65536 -sample 16 -iter 40 "
      "-and -type random_nearest -radix 5 -fraction 0.5 -kernel load_imbalance -iter 10 "
      "-imbalance 0.5 -output 32");
  const RunInfo info{"serial", 1, 1, 2.0, ExecutionCounts{}};
  const std::string path = (dir_ / "multi.json").string();
  taskbench::write_json_report(config, info, path);
  const nlohmann::json j = read(path);
  EXPECT_EQ(j.at("system"), "serial");
  EXPECT_EQ(j.at("total_tasks").get<int64_t>(), 24 + 16);
  EXPECT_EQ(j.at("total_bytes").get<int64_t>(), 3932160);
  EXPECT_DOUBLE_EQ(j.at("bytes_per_second").get<double>(), 1966080.0);
  ASSERT_EQ(j.at("graphs").size(), 2u);
  const nlohmann::json& g0 = j.at("graphs")[0];
  const nlohmann::json& g1 = j.at("graphs")[1];
  EXPECT_EQ(g0.at("index"), 0);
  EXPECT_EQ(g0.at("kernel"), "memory_bound");
  EXPECT_EQ(g0.at("scratch_bytes"), 65536);
  EXPECT_EQ(g0.at("iterations"), 40);
  EXPECT_EQ(g1.at("index"), 1);
  EXPECT_EQ(g1.at("dependence"), "random_nearest");
  EXPECT_EQ(g1.at("radix"), 5);
  EXPECT_EQ(g1.at("period"), 3);
  EXPECT_DOUBLE_EQ(g1.at("fraction").get<double>(), 0.5);
  EXPECT_EQ(g1.at("kernel"), "load_imbalance");
  EXPECT_DOUBLE_EQ(g1.at("imbalance").get<double>(), 0.5);
  EXPECT_EQ(g1.at("output_bytes"), 32);
}

TEST_F(JsonReportTest, UnwritablePathThrows) {
  const BenchConfig config = parse(kSampleFlags);
  const RunInfo info{"serial", 1, 1, 0.5, ExecutionCounts{200, 396}};
  EXPECT_THROW(
      taskbench::write_json_report(config, info, (dir_ / "missing-dir" / "x.json").string()),
      std::runtime_error);
}

// ---------------------------------------------------------------------------
// finish_run

TEST_F(JsonReportTest, FinishRunPrintsReportAndWritesJson) {
  BenchConfig config = parse(kSampleFlags);
  config.json_path = (dir_ / "finish.json").string();
  const RunInfo info{"serial", 1, 1, 0.5, ExecutionCounts{200, 396}};
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int status = taskbench::finish_run(config, info);
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 0) << err;
  EXPECT_EQ(err, "");
  EXPECT_TRUE(contains_in_order(out, {"Total Tasks 200", "Total Dependencies 396",
                                      "Elapsed Time 5.000000e-01 seconds", "FLOP/s 5.245440e+07"}));
  EXPECT_EQ(read(config.json_path).at("total_tasks").get<int64_t>(), 200);
}

TEST_F(JsonReportTest, FinishRunFailsOnCountMismatch) {
  const BenchConfig config = parse(kSampleFlags);
  const RunInfo info{"serial", 1, 1, 0.5, ExecutionCounts{199, 396}};
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int status = taskbench::finish_run(config, info);
  ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_EQ(err.rfind("error: ", 0), 0u) << err;
}

TEST(WallSeconds, Monotonic) {
  const double a = taskbench::wall_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double b = taskbench::wall_seconds();
  EXPECT_GE(b - a, 0.015);
  EXPECT_LT(b - a, 5.0);
}

}  // namespace
