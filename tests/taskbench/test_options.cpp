// Command line of the Task Bench spec (section 2): messages of 2.2 and 2.4,
// defaults of 2.3, parsing rules of 2.1, the crash cases of 2.4's table and
// TaskGrid's own -json / -broadcast / -worker flags.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/task_graph.h"
#include "test_support.h"

namespace {

using taskbench::BenchConfig;
using taskbench::DependenceType;
using taskbench::KernelType;
using taskbench::TaskGraph;
using taskbench_test::parse;
using taskbench_test::parse_args;
using taskbench_test::usage_error;
using taskbench_test::usage_error_args;

// ---------------------------------------------------------------------------
// Defaults (2.2, 2.3).

void expect_default_graph(const TaskGraph& g, int64_t index) {
  EXPECT_EQ(g.graph_index, index);
  EXPECT_EQ(g.timesteps, 4);
  EXPECT_EQ(g.max_width, 4);
  EXPECT_EQ(g.dependence, DependenceType::trivial);
  EXPECT_EQ(g.radix, 3);
  EXPECT_EQ(g.period, 0);
  EXPECT_DOUBLE_EQ(g.fraction, 0.25);
  EXPECT_EQ(g.kernel.type, KernelType::empty);
  EXPECT_EQ(g.kernel.iterations, 0);
  EXPECT_EQ(g.kernel.samples, 16);
  EXPECT_DOUBLE_EQ(g.kernel.imbalance, 0.0);
  EXPECT_EQ(g.output_bytes, 16);
  EXPECT_EQ(g.scratch_bytes, 0);
  EXPECT_EQ(g.fields, 4);  // 0 -> T
}

TEST(OptionDefaults, NoArguments) {
  const BenchConfig config = parse("");
  ASSERT_EQ(config.graphs.size(), 1u);
  expect_default_graph(config.graphs[0], 0);
  EXPECT_EQ(config.nodes, 0);
  EXPECT_EQ(config.verbosity, 0);
  EXPECT_FALSE(config.skip_graph_validation);
  EXPECT_FALSE(config.help);
  EXPECT_EQ(config.json_path, "");
  EXPECT_EQ(config.broadcast_bytes, 0);
  EXPECT_EQ(config.workers, 0);
}

TEST(OptionDefaults, AllGraphFlagsParsed) {
  const BenchConfig config = parse(
      "-steps 9 -width 7 -type random_nearest -radix 5 -period 2 -fraction 0.5 -kernel "
      "memory_bound -iter 10 -output 48 -scratch 256 -sample 4 -imbalance 0.75 -field 3");
  ASSERT_EQ(config.graphs.size(), 1u);
  const TaskGraph& g = config.graphs[0];
  EXPECT_EQ(g.timesteps, 9);
  EXPECT_EQ(g.max_width, 7);
  EXPECT_EQ(g.dependence, DependenceType::random_nearest);
  EXPECT_EQ(g.radix, 5);
  EXPECT_EQ(g.period, 2);
  EXPECT_DOUBLE_EQ(g.fraction, 0.5);
  EXPECT_EQ(g.kernel.type, KernelType::memory_bound);
  EXPECT_EQ(g.kernel.iterations, 10);
  EXPECT_EQ(g.output_bytes, 48);
  EXPECT_EQ(g.scratch_bytes, 256);
  EXPECT_EQ(g.kernel.samples, 4);
  EXPECT_DOUBLE_EQ(g.kernel.imbalance, 0.75);
  EXPECT_EQ(g.fields, 3);
}

TEST(OptionDefaults, PeriodDefaultsPerType) {
  EXPECT_EQ(parse("-type spread -width 10 -radix 3").graphs[0].period, 3);
  EXPECT_EQ(parse("-type random_nearest").graphs[0].period, 3);
  EXPECT_EQ(parse("-type random_nearest -period 7").graphs[0].period, 7);
  for (const char* type : {"trivial", "no_comm", "stencil_1d", "stencil_1d_periodic", "dom", "tree",
                           "fft", "all_to_all", "nearest"}) {
    EXPECT_EQ(parse(std::string("-type ") + type).graphs[0].period, 0) << type;
    // -period 0 is accepted for every type without periods.
    EXPECT_EQ(parse(std::string("-type ") + type + " -period 0").graphs[0].period, 0) << type;
  }
  // Defaults are filled in per graph, at -and as well as at the end.
  const BenchConfig config =
      parse("-type random_nearest -and -type stencil_1d -and -type random_nearest -period 4");
  ASSERT_EQ(config.graphs.size(), 3u);
  EXPECT_EQ(config.graphs[0].period, 3);
  EXPECT_EQ(config.graphs[1].period, 0);
  EXPECT_EQ(config.graphs[2].period, 4);
}

TEST(OptionDefaults, FieldsDefaultToSteps) {
  EXPECT_EQ(parse("-steps 9").graphs[0].fields, 9);
  EXPECT_EQ(parse("-steps 9 -field 2").graphs[0].fields, 2);
  EXPECT_EQ(parse("-field 1").graphs[0].fields, 1);  // "> 1" message, but 1 accepted
  const BenchConfig config = parse("-steps 9 -field 2 -and -steps 11");
  EXPECT_EQ(config.graphs[1].fields, 11);
}

// ---------------------------------------------------------------------------
// Parsing rules (2.1).

TEST(OptionParsing, AndResetsEveryGraphOption) {
  const BenchConfig config = parse(
      "-steps 9 -width 7 -type stencil_1d -radix 5 -fraction 0.5 -kernel compute_bound -iter 10 "
      "-output 32 -scratch 64 -sample 4 -imbalance 0.5 -field 2 -and");
  ASSERT_EQ(config.graphs.size(), 2u);
  EXPECT_EQ(config.graphs[0].graph_index, 0);
  EXPECT_EQ(config.graphs[0].timesteps, 9);
  EXPECT_EQ(config.graphs[0].kernel.type, KernelType::compute_bound);
  expect_default_graph(config.graphs[1], 1);
}

TEST(OptionParsing, GraphIndicesInCommandLineOrder) {
  const BenchConfig config = parse("-steps 1 -and -steps 2 -and -steps 3 -and -steps 4");
  ASSERT_EQ(config.graphs.size(), 4u);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(config.graphs[i].graph_index, i);
    EXPECT_EQ(config.graphs[i].timesteps, i + 1);
  }
}

