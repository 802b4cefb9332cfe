// A sweep's chart figures: series aligned on the sizes, speedups over eager, where fusion pays
// off, and the log2 axis.
#include <cmath>

#include <gtest/gtest.h>

#include "fusionscope/analysis/sweep_chart.h"

namespace fusionscope::analysis {
namespace {

std::vector<SweepSample> hidden_sweep() {
  // Eager and a fused variant: fusion loses at small sizes (launch-bound), wins from 1024 on.
  return {
      {256, "eager", 20e3, 5e3},      {256, "gated-gemm", 24e3, 3e3},
      {512, "eager", 30e3, 9e3},      {512, "gated-gemm", 31e3, 6e3},
      {1024, "eager", 60e3, 18e3},    {1024, "gated-gemm", 50e3, 12e3},
      {2048, "eager", 120e3, 36e3},   {2048, "gated-gemm", 90e3, 24e3},
      {4096, "eager", 240e3, 72e3},   {4096, "gated-gemm", 170e3, 48e3},
      {256, "pointwise-fused", 21e3}, {4096, "pointwise-fused", 200e3},
  };
}

TEST(SweepChart, SeriesAreAlignedOnTheSizes) {
  const SweepChart c = build_sweep_chart(hidden_sweep());
  ASSERT_EQ(c.sizes, (std::vector<double>{256, 512, 1024, 2048, 4096}));
  ASSERT_EQ(c.series.size(), 3u);
  EXPECT_EQ(c.series[0].name, "eager");
  EXPECT_EQ(c.series[2].name, "pointwise-fused");
  EXPECT_EQ(c.baseline, "eager");
  // pointwise-fused was measured at two sizes only.
  EXPECT_TRUE(std::isnan(c.series[2].time_ns[1]));
  EXPECT_DOUBLE_EQ(c.series[2].time_ns[4], 200e3);
  EXPECT_TRUE(std::isnan(c.series[2].bound_ns[0]));
  EXPECT_DOUBLE_EQ(c.series[1].speedup[4], 240.0 / 170.0);
  EXPECT_DOUBLE_EQ(c.series[0].speedup[2], 1.0);
  EXPECT_DOUBLE_EQ(c.min_time_ns, 3e3);
  EXPECT_DOUBLE_EQ(c.max_time_ns, 240e3);
  EXPECT_DOUBLE_EQ(c.max_speedup, 240.0 / 170.0);
  EXPECT_DOUBLE_EQ(c.min_speedup, 20.0 / 24.0);
}

TEST(SweepChart, FusionPaysOffFromTheSizeWhereItStartsWinningForGood) {
  const SweepChart c = build_sweep_chart(hidden_sweep());
  ASSERT_TRUE(c.pays_off_from.has_value());
  EXPECT_DOUBLE_EQ(*c.pays_off_from, 1024);
  EXPECT_EQ(c.best_at_largest, "gated-gemm");
  EXPECT_DOUBLE_EQ(c.best_speedup_at_largest, 240.0 / 170.0);
}

TEST(SweepChart, AWinThatDoesNotLastDoesNotCount) {
  const SweepChart c = build_sweep_chart({{256, "eager", 10},
                                          {256, "fused", 8},
                                          {512, "eager", 20},
                                          {512, "fused", 25},
                                          {1024, "eager", 40},
                                          {1024, "fused", 30}});
  EXPECT_DOUBLE_EQ(*c.pays_off_from, 1024);
  const SweepChart never = build_sweep_chart({{256, "eager", 10}, {256, "fused", 12}});
  EXPECT_FALSE(never.pays_off_from.has_value());
  EXPECT_EQ(never.best_at_largest, "fused");
}

TEST(SweepChart, FailedPointsAreGapsAndTheFirstSeriesIsTheBaselineWithoutEager) {
  const SweepChart c = build_sweep_chart({{64, "epilogue", 10},
                                          {64, "fully-fused", 0},
                                          {128, "epilogue", 20},
                                          {128, "fully-fused", 5}});
  EXPECT_EQ(c.baseline, "epilogue");
  EXPECT_TRUE(std::isnan(c.series[1].time_ns[0]));
  EXPECT_TRUE(std::isnan(c.series[1].speedup[0]));
  EXPECT_DOUBLE_EQ(c.series[1].speedup[1], 4.0);
  EXPECT_DOUBLE_EQ(*c.pays_off_from, 128);
}

TEST(SweepChart, NothingToDraw) {
  EXPECT_TRUE(build_sweep_chart({}).empty());
  EXPECT_TRUE(build_sweep_chart({{0, "eager", 10}}).empty());
}

TEST(Log2Axis, CoversThePowersOfTwoAroundTheRange) {
  const Log2Axis a = log2_axis(256, 8192);
  EXPECT_DOUBLE_EQ(a.lo_exp, 8);
  EXPECT_DOUBLE_EQ(a.hi_exp, 13);
  EXPECT_DOUBLE_EQ(a.fraction(256), 0);
  EXPECT_DOUBLE_EQ(a.fraction(8192), 1);
  EXPECT_DOUBLE_EQ(a.fraction(2048), 0.6);
  EXPECT_EQ(a.ticks().size(), 6u);
  const Log2Axis odd = log2_axis(300, 5000);
  EXPECT_DOUBLE_EQ(odd.lo_exp, 8);
  EXPECT_DOUBLE_EQ(odd.hi_exp, 13);
  const Log2Axis one = log2_axis(1024, 1024);
  EXPECT_DOUBLE_EQ(one.hi_exp - one.lo_exp, 1);
  EXPECT_LT(a.fraction(0), 0);
}

}  // namespace
}  // namespace fusionscope::analysis
