#include "fusionscope/analysis/histogram.h"

#include <gtest/gtest.h>

namespace fusionscope::analysis {
namespace {

TEST(Histogram, EveryValueLandsInOneBin) {
  const std::vector<double> v = {10, 11, 12, 19, 20};
  const HistogramRange r = histogram_range(v);
  EXPECT_FALSE(r.log);
  const Histogram h = make_histogram(v, r, 5);
  EXPECT_EQ(h.total(), 5u);
  EXPECT_EQ(h.counts.front(), 2u);  // 10 and 11 in [10, 12)
  EXPECT_EQ(h.counts.back(), 2u);   // the largest values in the last bin
  EXPECT_EQ(h.max_count(), 2u);
}

TEST(Histogram, ASharedRangeOverlaysTwoSetsBinForBin) {
  const std::vector<double> a = {100, 110, 120}, b = {40, 45};
  const HistogramRange r = histogram_range(a, b);
  EXPECT_DOUBLE_EQ(r.lo, 40);
  EXPECT_GE(r.hi, 120);
  const Histogram ha = make_histogram(a, r, 8), hb = make_histogram(b, r, 8);
  EXPECT_EQ(ha.total(), 3u);
  EXPECT_EQ(hb.total(), 2u);
  EXPECT_EQ(hb.counts[0], 2u);
  EXPECT_EQ(ha.counts[6], 1u);  // 100 in [100, 110)
  EXPECT_EQ(ha.counts[7], 2u);  // 110 and 120 in the last bin
}

TEST(Histogram, WideSpreadsUseLogBins) {
  const std::vector<double> v = {1e3, 2e3, 1e6};
  const HistogramRange r = histogram_range(v);
  EXPECT_TRUE(r.log);
  const Histogram h = make_histogram(v, r, 3);  // one decade per bin
  EXPECT_EQ(h.counts[0], 2u);
  EXPECT_EQ(h.counts[2], 1u);
  EXPECT_NEAR(r.edge(1, 3), 1e4, 1e-6 * 1e4);
}

TEST(Histogram, OneValueAndNoValues) {
  const std::vector<double> one = {5};
  const Histogram h = make_histogram(one, histogram_range(one), 4);
  EXPECT_EQ(h.total(), 1u);
  const Histogram none = make_histogram({}, histogram_range({}), 4);
  EXPECT_EQ(none.total(), 0u);
}

}  // namespace
}  // namespace fusionscope::analysis
