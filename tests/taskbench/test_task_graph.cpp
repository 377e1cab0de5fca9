// Graph model of the Task Bench spec (sections 3, 4, 6 accounting, 8.3 node
// estimate, 10 test vectors). Expected values come from the spec's tables and
// formulas, never from running the implementation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/report.h"
#include "core/task_graph.h"
#include "test_support.h"

namespace {

using taskbench::BenchConfig;
using taskbench::DependenceType;
using taskbench::Interval;
using taskbench::TaskGraph;
using taskbench_test::active_points;
using taskbench_test::consumers_of;
using taskbench_test::contains_in_order;
using taskbench_test::inputs_of;
using taskbench_test::ints;
using taskbench_test::parse;

// ---------------------------------------------------------------------------
// Section 10: the table of test vectors (totals summed over graphs).

struct VectorRow {
  int number;
  const char* flags;
  int64_t tasks;
  int64_t deps;
  int64_t flops;
  int64_t bytes;
};

const VectorRow kVectors[] = {
    {1, "", 16, 0, 0, 0},
    {2, "-steps 4 -width 4 -type stencil_1d", 16, 30, 0, 0},
    {3, "-steps 1000 -width 2 -type stencil_1d -kernel compute_bound -iter 1024", 2000, 3996,
     262272000, 0},
    {4, "-steps 10 -width 4 -type stencil_1d_periodic -kernel compute_bound -iter 16", 40, 108,
     84480, 0},
    {5, "-steps 6 -width 8 -type tree -kernel compute_bound -iter 100", 31, 30, 398784, 0},
    {6, "-steps 20 -width 5 -type tree", 92, 91, 0, 0},
    {7, "-steps 5 -width 8 -type fft -kernel compute_bound2 -iter 10", 40, 80, 25600, 0},
    {8, "-steps 7 -width 6 -type fft", 42, 80, 0, 0},
    {9, "-steps 9 -width 4 -type dom -kernel compute_bound -iter 8", 24, 38, 26112, 0},
    {10, "-steps 3 -width 6 -type dom", 4, 3, 0, 0},
    {11, "-steps 8 -width 10 -type spread -radix 3 -period 2 -kernel compute_bound -iter 1", 80,
     210, 15360, 0},
    {12, "-steps 12 -width 16 -type spread -radix 4 -period 4", 192, 704, 0, 0},
    {13, "-steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5", 160, 381, 0, 0},
    {14, "-steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5 -period 4", 160, 390, 0,
     0},
    {15, "-steps 6 -width 9 -type nearest -radix 5", 54, 195, 0, 0},
    {16, "-steps 6 -width 9 -type nearest -radix 4", 54, 160, 0, 0},
    {17, "-steps 5 -width 5 -type all_to_all -kernel busy_wait -iter 100", 25, 100, 0, 0},
    {18, "-steps 7 -width 3 -type no_comm -kernel compute_bound -iter 0", 21, 18, 1344, 0},
    {19, "-steps 4 -width 4 -type trivial -kernel load_imbalance -iter 1000 -imbalance 0.5", 16, 0,
     2086528, 0},
    {20, "-steps 50 -width 8 -type stencil_1d -kernel load_imbalance -iter 4096 -imbalance 1.0",
     400, 1078, 213095936, 0},
    {21,
     "-steps 6 -width 4 -type no_comm -kernel memory_bound -scratch 65536 -sample 16 -iter 40", 24,
     20, 0, 3932160},
    {22,
     "-steps 100 -width 8 -type stencil_1d -kernel compute_bound -iter 64 -and -steps 50 -width 4 "
     "-type fft -kernel compute_bound -iter 32",
     1000, 2620, 7436800, 0},
    {23,
     "-steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5 -and -steps 10 -width 16 "
     "-type random_nearest -radix 5 -fraction 0.5",
     320, 783, 0, 0},
    {24,
     "-steps 10 -width 8 -type tree -and -type dom -steps 11 -width 6 -and -type spread -width 9 "
     "-radix 3 -period 3 -steps 9",
     180, 338, 0, 0},
    {25,
     "-steps 1000 -width 64 -type random_nearest -radix 7 -fraction 0.25 -period 5 -kernel "
     "load_imbalance -iter 1000 -imbalance 0.3",
     64000, 160425, 8194661632, 0},
};

class SpecVectorTest : public ::testing::TestWithParam<VectorRow> {};

TEST_P(SpecVectorTest, TotalsMatchSpecTable) {
  const VectorRow& row = GetParam();
  const BenchConfig config = parse(row.flags);
  int64_t tasks = 0, deps = 0, flops = 0, bytes = 0;
  for (const TaskGraph& graph : config.graphs) {
    tasks += graph.total_tasks();
    deps += graph.total_dependencies();
    flops += graph.total_flops();
    bytes += graph.total_bytes();
  }
  EXPECT_EQ(tasks, row.tasks) << "vector #" << row.number << ": " << row.flags;
  EXPECT_EQ(deps, row.deps) << "vector #" << row.number << ": " << row.flags;
  EXPECT_EQ(flops, row.flops) << "vector #" << row.number << ": " << row.flags;
  EXPECT_EQ(bytes, row.bytes) << "vector #" << row.number << ": " << row.flags;
}

INSTANTIATE_TEST_SUITE_P(Section10, SpecVectorTest, ::testing::ValuesIn(kVectors),
                         [](const ::testing::TestParamInfo<VectorRow>& row_info) {
                           return "Vector" + std::to_string(row_info.param.number);
                         });

TEST(SpecVectors, GraphIndexChangesRandomNearest) {
  // Vector 23: graph 1 with identical flags has 402 dependencies.
  const BenchConfig config = parse(
      "-steps 10 -width 16 -type random_nearest -radix 5 -fraction 0.5 -and -steps 10 -width 16 "
      "-type random_nearest -radix 5 -fraction 0.5");
  ASSERT_EQ(config.graphs.size(), 2u);
  EXPECT_EQ(config.graphs[0].graph_index, 0);
  EXPECT_EQ(config.graphs[1].graph_index, 1);
  EXPECT_EQ(config.graphs[0].total_dependencies(), 381);
  EXPECT_EQ(config.graphs[1].total_dependencies(), 402);
}

TEST(SpecVectors, PerGraphTotalsOfVector24) {
  // tree T=10 W=8: widths 1 2 4 8 8 8 8 8 8 8 = 63 tasks, 62 deps.
  // dom T=11 W=6: widths 1 2 3 4 5 6 5 4 3 2 1 = 36 tasks.
  // spread T=9 W=9: 81 tasks, 3 deps per task after t=0: 3*9*8 = 216.
  const BenchConfig config = parse(
      "-steps 10 -width 8 -type tree -and -type dom -steps 11 -width 6 -and -type spread -width 9 "
      "-radix 3 -period 3 -steps 9");
  ASSERT_EQ(config.graphs.size(), 3u);
  EXPECT_EQ(config.graphs[0].total_tasks(), 63);
  EXPECT_EQ(config.graphs[0].total_dependencies(), 62);
  EXPECT_EQ(config.graphs[1].total_tasks(), 36);
  EXPECT_EQ(config.graphs[2].total_tasks(), 81);
  EXPECT_EQ(config.graphs[2].total_dependencies(), 216);
  // 338 total => dom has 338 - 62 - 216 = 60 dependencies.
  EXPECT_EQ(config.graphs[1].total_dependencies(), 60);
}

// ---------------------------------------------------------------------------
// Section 8.3 / 10: the node-estimate vector.

TEST(NodeEstimate, SpecVector) {
  const BenchConfig config = parse("-steps 100 -width 8 -type stencil_1d -nodes 2 -output 64");
  EXPECT_EQ(config.nodes, 2);
  const std::string text = taskbench::report_text(config, 1.0);
  EXPECT_TRUE(contains_in_order(text, {
                                          "Total Tasks 800",
                                          "Total Dependencies 2178",
                                          "  Local Dependencies 1980 (estimated)",
                                          "  Nonlocal Dependencies 198 (estimated)",
                                          "  Number of Nodes (used for estimate) 2",
                                          "Total FLOPs 0",
                                          "Total Bytes 0",
                                          "Elapsed Time 1.000000e+00 seconds",
                                          "FLOP/s 0.000000e+00",
                                          "B/s 0.000000e+00",
                                          "Transfer (estimated):",
                                          "  Local Bytes 126720",
                                          "  Nonlocal Bytes 12672",
                                          "  Local Bandwidth 1.267200e+05 B/s",
                                          "  Nonlocal Bandwidth 1.267200e+04 B/s",
                                      }));
  EXPECT_EQ(text.find("Unable to estimate"), std::string::npos) << text;
}

TEST(NodeEstimate, SummedOverGraphsWithOwnOutputSize) {
  // Graph 0: as the spec vector (1980 local / 198 nonlocal, 64-byte outputs).
  // Graph 1: no_comm W=4 T=3 -output 32: 8 deps, all local (same point).
  const BenchConfig config = parse(
      "-steps 100 -width 8 -type stencil_1d -nodes 2 -output 64 -and -steps 3 -width 4 -type "
      "no_comm -output 32");
  const std::string text = taskbench::report_text(config, 2.0);
  EXPECT_TRUE(contains_in_order(text, {
                                          "  Local Dependencies 1988 (estimated)",
                                          "  Nonlocal Dependencies 198 (estimated)",
                                          "  Number of Nodes (used for estimate) 2",
                                          "  Local Bytes 126976",
                                          "  Nonlocal Bytes 12672",
                                          "  Local Bandwidth 6.348800e+04 B/s",
                                          "  Nonlocal Bandwidth 6.336000e+03 B/s",
                                      }));
}

// ---------------------------------------------------------------------------
// Section 10.1: explicit dependency lists.

void expect_inputs(const TaskGraph& graph, int64_t t, const std::vector<std::string>& per_point) {
  for (size_t p = 0; p < per_point.size(); ++p) {
    EXPECT_EQ(inputs_of(graph, t, static_cast<int64_t>(p)), ints(per_point[p]))
        << "graph " << graph.graph_index << " t=" << t << " p=" << p;
  }
}

TEST(ExplicitLists, Stencil1dWidth4) {
  const BenchConfig config = parse("-type stencil_1d -width 4");
  const TaskGraph& g = config.graphs.at(0);
  for (int64_t t = 1; t <= 3; ++t) expect_inputs(g, t, {"0 1", "0 1 2", "1 2 3", "2 3"});
}

TEST(ExplicitLists, FftWidth8) {
  const BenchConfig config = parse("-type fft -width 8 -steps 5");
  const TaskGraph& g = config.graphs.at(0);
  EXPECT_EQ(g.num_dependence_sets(), 3);
  EXPECT_EQ(g.dependence_set_at(0), 2);
  EXPECT_EQ(g.dependence_set_at(1), 0);
  EXPECT_EQ(g.dependence_set_at(2), 1);
  EXPECT_EQ(g.dependence_set_at(3), 2);
  EXPECT_EQ(g.dependence_set_at(4), 0);
  const std::vector<std::string> t1{"0 1",   "0 1 2", "1 2 3", "2 3 4",
                                    "3 4 5", "4 5 6", "5 6 7", "6 7"};
  const std::vector<std::string> t2{"0 2", "1 3", "0 2 4", "1 3 5", "2 4 6", "3 5 7", "4 6", "5 7"};
  const std::vector<std::string> t3{"0 4", "1 5", "2 6", "3 7", "0 4", "1 5", "2 6", "3 7"};
  expect_inputs(g, 1, t1);
  expect_inputs(g, 2, t2);
  expect_inputs(g, 3, t3);
  expect_inputs(g, 4, t1);  // set 0 again
  // Reverse dependencies equal the forward lists: consumers of (t-1, q) at t.
  const std::vector<std::string>* lists[] = {&t1, &t2, &t3, &t1};
  for (int64_t t = 1; t <= 4; ++t) {
    for (int64_t q = 0; q < 8; ++q) {
      EXPECT_EQ(consumers_of(g, t - 1, q), ints((*lists[t - 1])[q])) << "t=" << t << " q=" << q;
    }
  }
}

TEST(ExplicitLists, RandomNearestGraph0AndGraph1) {
  const BenchConfig config = parse(
      "-type random_nearest -width 8 -radix 5 -fraction 0.5 -and -type random_nearest -width 8 "
      "-radix 5 -fraction 0.5");
  ASSERT_EQ(config.graphs.size(), 2u);
  const TaskGraph& g0 = config.graphs[0];
  const TaskGraph& g1 = config.graphs[1];
  EXPECT_EQ(g0.period, 3);
  EXPECT_EQ(g1.period, 3);
  expect_inputs(g0, 1, {"0 1 2", "1 3", "1 2 3 4", "1 2 3", "3 4 6", "3 4 5 6 7", "4 5 6 7", "6 7"});
  expect_inputs(g0, 2, {"0 2", "1", "1 2 3 4", "3 5", "2 4 5", "3 5 6 7", "6 7", "5 6 7"});
  expect_inputs(g0, 3, {"0", "0 1", "2 4", "1 3 4 5", "3 4", "5 6 7", "4 6 7", "7"});
  expect_inputs(g1, 1, {"0 1", "0 1 3", "2 3 4", "3 4 5", "2 4 6", "3 4 5 6 7", "4 6", "6 7"});
  expect_inputs(g1, 2, {"0 1 2", "1", "2 4", "3 5", "4 5 6", "3 5 6 7", "4 5 6", "5 7"});
  expect_inputs(g1, 3, {"0 1 2", "0 1 2", "0 2 4", "2 3 4", "4 5", "5 6", "4 5 6", "7"});
}

// ---------------------------------------------------------------------------
// Section 3.5: worked examples (W = 4, default T = 4).

TEST(WorkedExamples, Stencil1d) {
  const TaskGraph g = parse("-type stencil_1d").graphs.at(0);
  for (int64_t t = 1; t <= 3; ++t) expect_inputs(g, t, {"0 1", "0 1 2", "1 2 3", "2 3"});
}

TEST(WorkedExamples, Stencil1dPeriodicOrderIsEnumerationOrder) {
  const TaskGraph g = parse("-type stencil_1d_periodic").graphs.at(0);
  for (int64_t t = 1; t <= 3; ++t) expect_inputs(g, t, {"0 1 3", "0 1 2", "1 2 3", "2 3 0"});
}

TEST(WorkedExamples, NoComm) {
  const TaskGraph g = parse("-type no_comm").graphs.at(0);
  for (int64_t t = 1; t <= 3; ++t) expect_inputs(g, t, {"0", "1", "2", "3"});
}

TEST(WorkedExamples, Tree) {
  const TaskGraph g = parse("-type tree -steps 4").graphs.at(0);
  EXPECT_EQ(active_points(g, 0), ints("0"));
  EXPECT_EQ(active_points(g, 1), ints("0 1"));
  EXPECT_EQ(active_points(g, 2), ints("0 1 2 3"));
  EXPECT_EQ(active_points(g, 3), ints("0 1 2 3"));
  expect_inputs(g, 1, {"0", "0"});
  expect_inputs(g, 2, {"0", "0", "1", "1"});
  expect_inputs(g, 3, {"0", "0", "1", "1"});
  // Reverse: children 2q, 2q+1 when < W and active at t+1.
  EXPECT_EQ(consumers_of(g, 0, 0), ints("0 1"));
  EXPECT_EQ(consumers_of(g, 1, 0), ints("0 1"));
  EXPECT_EQ(consumers_of(g, 1, 1), ints("2 3"));
  EXPECT_EQ(consumers_of(g, 2, 2), ints(""));
  EXPECT_EQ(consumers_of(g, 2, 3), ints(""));
}

TEST(WorkedExamples, FftWidth4) {
  const TaskGraph g = parse("-type fft").graphs.at(0);
  EXPECT_EQ(g.num_dependence_sets(), 2);
  EXPECT_EQ(g.dependence_set_at(1), 0);
  EXPECT_EQ(g.dependence_set_at(2), 1);
  EXPECT_EQ(g.dependence_set_at(3), 0);
  expect_inputs(g, 1, {"0 1", "0 1 2", "1 2 3", "2 3"});
  expect_inputs(g, 2, {"0 2", "1 3", "0 2", "1 3"});
  expect_inputs(g, 3, {"0 1", "0 1 2", "1 2 3", "2 3"});
}

TEST(WorkedExamples, NearestRadix2) {
  const TaskGraph g = parse("-type nearest -radix 2").graphs.at(0);
  for (int64_t t = 1; t <= 2; ++t) expect_inputs(g, t, {"0", "0 1", "1 2", "2 3"});
  // Reverse window is the mirror image: q feeds q and q+1.
  EXPECT_EQ(consumers_of(g, 0, 0), ints("0 1"));
  EXPECT_EQ(consumers_of(g, 0, 3), ints("3"));
}

TEST(WorkedExamples, SpreadRadix2Period2) {
  const TaskGraph g = parse("-type spread -radix 2 -period 2").graphs.at(0);
  EXPECT_EQ(g.num_dependence_sets(), 2);
  EXPECT_EQ(g.dependence_set_at(1), 1);
  EXPECT_EQ(g.dependence_set_at(2), 0);
  expect_inputs(g, 1, {"0 3", "1 0", "2 1", "3 2"});
  expect_inputs(g, 2, {"0 2", "1 3", "2 0", "3 1"});
  expect_inputs(g, 3, {"0 3", "1 0", "2 1", "3 2"});
}

TEST(WorkedExamples, RandomNearestRadix3) {
  const TaskGraph g = parse("-type random_nearest -radix 3 -fraction 0.5").graphs.at(0);
  EXPECT_EQ(g.period, 3);
  EXPECT_EQ(g.dependence_set_at(1), 1);
  EXPECT_EQ(g.dependence_set_at(2), 2);
  EXPECT_EQ(g.dependence_set_at(3), 0);
  expect_inputs(g, 1, {"0 1", "1", "2", "2 3"});
  expect_inputs(g, 2, {"0 1", "1 2", "1 2 3", "3"});
  expect_inputs(g, 3, {"0", "0 1 2", "2", "3"});
}

TEST(WorkedExamples, AllToAll) {
  const TaskGraph g = parse("-type all_to_all").graphs.at(0);
  for (int64_t t = 1; t <= 2; ++t) expect_inputs(g, t, {"0 1 2 3", "0 1 2 3", "0 1 2 3", "0 1 2 3"});
}

TEST(WorkedExamples, DomSteps6Width4) {
  const TaskGraph g = parse("-type dom -steps 6 -width 4").graphs.at(0);
  const int64_t offsets[] = {0, 0, 0, 1, 2, 3};
  const int64_t widths[] = {1, 2, 3, 3, 2, 1};
  for (int64_t t = 0; t < 6; ++t) {
    EXPECT_EQ(g.offset_at(t), offsets[t]) << "t=" << t;
    EXPECT_EQ(g.width_at(t), widths[t]) << "t=" << t;
  }
  EXPECT_EQ(inputs_of(g, 0, 0), ints(""));
  EXPECT_EQ(inputs_of(g, 1, 0), ints("0"));
  EXPECT_EQ(inputs_of(g, 1, 1), ints("0"));
  EXPECT_EQ(inputs_of(g, 2, 0), ints("0"));
  EXPECT_EQ(inputs_of(g, 2, 1), ints("0 1"));
  EXPECT_EQ(inputs_of(g, 2, 2), ints("1"));
  EXPECT_EQ(inputs_of(g, 3, 1), ints("0 1"));
  EXPECT_EQ(inputs_of(g, 3, 2), ints("1 2"));
  EXPECT_EQ(inputs_of(g, 3, 3), ints("2"));
  EXPECT_EQ(inputs_of(g, 4, 2), ints("1 2"));
  EXPECT_EQ(inputs_of(g, 4, 3), ints("2 3"));
  EXPECT_EQ(inputs_of(g, 5, 3), ints("2 3"));
  // Reverse dependencies at t = 3: producers of t = 2, consumers in t = 3.
  EXPECT_EQ(consumers_of(g, 2, 0), ints("1"));
  EXPECT_EQ(consumers_of(g, 2, 1), ints("1 2"));
  EXPECT_EQ(consumers_of(g, 2, 2), ints("2 3"));
}

TEST(WorkedExamples, SpreadWidth10Radix3Period2) {
  const TaskGraph g = parse("-type spread -width 10 -radix 3 -period 2").graphs.at(0);
  EXPECT_EQ(inputs_of(g, 1, 0), ints("0 4 7"));
  EXPECT_EQ(inputs_of(g, 1, 3), ints("3 7 0"));
  EXPECT_EQ(consumers_of(g, 0, 0), ints("0 6 3"));
  EXPECT_EQ(inputs_of(g, 2, 0), ints("0 3 6"));
  // Raw functions of 3.4 for the same sets.
  std::vector<Interval> raw;
  g.dependencies(1, 0, raw);
  EXPECT_EQ(raw, (std::vector<Interval>{{0, 0}, {4, 4}, {7, 7}}));
  g.reverse_dependencies(1, 0, raw);
  EXPECT_EQ(raw, (std::vector<Interval>{{0, 0}, {6, 6}, {3, 3}}));
  g.dependencies(0, 0, raw);
  EXPECT_EQ(raw, (std::vector<Interval>{{0, 0}, {3, 3}, {6, 6}}));
}

// ---------------------------------------------------------------------------
// Section 3.1: geometry.

TEST(Geometry, DomSmallDiamondSitsAtRightEdge) {
  const TaskGraph g = parse("-type dom -steps 3 -width 6").graphs.at(0);
  EXPECT_EQ(g.offset_at(0), 3);
  EXPECT_EQ(g.offset_at(1), 4);
  EXPECT_EQ(g.offset_at(2), 5);
  EXPECT_EQ(g.width_at(0), 1);
  EXPECT_EQ(g.width_at(1), 2);
  EXPECT_EQ(g.width_at(2), 1);
  EXPECT_EQ(active_points(g, 1), ints("4 5"));
  EXPECT_EQ(g.total_tasks(), 4);
  EXPECT_EQ(g.total_dependencies(), 3);
  EXPECT_TRUE(g.is_active(0, 3));
  EXPECT_FALSE(g.is_active(0, 2));
  EXPECT_FALSE(g.is_active(1, 3));
}

TEST(Geometry, TimestepBeforeZeroIsEmpty) {
  for (const char* type : {"trivial", "no_comm", "stencil_1d", "dom", "tree", "fft", "all_to_all"}) {
    const TaskGraph g = parse(std::string("-type ") + type).graphs.at(0);
    EXPECT_EQ(g.offset_at(-1), 0) << type;
    EXPECT_EQ(g.width_at(-1), 0) << type;
    for (int64_t p = 0; p < g.max_width; ++p)
      EXPECT_TRUE(inputs_of(g, 0, p).empty()) << type << " p=" << p;
  }
}

TEST(Geometry, TreeExponentIsCapped) {
  const TaskGraph g = parse("-type tree -steps 100 -width 5").graphs.at(0);
  EXPECT_EQ(g.width_at(0), 1);
  EXPECT_EQ(g.width_at(1), 2);
  EXPECT_EQ(g.width_at(2), 4);
  EXPECT_EQ(g.width_at(3), 5);
  EXPECT_EQ(g.width_at(62), 5);
  EXPECT_EQ(g.width_at(63), 5);
  EXPECT_EQ(g.width_at(99), 5);
  EXPECT_EQ(g.total_tasks(), 1 + 2 + 4 + 5 * 97);
  EXPECT_EQ(g.total_dependencies(), g.total_tasks() - 1);
}

TEST(Geometry, DependenceSets) {
  EXPECT_EQ(parse("-type stencil_1d").graphs[0].num_dependence_sets(), 1);
  EXPECT_EQ(parse("-type stencil_1d").graphs[0].dependence_set_at(3), 0);
  EXPECT_EQ(parse("-type fft -width 5").graphs[0].num_dependence_sets(), 3);  // ceil(log2 5)
  EXPECT_EQ(parse("-type fft -width 2").graphs[0].num_dependence_sets(), 1);
  const TaskGraph spread = parse("-type spread -width 12 -radix 3 -period 4").graphs[0];
  EXPECT_EQ(spread.num_dependence_sets(), 4);
  for (int64_t t = 0; t < 10; ++t) EXPECT_EQ(spread.dependence_set_at(t), t % 4);
  const TaskGraph rn = parse("-type random_nearest -period 5").graphs[0];
  EXPECT_EQ(rn.num_dependence_sets(), 5);
  for (int64_t t = 0; t < 10; ++t) EXPECT_EQ(rn.dependence_set_at(t), t % 5);
}

TEST(Geometry, RawDependenceFunctions) {
  std::vector<Interval> out{{99, 99}};
  const TaskGraph periodic = parse("-type stencil_1d_periodic -width 5").graphs[0];
  periodic.dependencies(0, 0, out);
  EXPECT_EQ(out, (std::vector<Interval>{{0, 1}, {4, 4}}));
  periodic.dependencies(0, 4, out);
  EXPECT_EQ(out, (std::vector<Interval>{{3, 4}, {0, 0}}));
  periodic.reverse_dependencies(0, 2, out);
  EXPECT_EQ(out, (std::vector<Interval>{{1, 3}}));

  const TaskGraph dom = parse("-type dom -width 5").graphs[0];
  dom.dependencies(0, 0, out);
  EXPECT_EQ(out, (std::vector<Interval>{{0, 0}}));
  dom.dependencies(0, 3, out);
  EXPECT_EQ(out, (std::vector<Interval>{{2, 3}}));
  dom.reverse_dependencies(0, 4, out);
  EXPECT_EQ(out, (std::vector<Interval>{{4, 4}}));
  dom.reverse_dependencies(0, 2, out);
  EXPECT_EQ(out, (std::vector<Interval>{{2, 3}}));

  const TaskGraph tree = parse("-type tree -width 5").graphs[0];
  tree.dependencies(0, 3, out);
  EXPECT_EQ(out, (std::vector<Interval>{{1, 1}}));
  tree.reverse_dependencies(0, 1, out);
  EXPECT_EQ(out, (std::vector<Interval>{{2, 3}}));
  tree.reverse_dependencies(0, 2, out);
  EXPECT_EQ(out, (std::vector<Interval>{{4, 4}}));
  tree.reverse_dependencies(0, 3, out);
  EXPECT_TRUE(out.empty());

  const TaskGraph trivial = parse("-type trivial").graphs[0];
  out = {{1, 1}};
  trivial.dependencies(0, 1, out);
  EXPECT_TRUE(out.empty());

  const TaskGraph nearest4 = parse("-type nearest -radix 4 -width 9").graphs[0];
  nearest4.dependencies(0, 4, out);
  EXPECT_EQ(out, (std::vector<Interval>{{2, 5}}));  // p - R/2 .. p + (R-1)/2
  nearest4.reverse_dependencies(0, 4, out);
  EXPECT_EQ(out, (std::vector<Interval>{{3, 6}}));  // p - (R-1)/2 .. p + R/2
  const TaskGraph nearest0 = parse("-type nearest -radix 0").graphs[0];
  out = {{1, 1}};
  nearest0.dependencies(0, 1, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(nearest0.total_dependencies(), 0);

  const TaskGraph fft = parse("-type fft -width 6").graphs[0];
  fft.dependencies(2, 5, out);  // s = 4: [1,1], [5,5]
  EXPECT_EQ(out, (std::vector<Interval>{{1, 1}, {5, 5}}));
  fft.dependencies(1, 2, out);  // s = 2: [0,0], [2,2], [4,4]
  EXPECT_EQ(out, (std::vector<Interval>{{0, 0}, {2, 2}, {4, 4}}));
}

// ---------------------------------------------------------------------------
// Section 4: closed forms.

TEST(ClosedForms, SimpleTypes) {
  for (int64_t w = 1; w <= 12; ++w) {
    for (int64_t t = 1; t <= 12; ++t) {
      const std::string shape = " -width " + std::to_string(w) + " -steps " + std::to_string(t);
      const TaskGraph trivial = parse("-type trivial" + shape).graphs[0];
      EXPECT_EQ(trivial.total_tasks(), w * t);
      EXPECT_EQ(trivial.total_dependencies(), 0);
      const TaskGraph no_comm = parse("-type no_comm" + shape).graphs[0];
      EXPECT_EQ(no_comm.total_tasks(), w * t);
      EXPECT_EQ(no_comm.total_dependencies(), w * (t - 1)) << shape;
      if (w >= 2) {
        const TaskGraph stencil = parse("-type stencil_1d" + shape).graphs[0];
        EXPECT_EQ(stencil.total_dependencies(), (3 * w - 2) * (t - 1)) << shape;
      }
      if (w >= 3) {
        const TaskGraph periodic = parse("-type stencil_1d_periodic" + shape).graphs[0];
        EXPECT_EQ(periodic.total_dependencies(), 3 * w * (t - 1)) << shape;
      }
      const TaskGraph all = parse("-type all_to_all" + shape).graphs[0];
      EXPECT_EQ(all.total_dependencies(), w * w * (t - 1)) << shape;
      const TaskGraph nearest3 = parse("-type nearest" + shape).graphs[0];
      if (w >= 2) {
        EXPECT_EQ(nearest3.total_dependencies(), (3 * w - 2) * (t - 1)) << shape;
      }
    }
  }
}

TEST(ClosedForms, TreeAndDom) {
  for (int64_t w = 1; w <= 12; ++w) {
    for (int64_t t = 1; t <= 25; ++t) {
      const std::string shape = " -width " + std::to_string(w) + " -steps " + std::to_string(t);
      const TaskGraph tree = parse("-type tree" + shape).graphs[0];
      int64_t tasks = 0;
      for (int64_t s = 0; s < t; ++s) tasks += std::min<int64_t>(w, int64_t{1} << s);
      EXPECT_EQ(tree.total_tasks(), tasks) << shape;
      EXPECT_EQ(tree.total_dependencies(), tasks - 1) << shape;
      const TaskGraph dom = parse("-type dom" + shape).graphs[0];
      int64_t dom_tasks = 0;
      for (int64_t s = 0; s < t; ++s) dom_tasks += std::min({w, s + 1, t - s});
      EXPECT_EQ(dom.total_tasks(), dom_tasks) << shape;
    }
  }
}

TEST(ClosedForms, FftPowerOfTwo) {
  for (int64_t k = 1; k <= 6; ++k) {
    const int64_t w = int64_t{1} << k;
    for (int64_t t = 1; t <= 14; ++t) {
      const TaskGraph fft =
          parse("-type fft -width " + std::to_string(w) + " -steps " + std::to_string(t))
              .graphs[0];
      int64_t deps = 0;
      for (int64_t s = 1; s < t; ++s) {
        const int64_t d = (s + k - 1) % k;
        deps += 3 * w - (int64_t{2} << d);
      }
      EXPECT_EQ(fft.total_tasks(), w * t);
      EXPECT_EQ(fft.total_dependencies(), deps) << "W=" << w << " T=" << t;
    }
  }
}

// ---------------------------------------------------------------------------
// Section 6 accounting formulas.

TEST(Accounting, GpuComputeBoundIsTwoFlopsPerChainLaneAndIteration) {
  {
    const TaskGraph g =
        parse("-kernel gpu_compute_bound -gpu-lanes 1000 -iter 7 -steps 3 -width 2").graphs[0];
    EXPECT_EQ(g.task_flops(1, 1), 2 * 4 * 1000 * 7);
    EXPECT_EQ(g.task_bytes(1, 1), 0);
    EXPECT_EQ(g.total_flops(), 6 * 2 * 4 * 1000 * 7);
  }
  {
    // Default lanes: 2^18.
    const TaskGraph g = parse("-kernel gpu_compute_bound -iter 3").graphs[0];
    EXPECT_EQ(g.task_flops(0, 0), int64_t{2} * 4 * 262144 * 3);
  }
  {
    // -gpu-lanes alone changes nothing for the other kernels.
    const TaskGraph g = parse("-kernel compute_bound -gpu-lanes 5 -iter 7").graphs[0];
    EXPECT_EQ(g.task_flops(0, 0), 128 * 7 + 64);
  }
}

TEST(KernelNames, GpuComputeBoundRoundTrips) {
  taskbench::KernelType type = taskbench::KernelType::empty;
  ASSERT_TRUE(taskbench::parse_kernel_type("gpu_compute_bound", type));
  EXPECT_EQ(type, taskbench::KernelType::gpu_compute_bound);
  EXPECT_EQ(taskbench::to_string(type), "gpu_compute_bound");
  EXPECT_FALSE(taskbench::parse_kernel_type("gpu_compute", type));
}

TEST(Accounting, PerKernelFormulas) {
  {
    const TaskGraph g = parse("-kernel compute_bound -iter 7").graphs[0];
    EXPECT_EQ(g.task_flops(2, 1), 128 * 7 + 64);
    EXPECT_EQ(g.task_bytes(2, 1), 0);
    EXPECT_EQ(g.task_iterations(2, 1), 7);
    EXPECT_EQ(g.total_flops(), 16 * (128 * 7 + 64));
  }
  {
    const TaskGraph g = parse("-kernel compute_bound2 -iter 7").graphs[0];
    EXPECT_EQ(g.task_flops(0, 0), 64 * 7);
    EXPECT_EQ(g.total_flops(), 16 * 64 * 7);
  }
  {
    const TaskGraph g = parse("-kernel busy_wait -iter 1000").graphs[0];
    EXPECT_EQ(g.total_flops(), 0);
    EXPECT_EQ(g.total_bytes(), 0);
  }
  {
    // Bytes = B*N/S with the product first: 392*3/16 = 73 (not (392/16)*3 = 72).
    const TaskGraph g = parse("-kernel memory_bound -scratch 392 -sample 16 -iter 3").graphs[0];
    EXPECT_EQ(g.task_bytes(1, 1), 73);
    EXPECT_EQ(g.task_flops(1, 1), 0);
    EXPECT_EQ(g.total_bytes(), 16 * 73);
  }
  {
    const TaskGraph g = parse("-kernel memory_daxpy -scratch 4096 -sample 8 -iter 5").graphs[0];
    EXPECT_EQ(g.task_bytes(0, 0), 4096 * 5 / 8);
    EXPECT_EQ(g.task_flops(0, 0), 0);  // sic: not counted
  }
  {
    // n = floor(sqrt(1000 / 24)) = floor(sqrt(41)) = 6; FLOPs = 2 n^3 N.
    const TaskGraph g = parse("-kernel compute_dgemm -scratch 1000 -iter 3").graphs[0];
    EXPECT_EQ(g.task_flops(0, 0), 2 * 216 * 3);
    EXPECT_EQ(g.task_bytes(0, 0), 0);
    // n = floor(sqrt(384 / 24)) = 4 exactly.
    const TaskGraph g4 = parse("-kernel compute_dgemm -scratch 384 -iter 1").graphs[0];
    EXPECT_EQ(g4.task_flops(0, 0), 2 * 64);
  }
  {
    const TaskGraph g = parse("-kernel io_bound -iter 10").graphs[0];
    EXPECT_EQ(g.total_flops(), 0);
    EXPECT_EQ(g.total_bytes(), 0);
  }
  {
    const TaskGraph g = parse("-kernel empty -iter 10").graphs[0];
    EXPECT_EQ(g.total_flops(), 0);
    EXPECT_EQ(g.total_bytes(), 0);
  }
}

TEST(Accounting, DomTotalsCountOnlyActiveTasks) {
  // Vector 9: 24 tasks * (128*8 + 64) = 26112.
  const TaskGraph g = parse("-steps 9 -width 4 -type dom -kernel compute_bound -iter 8").graphs[0];
  EXPECT_EQ(g.total_flops(), 24 * (128 * 8 + 64));
}

// ---------------------------------------------------------------------------
// Consistency properties over random configurations of every type.

std::string random_flags(DependenceType type, std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const int64_t steps = pick(1, 12);
  std::string flags = "-steps " + std::to_string(steps);
  switch (type) {
    case DependenceType::stencil_1d_periodic:
      flags += " -width " + std::to_string(pick(3, 20));
      break;
    case DependenceType::fft:
      flags += " -width " + std::to_string(pick(2, 20));
      break;
    case DependenceType::nearest:
      flags += " -width " + std::to_string(pick(1, 20)) + " -radix " + std::to_string(pick(0, 8));
      break;
    case DependenceType::spread: {
      const int64_t w = pick(1, 20);
      const int64_t r = pick(1, w);
      const int64_t maxp = (w + r - 1) / r;
      flags += " -width " + std::to_string(w) + " -radix " + std::to_string(r) + " -period " +
               std::to_string(pick(1, maxp));
      break;
    }
    case DependenceType::random_nearest: {
      const char* fractions[] = {"0", "0.3", "0.5", "0.75", "1"};
      flags += " -width " + std::to_string(pick(1, 20)) + " -radix " + std::to_string(pick(1, 9)) +
               " -period " + std::to_string(pick(1, 5)) + " -fraction " + fractions[pick(0, 4)];
      break;
    }
    case DependenceType::dom:
    case DependenceType::tree:
      flags += " -width " + std::to_string(pick(1, 20));
      flags = "-steps " + std::to_string(pick(1, 30)) + flags.substr(flags.find(" -width"));
      break;
    default:
      flags += " -width " + std::to_string(pick(1, 20));
      break;
  }
  return flags + " -type " + std::string(taskbench::to_string(type));
}

size_t interval_points(const std::vector<Interval>& intervals) {
  size_t n = 0;
  for (const Interval& i : intervals) n += static_cast<size_t>(i.last - i.first + 1);
  return n;
}

// Spec 3.3: effective lists = raw intervals enumerated in order, filtered by
// the neighbouring timestep's active range.
std::vector<int64_t> filtered(const std::vector<Interval>& intervals, int64_t lo, int64_t width) {
  std::vector<int64_t> out;
  for (const Interval& i : intervals)
    for (int64_t q = i.first; q <= i.last; ++q)
      if (q >= lo && q < lo + width) out.push_back(q);
  return out;
}

void check_graph_properties(const TaskGraph& g, const std::string& flags) {
  SCOPED_TRACE(flags + " (graph " + std::to_string(g.graph_index) + ")");
  const int64_t bound = g.max_dependencies();
  const int64_t nsets = g.num_dependence_sets();
  ASSERT_GE(nsets, 1);
  std::vector<Interval> raw;
  for (int64_t d = 0; d < nsets; ++d) {
    for (int64_t p = 0; p < g.max_width; ++p) {
      g.dependencies(d, p, raw);
      EXPECT_LE(static_cast<int64_t>(interval_points(raw)), bound) << "dset " << d << " p " << p;
      for (const Interval& i : raw) {
        EXPECT_LE(i.first, i.last);
        EXPECT_GE(i.first, 0);
        EXPECT_LT(i.last, g.max_width);
      }
      g.reverse_dependencies(d, p, raw);
      for (const Interval& i : raw) {
        EXPECT_GE(i.first, 0);
        EXPECT_LT(i.last, g.max_width);
      }
    }
  }
  int64_t tasks = 0;
  int64_t deps = 0;
  for (int64_t t = 0; t < g.timesteps; ++t) {
    const int64_t offset = g.offset_at(t);
    const int64_t width = g.width_at(t);
    EXPECT_GE(offset, 0);
    EXPECT_GE(width, 0);
    EXPECT_LE(offset + width, g.max_width);
    const int64_t dset = g.dependence_set_at(t);
    EXPECT_GE(dset, 0);
    EXPECT_LT(dset, nsets);
    tasks += width;
    for (int64_t p = offset; p < offset + width; ++p) {
      const std::vector<int64_t> in = inputs_of(g, t, p);
      deps += static_cast<int64_t>(in.size());
      EXPECT_LE(static_cast<int64_t>(in.size()), bound) << "t " << t << " p " << p;
      EXPECT_EQ(std::set<int64_t>(in.begin(), in.end()).size(), in.size())
          << "duplicate input at t " << t << " p " << p;
      if (t == 0) {
        EXPECT_TRUE(in.empty());
      }
      g.dependencies(dset, p, raw);
      EXPECT_EQ(in, filtered(raw, g.offset_at(t - 1), g.width_at(t - 1))) << "t " << t << " p "
                                                                          << p;
      for (int64_t q : in) {
        EXPECT_TRUE(g.is_active(t - 1, q)) << "t " << t << " p " << p << " q " << q;
        const std::vector<int64_t> out = consumers_of(g, t - 1, q);
        EXPECT_NE(std::find(out.begin(), out.end(), p), out.end())
            << "input " << q << " of (" << t << ", " << p << ") does not list it as consumer";
      }
    }
    if (t == 0) continue;
    for (int64_t q = g.offset_at(t - 1); q < g.offset_at(t - 1) + g.width_at(t - 1); ++q) {
      const std::vector<int64_t> out = consumers_of(g, t - 1, q);
      EXPECT_EQ(std::set<int64_t>(out.begin(), out.end()).size(), out.size())
          << "duplicate consumer of (" << t - 1 << ", " << q << ")";
      g.reverse_dependencies(dset, q, raw);
      EXPECT_EQ(out, filtered(raw, offset, width)) << "consumers of (" << t - 1 << ", " << q << ")";
      for (int64_t p : out) {
        EXPECT_TRUE(g.is_active(t, p));
        const std::vector<int64_t> in = inputs_of(g, t, p);
        EXPECT_NE(std::find(in.begin(), in.end(), q), in.end())
            << "consumer " << p << " of (" << t - 1 << ", " << q << ") does not read it";
      }
    }
  }
  EXPECT_EQ(g.total_tasks(), tasks);
  EXPECT_EQ(g.total_dependencies(), deps);
}

TEST(Consistency, ForwardAndReverseAgreeForEveryType) {
  const DependenceType types[] = {
      DependenceType::trivial,    DependenceType::no_comm, DependenceType::stencil_1d,
      DependenceType::stencil_1d_periodic, DependenceType::dom, DependenceType::tree,
      DependenceType::fft,        DependenceType::all_to_all, DependenceType::nearest,
      DependenceType::spread,     DependenceType::random_nearest,
  };
  std::mt19937 rng(20240917);
  for (DependenceType type : types) {
    for (int round = 0; round < 8; ++round) {
      const std::string flags = random_flags(type, rng);
      const BenchConfig config = parse(flags);
      ASSERT_EQ(config.graphs.size(), 1u) << flags;
      ASSERT_EQ(config.graphs[0].dependence, type) << flags;
      check_graph_properties(config.graphs[0], flags);
      // The same flags as graph 2 of a run (random_nearest depends on it).
      const BenchConfig multi = parse("-and -and " + flags);
      ASSERT_EQ(multi.graphs.size(), 3u);
      EXPECT_EQ(multi.graphs[2].graph_index, 2);
      check_graph_properties(multi.graphs[2], "-and -and " + flags);
    }
  }
}

TEST(Consistency, SpecShapesAndVectors) {
  for (const VectorRow& row : kVectors) {
    if (row.number == 25) continue;  // large; covered by the totals test
    const BenchConfig config = parse(row.flags);
    for (const TaskGraph& g : config.graphs) check_graph_properties(g, row.flags);
  }
}

TEST(Consistency, MaxDependenciesBoundsRadixTypes) {
  // max_dependencies() must bound the lists for the largest radix/width used.
  const TaskGraph all = parse("-type all_to_all -width 37").graphs[0];
  EXPECT_GE(all.max_dependencies(), 37);
  const TaskGraph nearest = parse("-type nearest -radix 7 -width 30").graphs[0];
  EXPECT_GE(nearest.max_dependencies(), 7);
  const TaskGraph spread = parse("-type spread -radix 5 -width 30 -period 2").graphs[0];
  EXPECT_GE(spread.max_dependencies(), 5);
  const TaskGraph periodic = parse("-type stencil_1d_periodic -width 8").graphs[0];
  EXPECT_GE(periodic.max_dependencies(), 3);
  const TaskGraph rn = parse("-type random_nearest -radix 9 -fraction 1 -width 30").graphs[0];
  EXPECT_GE(rn.max_dependencies(), 9);
  EXPECT_EQ(inputs_of(rn, 1, 15).size(), 9u);  // fraction 1: the whole window
}

TEST(Consistency, RandomNearestFractionExtremes) {
  // F = 0: only the self edge; F = 1: the whole nearest window.
  const TaskGraph none = parse("-type random_nearest -radix 5 -fraction 0 -width 9 -steps 5").graphs[0];
  for (int64_t t = 1; t < 5; ++t)
    for (int64_t p = 0; p < 9; ++p) EXPECT_EQ(inputs_of(none, t, p), std::vector<int64_t>{p});
  const TaskGraph full = parse("-type random_nearest -radix 4 -fraction 1 -width 9 -steps 5").graphs[0];
  const TaskGraph nearest = parse("-type nearest -radix 4 -width 9 -steps 5").graphs[0];
  for (int64_t t = 1; t < 5; ++t)
    for (int64_t p = 0; p < 9; ++p)
      EXPECT_EQ(inputs_of(full, t, p), inputs_of(nearest, t, p)) << "t " << t << " p " << p;
}

TEST(Names, RoundTrip) {
  const char* types[] = {"trivial",    "no_comm", "stencil_1d", "stencil_1d_periodic",
                         "dom",        "tree",    "fft",        "all_to_all",
                         "nearest",    "spread",  "random_nearest", "random_spread"};
  for (const char* name : types) {
    DependenceType type{};
    ASSERT_TRUE(taskbench::parse_dependence_type(name, type)) << name;
    EXPECT_EQ(taskbench::to_string(type), name);
  }
  const char* kernels[] = {"empty",         "busy_wait",      "memory_bound",
                           "compute_dgemm", "memory_daxpy",   "compute_bound",
                           "compute_bound2", "io_bound",      "load_imbalance"};
  for (const char* name : kernels) {
    taskbench::KernelType kernel{};
    ASSERT_TRUE(taskbench::parse_kernel_type(name, kernel)) << name;
    EXPECT_EQ(taskbench::to_string(kernel), name);
  }
  DependenceType type{};
  EXPECT_FALSE(taskbench::parse_dependence_type("bogus", type));
  EXPECT_FALSE(taskbench::parse_dependence_type("Stencil_1d", type));
  taskbench::KernelType kernel{};
  EXPECT_FALSE(taskbench::parse_kernel_type("bogus", kernel));
  EXPECT_FALSE(taskbench::parse_kernel_type("", kernel));
}

}  // namespace
