#include "fusionscope/analysis/roofline.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace fusionscope::analysis {
namespace {

KernelTraffic kernel(double bytes, double flops, int64_t ns) {
  KernelTraffic k;
  k.dram_read = bytes;
  k.flops = flops;
  k.duration_ns = ns;
  return k;
}

TEST(Roofline, PointsFromMeasuredFlopsBytesAndTime) {
  RunTraffic t;
  t.kernels = {kernel(78e6, 3.87e10, 60'000),  // a GEMM: ~500 FLOP/byte
               kernel(97e6, 2.3e8, 40'000),    // gelu: ~2 FLOP/byte
               kernel(1e6, 0, 1'000),          // a copy: no FLOPs, not on the chart
               kernel(0, 1e6, 1'000)};         // no bytes: no intensity
  Ceilings c;
  c.bandwidth = 2820e9;
  c.tensor_flops = 788e12;
  size_t left_out = 0;
  const std::vector<RooflinePoint> p = roofline_points(t, c, &left_out);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(left_out, 2u);
  EXPECT_EQ(p[0].traffic, 0u);
  EXPECT_NEAR(p[0].intensity, 3.87e10 / 78e6, 1e-9);
  EXPECT_NEAR(p[0].flop_rate, 3.87e10 / 60e-6, 1.0);
  EXPECT_FALSE(p[0].memory_bound);  // 496 FLOP/byte is right of the 279 ridge
  EXPECT_DOUBLE_EQ(p[0].attainable, 788e12);
  EXPECT_TRUE(p[1].memory_bound);
  EXPECT_NEAR(p[1].attainable, 2820e9 * 2.3e8 / 97e6, 1.0);
  EXPECT_LE(p[1].flop_rate, p[1].attainable);
}

TEST(Roofline, WithoutCeilingsNothingIsBoundOrAttainable) {
  RunTraffic t;
  t.kernels = {kernel(1e6, 1e9, 1000)};
  const auto p = roofline_points(t, Ceilings{});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_FALSE(p[0].memory_bound);
  EXPECT_EQ(p[0].attainable, 0.0);
}

TEST(LogAxis, DecadesEncloseTheValues) {
  const std::vector<double> v = {0.5, 2.0, 350.0, -1.0, 0.0, std::nan("")};
  const LogRange r = log_range(v);
  EXPECT_EQ(r.lo, -1);
  EXPECT_EQ(r.hi, 3);
  EXPECT_DOUBLE_EQ(r.min(), 0.1);
  EXPECT_DOUBLE_EQ(r.max(), 1000.0);
  EXPECT_DOUBLE_EQ(r.fraction(0.1), 0.0);
  EXPECT_DOUBLE_EQ(r.fraction(1000.0), 1.0);
  EXPECT_NEAR(r.fraction(10.0), 0.5, 1e-12);
}

TEST(LogAxis, NarrowOrEmptyDataStillSpansTheMinimum) {
  const std::vector<double> one = {5.0};
  const LogRange r = log_range(one, 3);
  EXPECT_EQ(r.hi - r.lo, 3);
  EXPECT_LE(r.min(), 5.0);
  EXPECT_GE(r.max(), 5.0);
  const LogRange e = log_range(std::vector<double>{}, 2);
  EXPECT_EQ(e.hi - e.lo, 2);
  const std::vector<double> exact = {10.0, 10.0};
  const LogRange x = log_range(exact, 1);
  EXPECT_LE(x.min(), 10.0);
  EXPECT_GT(x.max(), x.min());
}

}  // namespace
}  // namespace fusionscope::analysis
