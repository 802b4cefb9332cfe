#include "fusionscope/analysis/time_ruler.h"

#include <gtest/gtest.h>

namespace fusionscope::analysis {
namespace {

TEST(Ruler, StepIsOneTwoFiveAndLabelsStayApart) {
  // 1 ms over 1000 px, labels >= 100 px apart: 100 us steps.
  const Ruler r = make_ruler(0, 1'000'000, 1000, 100);
  EXPECT_EQ(r.major_step_ns, 100'000);
  EXPECT_EQ(r.minor_step_ns, 20'000);
  int majors = 0;
  for (const RulerTick& t : r.ticks) {
    EXPECT_GE(t.t_ns, 0);
    EXPECT_LT(t.t_ns, 1'000'000);
    EXPECT_EQ(t.t_ns % r.minor_step_ns, 0);
    if (t.major) ++majors;
  }
  EXPECT_EQ(majors, 10);
  EXPECT_STREQ(r.unit, "us");
  EXPECT_EQ(r.label(300'000), "300 us");
}

TEST(Ruler, StepRoundsUpToTwoAndFive) {
  EXPECT_EQ(make_ruler(0, 1'500'000, 1000, 100).major_step_ns, 200'000);
  EXPECT_EQ(make_ruler(0, 4'000'000, 1000, 100).major_step_ns, 500'000);
  EXPECT_EQ(make_ruler(0, 10, 1000, 100).major_step_ns, 1);  // never below 1 ns
}

TEST(Ruler, LabelsUseTheLargestUnitWithTheStepsDecimals) {
  // A 500 ns step around 1.2 ms reads as milliseconds with four decimals.
  const Ruler r = make_ruler(1'200'000, 1'205'000, 1000, 100);
  EXPECT_EQ(r.major_step_ns, 500);
  EXPECT_STREQ(r.unit, "ms");
  EXPECT_EQ(r.label(1'200'500), "1.2005 ms");
  const Ruler s = make_ruler(0, 3'000'000'000, 600, 100);
  EXPECT_EQ(s.label(1'000'000'000), "1.0 s");
}

TEST(Ruler, NegativeTimesAndEmptyViews) {
  const Ruler r = make_ruler(-500, 500, 1000, 100);
  ASSERT_FALSE(r.ticks.empty());
  EXPECT_EQ(r.ticks.front().t_ns, -500);
  EXPECT_EQ(r.label(-500), "-500 ns");
  EXPECT_TRUE(make_ruler(10, 10, 1000, 100).ticks.empty());
  EXPECT_TRUE(make_ruler(0, 100, 0, 100).ticks.empty());
  EXPECT_TRUE(make_ruler(0, 100, 100, 0).ticks.empty());
}

TEST(Ruler, HugeViewsDoNotOverflow) {
  const Ruler r = make_ruler(0, int64_t{9'000'000'000'000'000'000}, 100, 100);
  EXPECT_GT(r.major_step_ns, 0);
  EXPECT_LT(r.ticks.size(), 100u);
}

}  // namespace
}  // namespace fusionscope::analysis