TEST(OptionParsing, GpuLanesDefaultAndPerGraph) {
  const auto config = parse("-kernel gpu_compute_bound -gpu-lanes 12 -gpu-lanes 96 -and -steps 2");
  ASSERT_EQ(config.graphs.size(), 2u);
  EXPECT_EQ(config.graphs[0].kernel.type, taskbench::KernelType::gpu_compute_bound);
  EXPECT_EQ(config.graphs[0].kernel.gpu_lanes, 96);      // the last one wins
  EXPECT_EQ(config.graphs[1].kernel.gpu_lanes, 262144);  // -and resets it
  EXPECT_NE(taskbench::usage_text("tb").find("-gpu-lanes L (262144)"), std::string::npos);
  EXPECT_NE(taskbench::usage_text("tb").find("2 * 4 * L * N FLOPs"), std::string::npos);
}

TEST(OptionParsing, ChoiceFlags) {
  const char* argv[] = {"tb", "-device", "gpu", "-x", "-device", "cpu"};
  size_t index = 7;
  EXPECT_EQ(taskbench::parse_choice_flag(6, argv, "-device", {"cpu", "gpu"}, index), "");
  EXPECT_EQ(index, 0u);  // the last one wins
  EXPECT_EQ(taskbench::parse_choice_flag(4, argv, "-device", {"cpu", "gpu"}, index), "");
  EXPECT_EQ(index, 1u);
  index = 7;
  EXPECT_EQ(taskbench::parse_choice_flag(4, argv, "-other", {"a"}, index), "");
  EXPECT_EQ(index, 7u);  // absent: untouched
  const char* bad[] = {"tb", "-device", "tpu"};
  EXPECT_EQ(taskbench::parse_choice_flag(3, bad, "-device", {"cpu", "gpu"}, index),
            "Invalid flag \"-device tpu\" must be cpu or gpu");
  EXPECT_EQ(taskbench::parse_choice_flag(2, bad, "-device", {"cpu", "gpu"}, index),
            "Flag \"-device\" requires an argument");
}

TEST(OptionParsing, LastOneWins) {
  const BenchConfig config = parse(
      "-steps 3 -steps 5 -type dom -type stencil_1d -iter 4 -iter 9 -fraction 0.1 -fraction 0.9");
  const TaskGraph& g = config.graphs[0];
  EXPECT_EQ(g.timesteps, 5);
  EXPECT_EQ(g.dependence, DependenceType::stencil_1d);
  EXPECT_EQ(g.kernel.iterations, 9);
  EXPECT_DOUBLE_EQ(g.fraction, 0.9);
  // An invalid value overridden later is still reported: errors are detected
  // while scanning.
  EXPECT_EQ(usage_error("-steps 0 -steps 5"), "Invalid flag \"-steps 0\" must be > 0");
}

