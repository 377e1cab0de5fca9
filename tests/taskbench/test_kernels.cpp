// Kernels of the Task Bench spec (section 6).
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/kernels.h"
#include "core/options.h"
#include "core/task_contract.h"
#include "core/task_graph.h"
#include "test_support.h"

namespace {

using taskbench::kScratchMarker;
using taskbench::TaskGraph;
using taskbench_test::parse;

uint64_t bits_of(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// ---------------------------------------------------------------------------
// busy_wait

int64_t busy_wait_chain(int64_t n) {
  int64_t a = 113;
  for (int64_t i = 0; i < n; ++i) a = (a * 139) % 2147483647;
  return a;
}

// OpenBLAS's thread pool is stopped at start-up (kernels.cpp): its threads
// would spin beside the benchmark's for the first 0.1 s of every run. This
// process runs no other thread (gtest runs the test on the main one).
TEST(Blas, NoBlasThreadRunsBesideTheProgram) {
  if (!taskbench::blas_available()) GTEST_SKIP() << "built without BLAS";
  size_t threads = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task"))
    ++threads;
  EXPECT_EQ(threads, 1u);
}

TEST(BusyWait, ReturnsTheIntegerChain) {
  EXPECT_EQ(taskbench::kernel_busy_wait(0), 113.0);
  EXPECT_EQ(taskbench::kernel_busy_wait(1), 113.0 * 139);
  EXPECT_EQ(taskbench::kernel_busy_wait(2), 113.0 * 139 * 139);
  for (int64_t n : {3, 5, 10, 100, 1000, 12345}) {
    EXPECT_EQ(taskbench::kernel_busy_wait(n), static_cast<double>(busy_wait_chain(n))) << n;
  }
}

// ---------------------------------------------------------------------------
// compute_bound / compute_bound2

TEST(ComputeBound, DeterministicAndDependsOnIterations) {
  std::vector<uint64_t> results;
  for (int64_t n = 0; n <= 3; ++n) {
    const double first = taskbench::kernel_compute_bound(n);
    const double second = taskbench::kernel_compute_bound(n);
    EXPECT_EQ(bits_of(first), bits_of(second)) << "N = " << n;
    results.push_back(bits_of(first));
  }
  for (size_t i = 0; i < results.size(); ++i)
    for (size_t j = i + 1; j < results.size(); ++j)
      EXPECT_NE(results[i], results[j]) << "N = " << i << " and N = " << j;
  // Large counts overflow to infinity; that is harmless but must not crash.
  EXPECT_EQ(bits_of(taskbench::kernel_compute_bound(5000)),
            bits_of(taskbench::kernel_compute_bound(5000)));
}

TEST(ComputeBound2, SumOfProducts) {
  std::vector<uint64_t> results;
  for (int64_t n : {0, 1, 2, 7, 1000}) {
    const double first = taskbench::kernel_compute_bound2(n);
    EXPECT_EQ(bits_of(first), bits_of(taskbench::kernel_compute_bound2(n))) << n;
    // 32 elements, each c += 1.2345 * 1.010101 N times.
    const double expected = 32.0 * static_cast<double>(n) * 1.2345 * 1.010101;
    EXPECT_NEAR(first, expected, 1e-9 * std::max(1.0, expected)) << n;
    results.push_back(bits_of(first));
  }
  for (size_t i = 0; i < results.size(); ++i)
    for (size_t j = i + 1; j < results.size(); ++j) EXPECT_NE(results[i], results[j]);
}

// ---------------------------------------------------------------------------
// memory_bound

// 8-byte aligned scratch filled with a byte pattern that differs everywhere.
std::vector<uint64_t> patterned(size_t bytes) {
  std::vector<uint64_t> words((bytes + 7) / 8 + 8);
  auto* p = reinterpret_cast<unsigned char*>(words.data());
  for (size_t i = 0; i < words.size() * 8; ++i) p[i] = static_cast<unsigned char>(i * 7 + 3);
  return words;
}

std::vector<unsigned char> bytes_of(const std::vector<uint64_t>& words, size_t offset,
                                    size_t bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(words.data()) + offset;
  return std::vector<unsigned char>(p, p + bytes);
}

struct MemoryCase {
  int64_t timestep;
  int64_t iterations;
  // Copies (src, dst, length) within the 64-byte scratch, in order.
  std::vector<std::array<size_t, 3>> copies;
};

// B = 64, S = 4: slices of 16 bytes. A run of k consecutive slices starting
// at slice s covers bytes [16 s, 16 (s + k)); its first half is copied onto
// its second half.
TEST(MemoryBound, CopyRuleOnHandComputedCases) {
  const MemoryCase cases[] = {
      // t = 0, N = 1: slice 0 alone.
      {0, 1, {{0, 8, 8}}},
      // t = 0, N = 2: slices 0-1 form one run of 32 bytes.
      {0, 2, {{0, 16, 16}}},
      // t = 1, N = 3: start slice 3; run {3}, then wrap: run {0, 1}.
      {1, 3, {{48, 56, 8}, {0, 16, 16}}},
      // t = 2, N = 3: start slice 2; run {2, 3}, then run {0}.
      {2, 3, {{32, 48, 16}, {0, 8, 8}}},
      // t = 0, N = 6: run {0, 1, 2, 3}, then run {0, 1}.
      {0, 6, {{0, 32, 32}, {0, 16, 16}}},
      // t = 1, N = 1: start slice 1.
      {1, 1, {{16, 24, 8}}},
      // N = 0: nothing.
      {3, 0, {}},
  };
  for (size_t base : {size_t{0}, size_t{8}}) {  // regions start 8-byte aligned
    for (const MemoryCase& c : cases) {
      std::vector<uint64_t> scratch = patterned(64 + base);
      std::vector<unsigned char> expected = bytes_of(scratch, base, 64);
      for (const auto& copy : c.copies)
        std::memmove(expected.data() + copy[1], expected.data() + copy[0], copy[2]);
      char* region = reinterpret_cast<char*>(scratch.data()) + base;
      taskbench::kernel_memory_bound(c.iterations, 4, c.timestep, region, 64);
      EXPECT_EQ(bytes_of(scratch, base, 64), expected)
          << "t " << c.timestep << " N " << c.iterations << " base " << base;
      // Nothing outside the region is touched.
      const std::vector<uint64_t> fresh = patterned(64 + base);
      EXPECT_EQ(bytes_of(scratch, 0, base), bytes_of(fresh, 0, base));
      EXPECT_EQ(bytes_of(scratch, base + 64, 64), bytes_of(fresh, base + 64, 64));
    }
  }
}

TEST(MemoryBound, LargerSlicesFollowTheSameRule) {
  // B = 4096, S = 8: slices of 512 bytes; t = 3, N = 5: start (15 mod 8) = 7.
  // Run {7} then run {0, 1, 2, 3}.
  std::vector<uint64_t> scratch = patterned(4096);
  std::vector<unsigned char> expected = bytes_of(scratch, 0, 4096);
  std::memmove(expected.data() + 7 * 512 + 256, expected.data() + 7 * 512, 256);
  std::memmove(expected.data() + 1024, expected.data(), 1024);
  taskbench::kernel_memory_bound(5, 8, 3, reinterpret_cast<char*>(scratch.data()), 4096);
  EXPECT_EQ(bytes_of(scratch, 0, 4096), expected);
}

TEST(MemoryBound, KeepsScratchMarker) {
  const size_t bytes = 65536;
  const int64_t samples = 16;
  std::vector<uint64_t> words(bytes / 8);
  char* scratch = reinterpret_cast<char*>(words.data());
  taskbench::prepare_scratch(scratch, bytes);
  for (int64_t iterations : {1, 5, 16, 37}) {
    for (int64_t t = 0; t < 10; ++t) {
      taskbench::kernel_memory_bound(iterations, samples, t, scratch, bytes);
      for (int64_t s = 0; s < samples; ++s)
        ASSERT_EQ(words[static_cast<size_t>(s) * bytes / samples / 8], kScratchMarker)
            << "slice " << s << " N " << iterations << " t " << t;
    }
  }
  for (uint64_t word : words) ASSERT_EQ(word, kScratchMarker);
}

TEST(MemoryBound, AcceptedConfigurationsKeepTheCheckedMarker) {
  // Spec 7.4: the marker in the first 8 bytes of a task's scratch survives
  // repeated executions of the memory kernel. Any configuration the option
  // parser accepts must keep it (small slices may instead be rejected).
  for (int64_t bytes : {64, 128, 192, 256, 392, 1024}) {
    for (int64_t samples : {1, 3, 4, 16}) {
      for (int64_t iterations : {1, 2, 3, 7}) {
        const std::string flags = "-kernel memory_bound -scratch " + std::to_string(bytes) +
                                  " -sample " + std::to_string(samples) + " -iter " +
                                  std::to_string(iterations);
        try {
          parse(flags);
        } catch (const taskbench::UsageError&) {
          continue;  // rejected up front: fine
        }
        std::vector<uint64_t> words(static_cast<size_t>(bytes) / 8);
        char* scratch = reinterpret_cast<char*>(words.data());
        taskbench::prepare_scratch(scratch, static_cast<size_t>(bytes));
        for (int64_t t = 0; t < 12; ++t) {
          taskbench::kernel_memory_bound(iterations, samples, t, scratch,
                                         static_cast<size_t>(bytes));
          ASSERT_EQ(words[0], kScratchMarker) << flags << " after t " << t;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// BLAS kernels

TEST(BlasKernels, RunWhenAvailableElseRejected) {
  const auto dgemm = parse("-kernel compute_dgemm -scratch 384 -iter 2");
  const auto daxpy = parse("-kernel memory_daxpy -scratch 1024 -sample 4 -iter 3");
  if (taskbench::blas_available()) {
    EXPECT_NO_THROW(taskbench::check_kernel_support(dgemm));
    EXPECT_NO_THROW(taskbench::check_kernel_support(daxpy));
    // n = floor(sqrt(384 / 24)) = 4: three 4x4 matrices fill the scratch.
    // All entries 0.5: after N = 2 products C = 0.5 + 2 * (4 * 0.25) = 2.5,
    // whichever third of the scratch holds C; A and B stay 0.5.
    std::vector<double> matrices(48, 0.5);
    const double result =
        taskbench::kernel_compute_dgemm(2, reinterpret_cast<char*>(matrices.data()), 384);
    EXPECT_TRUE(std::isfinite(result));
    EXPECT_EQ(std::count(matrices.begin(), matrices.end(), 2.5), 16);
    EXPECT_EQ(std::count(matrices.begin(), matrices.end(), 0.5), 32);
  } else {
    for (const auto* config : {&dgemm, &daxpy}) {
      try {
        taskbench::check_kernel_support(*config);
        ADD_FAILURE() << "BLAS kernel accepted without BLAS";
      } catch (const taskbench::UsageError& error) {
        EXPECT_FALSE(std::string(error.what()).empty());
      }
    }
  }
}

TEST(BlasKernels, DaxpyAddsFirstHalfOfTheSliceToTheSecond) {
  if (!taskbench::blas_available()) GTEST_SKIP() << "no BLAS in this build";
  // B = 64, S = 2: slices of 32 bytes = x[2], y[2]. t = 0, N = 1: slice 0.
  std::vector<double> scratch{1, 2, 3, 4, 5, 6, 7, 8};
  taskbench::kernel_memory_daxpy(1, 2, 0, reinterpret_cast<char*>(scratch.data()), 64);
  EXPECT_EQ(scratch, (std::vector<double>{1, 2, 4, 6, 5, 6, 7, 8}));
  // t = 1, N = 3: slices (3 + j) mod 2 = 1, 0, 1.
  std::vector<double> again{1, 2, 3, 4, 5, 6, 7, 8};
  taskbench::kernel_memory_daxpy(3, 2, 1, reinterpret_cast<char*>(again.data()), 64);
  EXPECT_EQ(again, (std::vector<double>{1, 2, 4, 6, 5, 6, 17, 20}));
}

TEST(BlasKernels, CheckKernelSupportAcceptsPortableKernels) {
  for (const char* flags :
       {"-kernel empty", "-kernel busy_wait -iter 3", "-kernel compute_bound -iter 3",
        "-kernel compute_bound2 -iter 3", "-kernel memory_bound -scratch 256 -iter 3",
        "-kernel load_imbalance -iter 3 -imbalance 1", "-kernel io_bound -iter 2"}) {
    EXPECT_NO_THROW(taskbench::check_kernel_support(parse(flags))) << flags;
  }
}

// ---------------------------------------------------------------------------
// io_bound

class IoBoundTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("TMPDIR");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    std::string pattern = (std::filesystem::temp_directory_path() / "taskbench-io-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    setenv("TMPDIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_old_)
      setenv("TMPDIR", old_.c_str(), 1);
    else
      unsetenv("TMPDIR");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  size_t entries() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir_)) ++n;
    return n;
  }

  std::string dir_;
  std::string old_;
  bool had_old_ = false;
};

TEST_F(IoBoundTest, RunsAndLeavesNoFileBehind) {
  EXPECT_EQ(entries(), 0u);
  taskbench::kernel_io_bound(8, 0, 0);
  taskbench::kernel_io_bound(3, 5, 2);
  EXPECT_EQ(entries(), 0u);
}

TEST_F(IoBoundTest, ThroughRunKernel) {
  const TaskGraph graph = parse("-kernel io_bound -iter 4").graphs[0];
  taskbench::run_kernel(graph, 1, 2, nullptr, 0);
  EXPECT_EQ(entries(), 0u);
  EXPECT_EQ(graph.task_flops(1, 2), 0);
  EXPECT_EQ(graph.task_bytes(1, 2), 0);
}

// ---------------------------------------------------------------------------
// gpu_compute_bound (the CPU reference of the GPU kernel)

// One lane, written out plainly: kGpuChains chains of x = x*x + x (one FMA).
double gpu_lane(int64_t lane, int64_t iterations) {
  double sum = 0.0;
  for (int c = 0; c < taskbench::kGpuChains; ++c) {
    double x = taskbench::gpu_chain_start(lane, c);
    for (int64_t i = 0; i < iterations; ++i) x = std::fma(x, x, x);
    sum += x;
  }
  return sum;
}

TEST(GpuComputeBound, StartingValuesAreSmallNegativeAndDistinctPerChain) {
  for (int64_t lane = 0; lane < 300; ++lane) {
    for (int c = 0; c < taskbench::kGpuChains; ++c) {
      const double x = taskbench::gpu_chain_start(lane, c);
      EXPECT_GE(x, -0.5);
      EXPECT_LT(x, 0.0);
    }
    EXPECT_NE(taskbench::gpu_chain_start(lane, 0), taskbench::gpu_chain_start(lane, 1));
  }
  EXPECT_EQ(taskbench::gpu_chain_start(0, 0), -0.5 / 1024);
  EXPECT_EQ(taskbench::gpu_chain_start(0, 1), -1.0 / 1024);
}

TEST(GpuComputeBound, ZeroIterationsSumsTheStartingValues) {
  double expected = 0.0;
  for (int64_t lane = 0; lane < 5; ++lane)
    for (int c = 0; c < taskbench::kGpuChains; ++c) expected += taskbench::gpu_chain_start(lane, c);
  EXPECT_DOUBLE_EQ(taskbench::kernel_gpu_compute_bound(5, 0), expected);
}

TEST(GpuComputeBound, MatchesThePlainArithmeticLaneByLane) {
  // 37 lanes: two full groups of 16 and a partial one.
  for (const int64_t iterations : {1, 2, 7, 100}) {
    double expected = 0.0;
    for (int64_t lane = 0; lane < 37; ++lane) expected += gpu_lane(lane, iterations);
    EXPECT_NEAR(taskbench::kernel_gpu_compute_bound(37, iterations), expected,
                1e-12 * std::fabs(expected))
        << iterations;
  }
}

TEST(GpuComputeBound, ValuesStayFiniteAndNormal) {
  // x*x + x keeps every chain in (-1, 0): no overflow, no subnormals.
  for (int c = 0; c < taskbench::kGpuChains; ++c) {
    double x = taskbench::gpu_chain_start(3, c);
    for (int64_t i = 0; i < 1000000; ++i) x = std::fma(x, x, x);
    EXPECT_TRUE(std::isnormal(x)) << x;
    EXPECT_LT(x, 0.0);
    EXPECT_GT(x, -1e-5);
  }
  EXPECT_TRUE(std::isfinite(taskbench::kernel_gpu_compute_bound(64, 100000)));
}

// ---------------------------------------------------------------------------
// run_kernel dispatch

TEST(RunKernel, DispatchesWithTaskIterations) {
  {
    const TaskGraph g = parse("-kernel busy_wait -iter 10").graphs[0];
    EXPECT_EQ(taskbench::run_kernel(g, 0, 0, nullptr, 0), taskbench::kernel_busy_wait(10));
  }
  {
    const TaskGraph g = parse("-kernel compute_bound -iter 3").graphs[0];
    EXPECT_EQ(bits_of(taskbench::run_kernel(g, 1, 1, nullptr, 0)),
              bits_of(taskbench::kernel_compute_bound(3)));
  }
  {
    const TaskGraph g = parse("-kernel compute_bound2 -iter 5").graphs[0];
    EXPECT_EQ(bits_of(taskbench::run_kernel(g, 1, 1, nullptr, 0)),
              bits_of(taskbench::kernel_compute_bound2(5)));
  }
  {
    // load_imbalance = compute_bound with N_task.
    const TaskGraph g = parse("-kernel load_imbalance -iter 4 -imbalance 1.0 -steps 3").graphs[0];
    for (int64_t t = 0; t < 3; ++t) {
      for (int64_t p = 0; p < 4; ++p) {
        EXPECT_EQ(bits_of(taskbench::run_kernel(g, t, p, nullptr, 0)),
                  bits_of(taskbench::kernel_compute_bound(g.task_iterations(t, p))))
            << "t " << t << " p " << p;
      }
    }
  }
  {
    const TaskGraph g = parse("-kernel empty").graphs[0];
    taskbench::run_kernel(g, 0, 0, nullptr, 0);
  }
  {
    const TaskGraph g = parse("-kernel gpu_compute_bound -gpu-lanes 20 -iter 6").graphs[0];
    EXPECT_EQ(bits_of(taskbench::run_kernel(g, 1, 2, nullptr, 0)),
              bits_of(taskbench::kernel_gpu_compute_bound(20, 6)));
  }
  {
    const TaskGraph g = parse("-kernel memory_bound -scratch 64 -sample 4 -iter 3").graphs[0];
    std::vector<uint64_t> a = patterned(64), b = patterned(64);
    taskbench::run_kernel(g, 1, 0, reinterpret_cast<char*>(a.data()), 64);
    taskbench::kernel_memory_bound(3, 4, 1, reinterpret_cast<char*>(b.data()), 64);
    EXPECT_EQ(a, b);
  }
}

}  // namespace
