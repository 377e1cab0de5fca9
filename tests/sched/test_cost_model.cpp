// sched::CostModel: task durations (hint, measured moving average, default)
// and transfer times (latency + bytes / bandwidth).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>

#include "sched/cost_model.h"

namespace {

using taskgrid::sched::CostModel;

TEST(CostModel, UnknownFunctionUsesTheDefault) {
  const CostModel costs(1e-6, 1e9);
  EXPECT_EQ(costs.task_seconds(42, 0), CostModel::kUnknownTaskSeconds);
  EXPECT_GT(CostModel::kUnknownTaskSeconds, 0.0);  // unknown tasks still spread
}

TEST(CostModel, CostHintWins) {
  CostModel costs(1e-6, 1e9);
  EXPECT_DOUBLE_EQ(costs.task_seconds(42, 0.5), 0.5);  // unknown function
  costs.record_duration(42, 2.0);
  EXPECT_DOUBLE_EQ(costs.task_seconds(42, 0.5), 0.5);  // measured one
  EXPECT_DOUBLE_EQ(costs.task_seconds(42, 3.0), 3.0);
  // Only a positive hint counts.
  EXPECT_DOUBLE_EQ(costs.task_seconds(42, 0.0), 2.0);
  EXPECT_DOUBLE_EQ(costs.task_seconds(42, -1.0), 2.0);
  EXPECT_EQ(costs.task_seconds(7, -1.0), CostModel::kUnknownTaskSeconds);
}

TEST(CostModel, FirstSampleIsTheEstimate) {
  CostModel costs(0, 1);
  costs.record_duration(1, 0.25);
  EXPECT_DOUBLE_EQ(costs.task_seconds(1, 0), 0.25);
}

TEST(CostModel, MovingAverageConvergesTowardRepeatedSamples) {
  CostModel costs(0, 1);
  costs.record_duration(1, 1.0);
  double previous = costs.task_seconds(1, 0);
  for (int i = 0; i < 200; ++i) {
    costs.record_duration(1, 3.0);
    const double now = costs.task_seconds(1, 0);
    EXPECT_GT(now, previous - 1e-15) << "sample " << i;  // moves toward 3
    EXPECT_LE(now, 3.0 + 1e-12) << "an average never overshoots";
    previous = now;
  }
  EXPECT_NEAR(costs.task_seconds(1, 0), 3.0, 1e-3);
  // And back down.
  for (int i = 0; i < 200; ++i) costs.record_duration(1, 0.5);
  EXPECT_NEAR(costs.task_seconds(1, 0), 0.5, 1e-3);
}

TEST(CostModel, OneOutlierMovesTheAverageOnlyPartly) {
  CostModel costs(0, 1);
  for (int i = 0; i < 50; ++i) costs.record_duration(1, 1.0);
  costs.record_duration(1, 101.0);
  const double estimate = costs.task_seconds(1, 0);
  EXPECT_GT(estimate, 1.0);
  EXPECT_LT(estimate, 101.0);
}

TEST(CostModel, FunctionsAreMeasuredSeparately) {
  CostModel costs(0, 1);
  costs.record_duration(1, 1.0);
  costs.record_duration(2, 5.0);
  EXPECT_DOUBLE_EQ(costs.task_seconds(1, 0), 1.0);
  EXPECT_DOUBLE_EQ(costs.task_seconds(2, 0), 5.0);
  EXPECT_EQ(costs.task_seconds(3, 0), CostModel::kUnknownTaskSeconds);
}

// The model remembers the function it updated last: interleaving others
// must neither mix their averages nor lose an update.
TEST(CostModel, InterleavedFunctionsKeepTheirOwnAverages) {
  CostModel costs(1e-6, 1e9);
  CostModel reference_a(1e-6, 1e9), reference_b(1e-6, 1e9);
  const double samples[] = {1.0, 3.0, 2.0, 8.0, 0.5, 4.0};
  for (size_t i = 0; i < std::size(samples); ++i) {
    const uint32_t function = i % 3 == 0 ? 7 : 9;
    costs.record_duration(function, samples[i]);
    (function == 7 ? reference_a : reference_b).record_duration(1, samples[i]);
    EXPECT_DOUBLE_EQ(costs.task_seconds(7, 0), reference_a.task_seconds(1, 0)) << "sample " << i;
    EXPECT_DOUBLE_EQ(costs.task_seconds(9, 0), reference_b.task_seconds(1, 0)) << "sample " << i;
  }
  EXPECT_EQ(costs.task_seconds(11, 0), CostModel::kUnknownTaskSeconds);
}

TEST(CostModel, TransferIsLatencyPlusBytesOverBandwidth) {
  const CostModel costs(2e-6, 1e9);
  EXPECT_DOUBLE_EQ(costs.latency(), 2e-6);
  EXPECT_DOUBLE_EQ(costs.bandwidth(), 1e9);
  EXPECT_DOUBLE_EQ(costs.transfer_seconds(0), 2e-6);
  EXPECT_DOUBLE_EQ(costs.transfer_seconds(1000), 2e-6 + 1e-6);
  EXPECT_DOUBLE_EQ(costs.transfer_seconds(1000000000), 1.0 + 2e-6);
  const CostModel slow(1.0, 100.0);
  EXPECT_DOUBLE_EQ(slow.transfer_seconds(50), 1.5);
  EXPECT_DOUBLE_EQ(slow.transfer_seconds(size_t{1} << 40),
                   1.0 + static_cast<double>(size_t{1} << 40) / 100.0);
}

}  // namespace

TEST(CostModel, KeepsCpuAndDeviceDurationsApart) {
  using taskgrid::sched::Executor;
  CostModel costs(0, 1);
  costs.record_duration(3, 2.0, Executor::cpu);
  EXPECT_TRUE(costs.measured(3, Executor::cpu));
  EXPECT_FALSE(costs.measured(3, Executor::device));
  EXPECT_EQ(costs.task_seconds(3, 0, Executor::device), CostModel::kUnknownTaskSeconds);
  costs.record_duration(3, 0.5, Executor::device);
  // Alternating samples do not mix (the cached last mean follows the key).
  costs.record_duration(3, 2.0, Executor::cpu);
  EXPECT_DOUBLE_EQ(costs.task_seconds(3, 0, Executor::cpu), 2.0);
  EXPECT_DOUBLE_EQ(costs.task_seconds(3, 0, Executor::device), 0.5);
  EXPECT_DOUBLE_EQ(costs.task_seconds(3, 0), 2.0);  // the CPU's by default
  EXPECT_GT(costs.device_transfer_seconds(1 << 20), costs.device_transfer_seconds(0));
}

TEST(CostModel, UsesTheMeasuredDeviceLink) {
  CostModel costs(0, 1);
  // Assumed until measured: 10 us + 16 GB/s.
  EXPECT_DOUBLE_EQ(costs.device_transfer_seconds(16'000'000),
                   CostModel::kDeviceLatencySeconds + 16e6 / CostModel::kDeviceBandwidth);
  costs.set_device_link(1e-3, 1e6);
  EXPECT_DOUBLE_EQ(costs.device_transfer_seconds(2'000'000), 1e-3 + 2.0);
  costs.set_device_link(5.0, 0);  // not measured: kept
  EXPECT_DOUBLE_EQ(costs.device_transfer_seconds(0), 1e-3);
}