// Unlike the reference's atol/atof (which turn "abc" into 0 and "12abc"
// into 12), a value must be a whole number: the message names flag and text.
TEST(OptionParsing, IntegersMustBeWholeNumbers) {
  EXPECT_EQ(parse("-steps +7").graphs[0].timesteps, 7);
  EXPECT_EQ(parse("-iter -0").graphs[0].kernel.iterations, 0);
  EXPECT_EQ(parse("-iter 9999999999").graphs[0].kernel.iterations, int64_t{9999999999});
  EXPECT_EQ(usage_error("-width abc"), "Invalid flag \"-width abc\": not an integer");
  EXPECT_EQ(usage_error("-steps abc"), "Invalid flag \"-steps abc\": not an integer");
  EXPECT_EQ(usage_error("-width 12abc"), "Invalid flag \"-width 12abc\": not an integer");
  EXPECT_EQ(usage_error("-iter 1e3"), "Invalid flag \"-iter 1e3\": not an integer");
  EXPECT_EQ(usage_error("-radix 3.9"), "Invalid flag \"-radix 3.9\": not an integer");
  EXPECT_EQ(usage_error("-output 15.99"), "Invalid flag \"-output 15.99\": not an integer");
  EXPECT_EQ(usage_error("-iter -3x"), "Invalid flag \"-iter -3x\": not an integer");
  EXPECT_EQ(usage_error("-steps +-3"), "Invalid flag \"-steps +-3\": not an integer");
  EXPECT_EQ(usage_error_args({"-steps", ""}), "Invalid flag \"-steps \": not an integer");
  EXPECT_EQ(usage_error("-width 99999999999999999999"),
            "Invalid flag \"-width 99999999999999999999\": out of range (a 64-bit integer)");
  // Every integer flag goes through the same check.
  for (const char* flag :
       {"-nodes", "-broadcast", "-worker", "-steps", "-width", "-radix", "-period", "-iter",
        "-gpu-lanes", "-output", "-scratch", "-sample", "-field"})
    EXPECT_EQ(usage_error_args({flag, "x5"}),
              std::string("Invalid flag \"") + flag + " x5\": not an integer");
}

TEST(OptionParsing, RealsMustBeWholeNumbers) {
  EXPECT_EQ(usage_error("-fraction 0.5abc"), "Invalid flag \"-fraction 0.5abc\": not a number");
  EXPECT_EQ(usage_error("-fraction abc"), "Invalid flag \"-fraction abc\": not a number");
  EXPECT_EQ(usage_error("-imbalance x"), "Invalid flag \"-imbalance x\": not a number");
  EXPECT_EQ(usage_error("-imbalance 1e999"),
            "Invalid flag \"-imbalance 1e999\": out of range (a double)");
  EXPECT_DOUBLE_EQ(parse("-fraction .75").graphs[0].fraction, 0.75);
  EXPECT_DOUBLE_EQ(parse("-fraction +.5").graphs[0].fraction, 0.5);
  EXPECT_DOUBLE_EQ(parse("-imbalance 1e-1").graphs[0].kernel.imbalance, 0.1);
  EXPECT_DOUBLE_EQ(parse("-fraction 1").graphs[0].fraction, 1.0);
  EXPECT_DOUBLE_EQ(parse("-fraction 0").graphs[0].fraction, 0.0);
  EXPECT_DOUBLE_EQ(parse("-imbalance 2").graphs[0].kernel.imbalance, 2.0);
  EXPECT_EQ(usage_error("-fraction 15e-1"),
            "Invalid flag \"-fraction 1.500000\" must be >= 0 and <= 1");
}

TEST(OptionParsing, ValueIsTheNextArgumentEvenIfItLooksLikeAFlag) {
  // "-width" is consumed as the value of -steps, and is not a number.
  EXPECT_EQ(usage_error("-steps -width 5"), "Invalid flag \"-steps -width\": not an integer");
}

TEST(OptionParsing, UnknownArgumentsAreIgnoredAndCollected) {
  const BenchConfig config =
      parse("-samples 5 -foo -bar 7 -ll:cpu 4 bare -steps 5 --width 9 -foo -bar 8 -x -3");
  ASSERT_EQ(config.graphs.size(), 1u);
  EXPECT_EQ(config.graphs[0].kernel.samples, 16);  // -samples is not -sample
  EXPECT_EQ(config.graphs[0].timesteps, 5);
  EXPECT_EQ(config.graphs[0].max_width, 4);
  // Once each, in order; an unknown flag's value (not a flag) is its own.
  const std::vector<std::string> expected{"-samples", "-foo",    "-bar", "-ll:cpu",
                                          "bare",     "--width", "-x"};
  EXPECT_EQ(config.ignored_arguments, expected);
  EXPECT_TRUE(parse("-steps 5 -and -width 3").ignored_arguments.empty());
}

TEST(OptionParsing, SystemFlagsAreSkippedWithTheirValue) {
  const std::vector<const char*> argv{
      "taskbench", "-taskgrid:placement", "scheduler", "-steps", "5", "-device", "gpu", "-ll:x"};
  const BenchConfig config = taskbench::parse_options(static_cast<int>(argv.size()), argv.data(),
                                                      {"-taskgrid:placement", "-device"});
  EXPECT_EQ(config.graphs[0].timesteps, 5);
  EXPECT_EQ(config.ignored_arguments, std::vector<std::string>{"-ll:x"});
}

