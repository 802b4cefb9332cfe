#include "fusionscope/analysis/format.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace fusionscope::analysis {
namespace {

TEST(FormatDuration, PicksTheUnitAndThreeDigits) {
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(850), "850 ns");
  EXPECT_EQ(format_duration(1'234), "1.23 us");
  EXPECT_EQ(format_duration(12'345), "12.3 us");
  EXPECT_EQ(format_duration(263'400), "263 us");
  EXPECT_EQ(format_duration(1'500'000), "1.50 ms");
  EXPECT_EQ(format_duration(4'560'000'000.0), "4.56 s");
  EXPECT_EQ(format_duration(-2'000), "-2.00 us");
}

TEST(FormatDuration, RoundingDoesNotPrintTenOfAUnit) {
  // 9.996 us rounds to "10.0 us", not "10.00 us".
  EXPECT_EQ(format_duration(9'996), "10.0 us");
  EXPECT_EQ(format_duration(99'960), "100 us");
}

TEST(FormatDuration, FixedDecimalsAndNonFinite) {
  EXPECT_EQ(format_duration(61'300, 1), "61.3 us");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::quiet_NaN()), "-");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "-");
}

TEST(FormatCount, ThousandsSeparators) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_count(1'000), "1,000");
  EXPECT_EQ(format_count(10'000'000), "10,000,000");
}

TEST(FormatBytes, DecimalUnits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1'500), "1.50 kB");
  EXPECT_EQ(format_bytes(33'200'000), "33.2 MB");
  EXPECT_EQ(format_bytes(392e6), "392 MB");
}

TEST(FormatRates, BandwidthInTbOrGbPerSecond) {
  EXPECT_EQ(format_bandwidth(2.818e12), "2.82 TB/s");
  EXPECT_EQ(format_bandwidth(640e9), "640 GB/s");
  EXPECT_EQ(format_bandwidth(std::numeric_limits<double>::quiet_NaN()), "-");
}

TEST(FormatRates, FlopRateKeepsThreeDigits) {
  EXPECT_EQ(format_flop_rate(808e12), "808 TFLOP/s");
  EXPECT_EQ(format_flop_rate(6.1e12), "6.1 TFLOP/s");
  EXPECT_EQ(format_flop_rate(500e9), "500 GFLOP/s");
}

TEST(FormatFlops, DecimalUnits) {
  EXPECT_EQ(format_flops(0), "0 FLOP");
  EXPECT_EQ(format_flops(1.2e3), "1.20 kFLOP");
  EXPECT_EQ(format_flops(1.21e9), "1.21 GFLOP");
  EXPECT_EQ(format_flops(38.7e12), "38.7 TFLOP");
  EXPECT_EQ(format_flops(412e12), "412 TFLOP");
}

TEST(FormatPercent, SmallSharesKeepADecimal) {
  EXPECT_EQ(format_percent(0.42), "42%");
  EXPECT_EQ(format_percent(1.0), "100%");
  EXPECT_EQ(format_percent(0.042), "4.2%");
  // 9.96% would print "10.0%" with a decimal: it takes the whole-number form.
  EXPECT_EQ(format_percent(0.0996), "10%");
  EXPECT_EQ(format_percent(0.714, 1), "71.4%");
  EXPECT_EQ(format_percent(std::numeric_limits<double>::infinity()), "-");
}

TEST(FormatFactor, OneDecimalBelowTen) {
  EXPECT_EQ(format_factor(1.34), "1.3x");
  EXPECT_EQ(format_factor(12.4), "12x");
  EXPECT_EQ(format_factor(9.97), "10x");
  EXPECT_EQ(format_factor(1.172, 2), "1.17x");
}

}  // namespace
}  // namespace fusionscope::analysis
