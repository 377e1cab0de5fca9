// Deterministic random numbers (spec section 5) and the load_imbalance
// iteration counts that depend on them (spec section 6).
#include <gtest/gtest.h>

#include <cstdint>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/task_graph.h"
#include "test_support.h"

namespace {

using taskbench::TaskGraph;
using taskbench_test::parse;

struct HashCase {
  std::vector<int64_t> args;
  uint64_t hash;
  double u;
};

const HashCase kHashCases[] = {
    {{0, 0, 0}, 0xefe88ae871c90c00ULL, 0.9371420686236756},
    {{0, 0, 1}, 0x1e8c9583434cc332ULL, 0.11933264212284471},
    {{0, 1, 0}, 0xb227bafabdd65d2aULL, 0.6959187376176827},
    {{1, 0, 0}, 0x931d38d7577a3841ULL, 0.5746646428810686},
    {{1, 2, 3}, 0x867434afb9d3285eULL, 0.5252106598871477},
    {{0, 5, 0, 0, 1}, 0x7be9ac12e7bf995cULL, 0.4840343042521894},
    {{0, 5, 0, 1, 0}, 0x9931d7bdd59ac192ULL, 0.598416789861953},
    {{0, 3, 1, 2, 3}, 0x3920a60496ef1dbeULL, 0.223154426689629},
    {{1, 5, 2, 4, 4}, 0x1d9a3df71ae76ec7ULL, 0.11563479693259436},
};

constexpr uint64_t kKey0 = 0x0807060504030201ULL;
constexpr uint64_t kKey1 = 0x000F0E0D0C0B0A09ULL;

TEST(SipHash, SpecTableViaTaskbenchHash) {
  for (const HashCase& c : kHashCases) {
    EXPECT_EQ(taskbench::taskbench_hash(c.args.data(), c.args.size()), c.hash)
        << "args of size " << c.args.size() << " starting " << c.args[0];
  }
}

TEST(SipHash, SpecTableViaRawSiphashOfLittleEndianBytes) {
  for (const HashCase& c : kHashCases) {
    std::vector<unsigned char> bytes;
    for (int64_t value : c.args) {
      const auto u = static_cast<uint64_t>(value);
      for (int b = 0; b < 8; ++b) bytes.push_back(static_cast<unsigned char>(u >> (8 * b)));
    }
    EXPECT_EQ(taskbench::siphash24(bytes.data(), bytes.size(), kKey0, kKey1), c.hash);
  }
}

TEST(SipHash, StandardSipHashVectorWithReferenceKey) {
  // The SipHash-2-4 paper's test key is 00 01 .. 0F; its 64-bit output for
  // the empty message is 0x726fdb47dd0e0e31 and for 00 01 .. 0E is
  // 0xa129ca6149be45e5. These pin down the plain algorithm independently of
  // Task Bench's key.
  const uint64_t k0 = 0x0706050403020100ULL;
  const uint64_t k1 = 0x0F0E0D0C0B0A0908ULL;
  EXPECT_EQ(taskbench::siphash24(nullptr, 0, k0, k1), 0x726fdb47dd0e0e31ULL);
  unsigned char message[15];
  for (int i = 0; i < 15; ++i) message[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(taskbench::siphash24(message, 15, k0, k1), 0xa129ca6149be45e5ULL);
}

TEST(Uniform, SpecTable) {
  for (const HashCase& c : kHashCases) {
    const double u = taskbench::taskbench_random(c.args.data(), c.args.size());
    EXPECT_DOUBLE_EQ(u, c.u);
    // U is exactly double(h) * 2^-64.
    EXPECT_EQ(u, static_cast<double>(c.hash) * 0x1p-64);
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
  EXPECT_DOUBLE_EQ(taskbench::taskbench_random({0, 0, 0}), 0.9371420686236756);
  EXPECT_DOUBLE_EQ(taskbench::taskbench_random({1, 5, 2, 4, 4}), 0.11563479693259436);
}

TEST(Uniform, NegativeArgumentsAreSignExtended) {
  // Arguments are signed 64-bit little endian: -1 is eight 0xff bytes.
  const int64_t args[] = {-1, 2};
  unsigned char bytes[16];
  std::memset(bytes, 0xff, 8);
  bytes[8] = 2;
  std::memset(bytes + 9, 0, 7);
  EXPECT_EQ(taskbench::taskbench_hash(args, 2), taskbench::siphash24(bytes, 16, kKey0, kKey1));
}

// Spec 6: N_task for N = 1000, X = 0.5.
TEST(LoadImbalance, SpecTableGraph0AndGraph1) {
  const auto config = parse(
      "-kernel load_imbalance -iter 1000 -imbalance 0.5 -and -kernel load_imbalance -iter 1000 "
      "-imbalance 0.5");
  ASSERT_EQ(config.graphs.size(), 2u);
  const TaskGraph& g0 = config.graphs[0];
  const TaskGraph& g1 = config.graphs[1];
  const int64_t expected[2][2][4] = {
      {{1219, 810, 1165, 1242}, {1098, 875, 990, 1019}},
      {{1037, 1071, 1158, 760}, {1033, 962, 1220, 1244}},
  };
  for (int64_t t = 0; t < 2; ++t) {
    for (int64_t p = 0; p < 4; ++p) {
      EXPECT_EQ(g0.task_iterations(t, p), expected[0][t][p]) << "g 0 t " << t << " p " << p;
      EXPECT_EQ(g1.task_iterations(t, p), expected[1][t][p]) << "g 1 t " << t << " p " << p;
      EXPECT_EQ(g0.task_flops(t, p), 128 * expected[0][t][p] + 64);
      EXPECT_EQ(g1.task_flops(t, p), 128 * expected[1][t][p] + 64);
    }
  }
}

TEST(LoadImbalance, MatchesFormulaForAllTasks) {
  // N_task = round_half_away((1 + (U(g,t,p) - 0.5) * X) * N), with U taken
  // from the spec-checked taskbench_random.
  const auto config = parse(
      "-kernel load_imbalance -iter 4096 -imbalance 1.0 -steps 6 -width 5 -and -kernel "
      "load_imbalance -iter 333 -imbalance 2 -steps 6 -width 5");
  for (const TaskGraph& g : config.graphs) {
    for (int64_t t = 0; t < 6; ++t) {
      for (int64_t p = 0; p < 5; ++p) {
        const double u = taskbench::taskbench_random({g.graph_index, t, p});
        const double scaled = (1.0 + (u - 0.5) * g.kernel.imbalance) *
                              static_cast<double>(g.kernel.iterations);
        const auto expected = static_cast<int64_t>(std::llround(scaled));
        EXPECT_EQ(g.task_iterations(t, p), expected)
            << "g " << g.graph_index << " t " << t << " p " << p;
      }
    }
  }
}

TEST(LoadImbalance, ZeroImbalanceGivesExactlyN) {
  const TaskGraph g = parse("-kernel load_imbalance -iter 777 -steps 5 -width 6").graphs[0];
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t p = 0; p < 6; ++p) EXPECT_EQ(g.task_iterations(t, p), 777);
  EXPECT_EQ(g.total_flops(), 30 * (128 * 777 + 64));
}

TEST(LoadImbalance, OtherKernelsIgnoreImbalance) {
  const TaskGraph g = parse("-kernel compute_bound -iter 100 -imbalance 1.5").graphs[0];
  for (int64_t p = 0; p < 4; ++p) EXPECT_EQ(g.task_iterations(1, p), 100);
  EXPECT_EQ(g.total_flops(), 16 * (128 * 100 + 64));
}

}  // namespace