TEST(OptionParsing, WorkerIsStoredButDoesNotChangeTheGraph) {
  const BenchConfig plain = parse("-steps 6 -type stencil_1d");
  const BenchConfig config = parse("-worker 3 -steps 6 -type stencil_1d");
  EXPECT_EQ(config.workers, 3);
  ASSERT_EQ(config.graphs.size(), 1u);
  EXPECT_EQ(config.graphs[0].timesteps, plain.graphs[0].timesteps);
  EXPECT_EQ(config.graphs[0].total_dependencies(), plain.graphs[0].total_dependencies());
  EXPECT_EQ(parse("-steps 6 -and -worker 2").workers, 2);
}

TEST(OptionParsing, GlobalOptions) {
  const BenchConfig config = parse("-v -steps 5 -and -vv -nodes 3 -skip-graph-validation -steps 6");
  ASSERT_EQ(config.graphs.size(), 2u);
  EXPECT_EQ(config.verbosity, 3);
  EXPECT_EQ(config.nodes, 3);
  EXPECT_TRUE(config.skip_graph_validation);
  EXPECT_EQ(config.graphs[0].timesteps, 5);
  EXPECT_EQ(config.graphs[1].timesteps, 6);
  EXPECT_EQ(parse("-v").verbosity, 1);
  EXPECT_EQ(parse("-vv").verbosity, 2);
  EXPECT_EQ(parse("-v -v").verbosity, 2);
}

TEST(OptionParsing, HelpFlag) {
  const BenchConfig config = parse("-h");
  EXPECT_TRUE(config.help);
  // Earlier options are processed first: an earlier invalid option wins.
  EXPECT_EQ(usage_error("-steps 0 -h"), "Invalid flag \"-steps 0\" must be > 0");
}

TEST(OptionParsing, TaskGridAdditions) {
  const BenchConfig config = parse("-json /tmp/out.json -broadcast 4096 -worker 8 -steps 5");
  EXPECT_EQ(config.json_path, "/tmp/out.json");
  EXPECT_EQ(config.broadcast_bytes, 4096);
  EXPECT_EQ(config.workers, 8);
  EXPECT_EQ(config.graphs[0].timesteps, 5);
  EXPECT_EQ(parse("-broadcast 0").broadcast_bytes, 0);
  EXPECT_EQ(parse("-worker 1").workers, 1);

  const std::string negative_broadcast = usage_error("-broadcast -1");
  EXPECT_NE(negative_broadcast, "<no error>");
  EXPECT_NE(negative_broadcast, "<other exception>");
  EXPECT_FALSE(negative_broadcast.empty());
  EXPECT_NE(negative_broadcast.find("-broadcast"), std::string::npos) << negative_broadcast;

  for (const char* flags : {"-worker 0", "-worker -2"}) {
    const std::string message = usage_error(flags);
    EXPECT_NE(message, "<no error>") << flags;
    EXPECT_NE(message, "<other exception>") << flags;
    EXPECT_FALSE(message.empty()) << flags;
    EXPECT_NE(message.find("-worker"), std::string::npos) << message;
  }
}

// ---------------------------------------------------------------------------
// Validation messages of 2.2 (exact text, without the "error: " prefix).

struct MessageCase {
  const char* flags;
  const char* message;
};

const MessageCase kOptionMessages[] = {
    {"-gpu-lanes 0", "Invalid flag \"-gpu-lanes 0\" must be > 0"},
    {"-gpu-lanes -8", "Invalid flag \"-gpu-lanes -8\" must be > 0"},
    {"-kernel gpu_compute_bound -and -gpu-lanes 0", "Invalid flag \"-gpu-lanes 0\" must be > 0"},
    {"-nodes 0", "Invalid flag \"-nodes 0\" must be > 0"},
    {"-nodes -4", "Invalid flag \"-nodes -4\" must be > 0"},
    {"-steps 0", "Invalid flag \"-steps 0\" must be > 0"},
    {"-steps -5", "Invalid flag \"-steps -5\" must be > 0"},
    {"-width 0", "Invalid flag \"-width 0\" must be > 0"},
    {"-width -1", "Invalid flag \"-width -1\" must be > 0"},
    {"-type bogus", "Invalid flag \"-type bogus\""},
    {"-type STENCIL_1D", "Invalid flag \"-type STENCIL_1D\""},
    {"-radix -1", "Invalid flag \"-radix -1\" must be >= 0"},
    {"-period -1", "Invalid flag \"-period -1\" must be >= 0"},
    {"-fraction 1.5", "Invalid flag \"-fraction 1.500000\" must be >= 0 and <= 1"},
    {"-fraction -0.25", "Invalid flag \"-fraction -0.250000\" must be >= 0 and <= 1"},
    {"-kernel bogus", "Invalid flag \"-kernel bogus\""},
    {"-iter -1", "Invalid flag \"-iter -1\" must be >= 0"},
    {"-output 8", "Invalid flag \"-output 8\" must be >= 16"},
    {"-output 15", "Invalid flag \"-output 15\" must be >= 16"},
    {"-output 0", "Invalid flag \"-output 0\" must be >= 16"},
    {"-scratch -8", "Invalid flag \"-scratch -8\" must be >= 0"},
    {"-sample -1", "Invalid flag \"-sample -1\" must be >= 0"},
    {"-imbalance 2.5", "Invalid flag \"-imbalance 2.500000\" must be >= 0 and <= 2"},
    {"-imbalance -1", "Invalid flag \"-imbalance -1.000000\" must be >= 0 and <= 2"},
    {"-field 0", "Invalid flag \"-field 0\" must be > 1"},
    {"-field -3", "Invalid flag \"-field -3\" must be > 1"},
};

