#include "fusionscope/analysis/series.h"

#include <gtest/gtest.h>

#include "sample/run_builder.h"

namespace fusionscope::analysis {
namespace {

constexpr const char* kRead = "dram__bytes_read.sum.per_second";
constexpr const char* kWrite = "dram__bytes_write.sum.per_second";

storage::RunData sampled(bool with_total) {
  sample::RunBuilder b;
  for (int i = 0; i < 10; ++i) {
    const int64_t t = 1000 + i * 100;
    b.sample(t, kRead, 1e12 * i);
    b.sample(t, kWrite, 0.5e12 * i);
    if (with_total) b.sample(t, "fusionscope/dram_bandwidth", 1.5e12 * i);
    b.sample(t, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", 10.0 * i);
  }
  b.sample(500, "some_other_metric", 1.0);
  return b.finish();
}

TEST(Series, PicksOutTheKnownSeriesInTimeOrder) {
  const storage::RunData run = sampled(true);
  const PmSeries s = pm_series(run);
  ASSERT_EQ(s.dram_read.size(), 10u);
  ASSERT_EQ(s.dram_write.size(), 10u);
  ASSERT_EQ(s.dram_total.size(), 10u);
  ASSERT_EQ(s.sm_active.size(), 10u);
  EXPECT_TRUE(s.tensor_active.empty());
  EXPECT_TRUE(s.has_activity());
  EXPECT_FALSE(s.empty());
  for (size_t i = 1; i < s.dram_read.size(); ++i)
    EXPECT_LT(s.dram_read[i - 1].t_ns, s.dram_read[i].t_ns);
  EXPECT_DOUBLE_EQ(s.max_dram_total(), 13.5e12);
}

TEST(Series, TotalIsReadPlusWriteWhenNotStored) {
  const PmSeries s = pm_series(sampled(false));
  ASSERT_EQ(s.dram_total.size(), 10u);
  EXPECT_DOUBLE_EQ(s.dram_total[4].value, 6e12);
  EXPECT_EQ(s.dram_total[4].t_ns, 1400);
}

TEST(Series, RunWithoutSamplesIsEmpty) {
  sample::RunBuilder b;
  b.kernel(0, 10, "k");
  const PmSeries s = pm_series(b.finish());
  EXPECT_TRUE(s.empty());
  EXPECT_FALSE(s.has_activity());
}

TEST(Series, BinsHoldMinMaxAndMeanPerColumn) {
  const storage::RunData run = sampled(true);
  const PmSeries s = pm_series(run);
  std::vector<SeriesBin> bins;
  // [1000, 2000) in 5 columns of 200 ns: two samples each.
  bin_series(s.dram_read, 1000, 2000, 5, bins);
  ASSERT_EQ(bins.size(), 5u);
  for (int c = 0; c < 5; ++c) {
    EXPECT_EQ(bins[c].count, 2u);
    EXPECT_DOUBLE_EQ(bins[c].min, 1e12 * (2 * c));
    EXPECT_DOUBLE_EQ(bins[c].max, 1e12 * (2 * c + 1));
    EXPECT_DOUBLE_EQ(bins[c].mean, 1e12 * (2 * c + 0.5));
  }
  // A window with more columns than samples leaves empty columns empty.
  bin_series(s.dram_read, 1000, 1100, 10, bins);
  EXPECT_EQ(bins[0].count, 1u);
  for (int c = 1; c < 10; ++c) EXPECT_EQ(bins[c].count, 0u);
  // A window outside the samples, and degenerate windows.
  bin_series(s.dram_read, 5000, 6000, 4, bins);
  for (const SeriesBin& b : bins) EXPECT_EQ(b.count, 0u);
  bin_series(s.dram_read, 2000, 1000, 4, bins);
  ASSERT_EQ(bins.size(), 4u);
  bin_series(s.dram_read, 1000, 2000, 0, bins);
  EXPECT_TRUE(bins.empty());
}

TEST(Series, NearestSampleByTime) {
  const PmSeries s = pm_series(sampled(true));
  EXPECT_EQ(nearest_sample(s.dram_read, 0)->t_ns, 1000);
  EXPECT_EQ(nearest_sample(s.dram_read, 1149)->t_ns, 1100);
  EXPECT_EQ(nearest_sample(s.dram_read, 1151)->t_ns, 1200);
  EXPECT_EQ(nearest_sample(s.dram_read, 1e9)->t_ns, 1900);
  EXPECT_EQ(nearest_sample({}, 5), nullptr);
}

}  // namespace
}  // namespace fusionscope::analysis
