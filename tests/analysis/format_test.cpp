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

}  // namespace
}  // namespace fusionscope::analysis