TEST(OptionMessages, InvalidValues) {
  for (const MessageCase& c : kOptionMessages)
    EXPECT_EQ(usage_error(c.flags), c.message) << c.flags;
}

TEST(OptionMessages, MessageHasNoErrorPrefix) {
  const std::string message = usage_error("-steps 0");
  EXPECT_NE(message.rfind("error:", 0), 0u) << message;
}

TEST(OptionMessages, NegativeOutputIsRejected) {
  // The reference lets it slip through (unsigned compare); we must reject it.
  const std::string message = usage_error("-output -16");
  EXPECT_NE(message, "<no error>");
  EXPECT_NE(message.find("-output -16"), std::string::npos) << message;
}

// A buffer no machine can hold is refused before anything is allocated,
// naming the flag and the bytes (it ended in a bare std::bad_alloc).
TEST(OptionMessages, OutputLargerThanMemoryIsRejected) {
  EXPECT_EQ(usage_error("-output 1000000000000000")
                .rfind("Invalid flag \"-output 1000000000000000\": each task's output needs "
                       "1000000000000000 bytes (4000000000000000 for the 4 points of one "
                       "timestep), more than this machine's memory (",
                       0),
            0u)
      << usage_error("-output 1000000000000000");
  EXPECT_NE(usage_error("-width 8 -scratch 1000000000000000").find("-scratch 1000000000000000"),
            std::string::npos);
  EXPECT_EQ(usage_error("-broadcast 1000000000000000")
                .rfind("Invalid flag \"-broadcast 1000000000000000\": the broadcast buffer needs "
                       "1000000000000000 bytes in every process, more than this machine's memory (",
                       0),
            0u);
  EXPECT_EQ(parse("-output 1048576").graphs[0].output_bytes, 1048576);
}

TEST(OptionMessages, MissingArgument) {
  for (const char* flag :
       {"-nodes", "-steps", "-width", "-type", "-radix", "-period", "-fraction", "-kernel", "-iter",
        "-output", "-scratch", "-sample", "-imbalance", "-field", "-gpu-lanes"}) {
    EXPECT_EQ(usage_error_args({flag}), std::string("Flag \"") + flag + "\" requires an argument")
        << flag;
    EXPECT_EQ(usage_error_args({"-steps", "5", "-and", flag}),
              std::string("Flag \"") + flag + "\" requires an argument")
        << flag;
  }
}

TEST(OptionMessages, FirstBadOptionLeftToRightIsReported) {
  EXPECT_EQ(usage_error("-steps 0 -width 0"), "Invalid flag \"-steps 0\" must be > 0");
  EXPECT_EQ(usage_error("-width 0 -steps 0"), "Invalid flag \"-width 0\" must be > 0");
  EXPECT_EQ(usage_error("-type bogus -kernel bogus"), "Invalid flag \"-type bogus\"");
  EXPECT_EQ(usage_error("-kernel bogus -type bogus"), "Invalid flag \"-kernel bogus\"");
  EXPECT_EQ(usage_error("-steps 5 -and -iter -2 -and -steps 0"),
            "Invalid flag \"-iter -2\" must be >= 0");
  EXPECT_EQ(usage_error("-fraction 2 -steps"),
            "Invalid flag \"-fraction 2.000000\" must be >= 0 and <= 1");
  // Option errors are found while scanning, before any graph validation.
  EXPECT_EQ(usage_error("-type spread -and -steps 0"), "Invalid flag \"-steps 0\" must be > 0");
  EXPECT_EQ(usage_error("-type stencil_1d -period 2 -and -width 0"),
            "Invalid flag \"-width 0\" must be > 0");
}

// ---------------------------------------------------------------------------
// Graph validation of 2.4 (exact text).

