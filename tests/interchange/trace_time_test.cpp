// Microsecond text -> nanoseconds: exact where a double would not be, rounded, range-checked.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "trace_time.h"

namespace {

using fusionscope::interchange::detail::micros_text_to_ns;
using fusionscope::interchange::detail::micros_to_ns;

TEST(TraceTime, DecimalTextConvertsExactly) {
  // 16 significant digits: a double cannot hold this timestamp to the nanosecond.
  EXPECT_EQ(micros_text_to_ns("4489001737194.828"), int64_t{4489001737194828});
  EXPECT_EQ(micros_text_to_ns("4489001737194.829"), int64_t{4489001737194829});
  EXPECT_EQ(micros_text_to_ns("57.25"), int64_t{57250});
  EXPECT_EQ(micros_text_to_ns("0.735"), int64_t{735});
  EXPECT_EQ(micros_text_to_ns("12"), int64_t{12000});
  EXPECT_EQ(micros_text_to_ns("-1.5"), int64_t{-1500});
  EXPECT_EQ(micros_text_to_ns("-0.000"), int64_t{0});
}

TEST(TraceTime, ExtraDigitsRoundHalfAwayFromZero) {
  EXPECT_EQ(micros_text_to_ns("0.0005"), int64_t{1});
  EXPECT_EQ(micros_text_to_ns("0.0004999"), int64_t{0});
  EXPECT_EQ(micros_text_to_ns("1.2345678"), int64_t{1235});
  EXPECT_EQ(micros_text_to_ns("-1.2345"), int64_t{-1235});
}

TEST(TraceTime, ExponentsGoThroughDouble) {
  EXPECT_EQ(micros_text_to_ns("1e3"), int64_t{1000000});
  EXPECT_EQ(micros_text_to_ns("2.4E-3"), int64_t{2});
  EXPECT_EQ(micros_text_to_ns("1e300"), std::nullopt);
}

TEST(TraceTime, OutOfRangeIsRefusedNotWrapped) {
  EXPECT_EQ(micros_text_to_ns("9223372036854775.807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(micros_text_to_ns("9223372036854775.808"), std::nullopt);
  EXPECT_EQ(micros_text_to_ns("99999999999999999999999"), std::nullopt);
  EXPECT_EQ(micros_to_ns(int64_t{9223372036854776}), std::nullopt);
  EXPECT_EQ(micros_to_ns(uint64_t{18446744073709551615u}), std::nullopt);
  EXPECT_EQ(micros_to_ns(std::numeric_limits<double>::infinity()), std::nullopt);
  EXPECT_EQ(micros_to_ns(std::numeric_limits<double>::quiet_NaN()), std::nullopt);
}

TEST(TraceTime, NonNumbersAreRefused) {
  EXPECT_EQ(micros_text_to_ns(""), std::nullopt);
  EXPECT_EQ(micros_text_to_ns("-"), std::nullopt);
  EXPECT_EQ(micros_text_to_ns("1.2.3"), std::nullopt);
  EXPECT_EQ(micros_text_to_ns("abc"), std::nullopt);
}

}  // namespace