const MessageCase kGraphMessages[] = {
    {"-type spread -period 0",
     "Graph type \"spread\" requires a non-zero period (specify with -period)"},
    {"-type random_nearest -period 0",
     "Graph type \"random_nearest\" requires a non-zero period (specify with -period)"},
    {"-type stencil_1d -period 2",
     "Graph type \"stencil_1d\" does not support user-configurable period"},
    {"-period 1", "Graph type \"trivial\" does not support user-configurable period"},
    {"-type nearest -period 3", "Graph type \"nearest\" does not support user-configurable period"},
    {"-type fft -width 8 -period 1",
     "Graph type \"fft\" does not support user-configurable period"},
    // No -period given: the message says the default is what is wrong.
    {"-type spread",
     "Graph type \"spread\" requires a period that is at most 2 (width 4, radix 3), but no -period "
     "was given and the default 3 is too large: specify -period 1 to 2"},
    {"-type spread -width 8 -radix 4",
     "Graph type \"spread\" requires a period that is at most 2 (width 8, radix 4), but no -period "
     "was given and the default 3 is too large: specify -period 1 to 2"},
    {"-type spread -period 3", "Graph type \"spread\" requires a period that is at most 2"},
    {"-type spread -width 10 -radix 3 -period 5",
     "Graph type \"spread\" requires a period that is at most 4"},
    {"-type spread -width 16 -radix 4 -period 5",
     "Graph type \"spread\" requires a period that is at most 4"},
    // Graphs are validated in order; the first failing graph is reported.
    {"-type spread -period 1 -and -type spread",
     "Graph type \"spread\" requires a period that is at most 2 (width 4, radix 3), but no -period "
     "was given and the default 3 is too large: specify -period 1 to 2"},
    {"-type spread -and -type random_nearest -period 0",
     "Graph type \"spread\" requires a period that is at most 2 (width 4, radix 3), but no -period "
     "was given and the default 3 is too large: specify -period 1 to 2"},
    {"-type stencil_1d -and -type stencil_1d -period 3",
     "Graph type \"stencil_1d\" does not support user-configurable period"},
    {"-type dom -period 2 -and -type spread -period 0",
     "Graph type \"dom\" does not support user-configurable period"},
};

TEST(GraphValidation, Messages) {
  for (const MessageCase& c : kGraphMessages) EXPECT_EQ(usage_error(c.flags), c.message) << c.flags;
}

TEST(GraphValidation, ValidPeriods) {
  EXPECT_EQ(parse("-type spread -width 10 -radix 3 -period 4").graphs[0].period, 4);
  EXPECT_EQ(parse("-type spread -radix 2 -period 2").graphs[0].period, 2);
  EXPECT_EQ(parse("-type spread -width 9 -radix 3").graphs[0].period, 3);  // maxp = 3
}

// ---------------------------------------------------------------------------
// Crash cases of 2.4's table: rejected with a message naming the cause.

void expect_rejected(const std::string& flags, const std::string& must_mention) {
  const std::string message = usage_error(flags);
  EXPECT_NE(message, "<no error>") << flags;
  EXPECT_NE(message, "<other exception>") << flags;
  EXPECT_FALSE(message.empty()) << flags;
  EXPECT_NE(message.find(must_mention), std::string::npos)
      << flags << " -> \"" << message << "\" should mention " << must_mention;
}

TEST(CrashCases, RandomSpread) {
  expect_rejected("-type random_spread", "random_spread");
  expect_rejected("-type random_spread -width 16 -radix 5", "random_spread");
  const std::string with_period = usage_error("-type random_spread -period 1");
  EXPECT_NE(with_period, "<no error>");
  EXPECT_NE(with_period, "<other exception>");
}

TEST(CrashCases, FftWidth1) {
  expect_rejected("-type fft -width 1", "fft");
  EXPECT_EQ(parse("-type fft -width 2").graphs[0].max_width, 2);
}

TEST(CrashCases, RadixZero) {
  expect_rejected("-type spread -radix 0", "spread");
  expect_rejected("-type spread -radix 0 -period 1", "spread");
  expect_rejected("-type random_nearest -radix 0", "random_nearest");
  expect_rejected("-type random_nearest -radix 0 -period 1", "random_nearest");
  // nearest with radix 0 is fine (no edges).
  EXPECT_EQ(parse("-type nearest -radix 0").graphs[0].radix, 0);
}

TEST(CrashCases, Stencil1dPeriodicNeedsWidth3) {
  expect_rejected("-type stencil_1d_periodic -width 1", "stencil_1d_periodic");
  expect_rejected("-type stencil_1d_periodic -width 2", "stencil_1d_periodic");
  EXPECT_EQ(parse("-type stencil_1d_periodic -width 3").graphs[0].max_width, 3);
}

TEST(CrashCases, SpreadRadixGreaterThanWidth) {
  expect_rejected("-type spread -width 4 -radix 5 -period 1", "spread");
  expect_rejected("-type spread -width 1 -radix 2 -period 1", "spread");
  EXPECT_EQ(parse("-type spread -width 4 -radix 4 -period 1").graphs[0].radix, 4);
}

TEST(CrashCases, MemoryKernelsNeedScratch) {
  expect_rejected("-kernel memory_bound -iter 4", "memory_bound");
  expect_rejected("-kernel memory_bound -scratch 0 -iter 4", "memory_bound");
  expect_rejected("-kernel memory_daxpy -iter 4", "memory_daxpy");
  expect_rejected("-kernel compute_dgemm -iter 4", "compute_dgemm");
  // Validated per graph: the second graph's kernel is named.
  expect_rejected("-kernel memory_bound -scratch 256 -and -kernel memory_bound", "memory_bound");
  EXPECT_EQ(parse("-kernel memory_bound -scratch 256 -and -kernel memory_bound -scratch 512")
                .graphs.size(),
            2u);
}

// The cause of this rejection is the scratch size itself (spec 7.4: the
// marker fills every 8-byte word), so naming the flag or the kernel will do.
void expect_rejected_naming_either(const std::string& flags, const std::string& kernel,
                                   const std::string& flag) {
  const std::string message = usage_error(flags);
  EXPECT_NE(message, "<no error>") << flags;
  EXPECT_NE(message, "<other exception>") << flags;
  EXPECT_TRUE(message.find(kernel) != std::string::npos || message.find(flag) != std::string::npos)
      << flags << " -> \"" << message << "\" should mention " << kernel << " or " << flag;
}

TEST(CrashCases, MemoryKernelsNeedScratchMultipleOf8) {
  expect_rejected_naming_either("-kernel memory_bound -scratch 100 -iter 4", "memory_bound",
                                "-scratch 100");
  expect_rejected_naming_either("-kernel memory_daxpy -scratch 12 -iter 4", "memory_daxpy",
                                "-scratch 12");
  expect_rejected_naming_either("-kernel memory_bound -scratch 260 -sample 4 -iter 4",
                                "memory_bound", "-scratch 260");
  EXPECT_EQ(parse("-kernel memory_bound -scratch 256 -iter 4").graphs[0].scratch_bytes, 256);
}

TEST(CrashCases, MemoryKernelsNeedSamples) {
  expect_rejected("-kernel memory_bound -scratch 64 -sample 0", "memory_bound");
  expect_rejected("-kernel memory_daxpy -scratch 64 -sample 0", "memory_daxpy");
  // -sample 0 is harmless for other kernels.
  EXPECT_EQ(parse("-kernel compute_bound -sample 0").graphs[0].kernel.samples, 0);
}

TEST(CrashCases, IoBoundIsAccepted) {
  const BenchConfig config = parse("-kernel io_bound -iter 5");
  EXPECT_EQ(config.graphs[0].kernel.type, KernelType::io_bound);
  EXPECT_NO_THROW(taskbench::check_kernel_support(config));
}

// ---------------------------------------------------------------------------
// parse_command_line: what every system's main() does.

bool run_command_line(const std::vector<std::string>& args, BenchConfig& config, int& status,
                      std::string& out, std::string& err, bool print = true,
                      const std::vector<std::string_view>& own_flags = {}) {
  std::vector<const char*> argv{"taskbench-test"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  argv.push_back(nullptr);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const bool ok = taskbench::parse_command_line(static_cast<int>(argv.size() - 1), argv.data(),
                                                config, status, print, own_flags);
  out = ::testing::internal::GetCapturedStdout();
  err = ::testing::internal::GetCapturedStderr();
  return ok;
}

TEST(CommandLine, ValidArguments) {
  BenchConfig config;
  int status = -7;
  std::string out, err;
  EXPECT_TRUE(run_command_line({"-steps", "6", "-type", "stencil_1d"}, config, status, out, err));
  ASSERT_EQ(config.graphs.size(), 1u);
  EXPECT_EQ(config.graphs[0].timesteps, 6);
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
}

TEST(CommandLine, ErrorPrintsPrefixedMessageAndStatus2) {
  BenchConfig config;
  int status = 0;
  std::string out, err;
  EXPECT_FALSE(run_command_line({"-steps", "0"}, config, status, out, err));
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err, "error: Invalid flag \"-steps 0\" must be > 0\n");
  EXPECT_EQ(out, "");

  EXPECT_FALSE(run_command_line({"-type", "spread"}, config, status, out, err));
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err,
            "error: Graph type \"spread\" requires a period that is at most 2 (width 4, radix 3), "
            "but no -period was given and the default 3 is too large: specify -period 1 to 2\n");
  EXPECT_EQ(out, "");

  EXPECT_FALSE(run_command_line({"-iter"}, config, status, out, err));
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err, "error: Flag \"-iter\" requires an argument\n");
  EXPECT_EQ(out, "");
}

TEST(CommandLine, ErrorWithoutPrinting) {
  BenchConfig config;
  int status = 0;
  std::string out, err;
  EXPECT_FALSE(run_command_line({"-width", "0"}, config, status, out, err, /*print=*/false));
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err, "");
  EXPECT_EQ(out, "");
}

TEST(CommandLine, HelpPrintsUsageAndStatus0) {
  BenchConfig config;
  int status = -1;
  std::string out, err;
  EXPECT_FALSE(run_command_line({"-steps", "5", "-h"}, config, status, out, err));
  EXPECT_EQ(status, 0);
  EXPECT_FALSE(out.empty());
  EXPECT_NE(out.find("-steps"), std::string::npos) << out;
  EXPECT_EQ(err, "");

  EXPECT_FALSE(run_command_line({"-h"}, config, status, out, err, /*print=*/false));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, "");
}

TEST(CommandLine, EarlierInvalidOptionBeatsHelp) {
  BenchConfig config;
  int status = 0;
  std::string out, err;
  EXPECT_FALSE(run_command_line({"-steps", "0", "-h"}, config, status, out, err));
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err, "error: Invalid flag \"-steps 0\" must be > 0\n");
  EXPECT_EQ(out, "");
}

TEST(CommandLine, HelpStopsTheScan) {
  // -h prints the usage and exits when it is reached; options after it and
  // the graph validation (which runs after the whole scan) never happen.
  BenchConfig config;
  int status = -1;
  std::string out, err;
  EXPECT_FALSE(run_command_line({"-h", "-steps", "0"}, config, status, out, err));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(err, "");
  EXPECT_FALSE(run_command_line({"-type", "spread", "-h"}, config, status, out, err));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(err, "");
}

TEST(CommandLine, UnknownFlagsWarnOncePerFlag) {
  BenchConfig config;
  int status = -7;
  std::string out, err;
  EXPECT_TRUE(run_command_line(
      {"-foo", "-steps", "5", "stray", "-taskgrid:placement", "hint", "-foo", "-worker", "2"},
      config, status, out, err));
  EXPECT_EQ(err,
            "warning: ignoring unknown flag \"-foo\"\n"
            "warning: ignoring argument \"stray\"\n"
            "warning: ignoring unknown flag \"-taskgrid:placement\"\n");
  EXPECT_EQ(out, "");
  // The system's own flags are not unknown; only the printing process warns.
  EXPECT_TRUE(run_command_line({"-foo", "-taskgrid:placement", "hint"}, config, status, out, err,
                               true, {"-taskgrid:placement"}));
  EXPECT_EQ(err, "warning: ignoring unknown flag \"-foo\"\n");
  EXPECT_TRUE(run_command_line({"-foo"}, config, status, out, err, /*print=*/false));
  EXPECT_EQ(err, "");
  // A usage error prints the error alone.
  EXPECT_FALSE(run_command_line({"-foo", "-steps", "0"}, config, status, out, err));
  EXPECT_EQ(err, "error: Invalid flag \"-steps 0\" must be > 0\n");
}

// -json is checked before the run (it used to fail only when the report was
// written, after the whole run), and nothing is created by the check.
TEST(CommandLine, UnwritableJsonPathFailsAtOnce) {
  BenchConfig config;
  int status = 0;
  std::string out, err;
  EXPECT_FALSE(
      run_command_line({"-json", "/nonexistent-taskbench-dir/out.json"}, config, status, out, err));
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err,
            "error: Invalid flag \"-json /nonexistent-taskbench-dir/out.json\": cannot create it: "
            "No such file or directory\n");
  EXPECT_EQ(out, "");

  const std::string directory = ::testing::TempDir();
  EXPECT_FALSE(run_command_line({"-json", directory}, config, status, out, err));
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err,
            "error: Invalid flag \"-json " + directory + "\": cannot write it: Is a directory\n");

  // A new file is not left behind; an existing one keeps its content.
  const std::string fresh = directory + "/taskbench_json_check_" + std::to_string(getpid());
  EXPECT_TRUE(run_command_line({"-json", fresh}, config, status, out, err));
  EXPECT_EQ(err, "");
  EXPECT_NE(access(fresh.c_str(), F_OK), 0) << "the check left " << fresh;
  std::ofstream(fresh) << "kept";
  EXPECT_TRUE(run_command_line({"-json", fresh}, config, status, out, err));
  std::string content;
  std::getline(std::ifstream(fresh), content);
  EXPECT_EQ(content, "kept");
  std::remove(fresh.c_str());
}

TEST(CommandLine, UsageText) {
  const std::string text = taskbench::usage_text("taskbench-serial");
  EXPECT_FALSE(text.empty());
  EXPECT_NE(text.find("-steps"), std::string::npos);
  EXPECT_NE(text.find("-and"), std::string::npos);
}

}  // namespace
