#include "op_linker.h"

#include <gtest/gtest.h>

namespace fusionscope::profiler {
namespace {

TEST(OpLinker, PicksTheInnermostEnclosingRangeOnTheSameThread) {
  const std::vector<OpRange> ranges = {
      {1, 0, 100, 10},  // outer on thread 1
      {1, 10, 50, 11},  // inner
      {1, 20, 30, 12},  // innermost
      {2, 0, 100, 20},  // thread 2 covers every point in time
  };
  const std::vector<LaunchPoint> points = {
      {1, 25}, {1, 40}, {1, 60}, {1, 150}, {2, 25}, {3, 25},
  };
  const auto ops = innermost_ranges(ranges, points);
  EXPECT_EQ(ops, (std::vector<storage::StringId>{12, 11, 10, 0, 20, 0}));
}

TEST(OpLinker, BoundariesAreInclusiveAndEqualStartsPreferTheShorterRange) {
  const std::vector<OpRange> ranges = {{1, 10, 40, 1}, {1, 10, 20, 2}};
  const std::vector<LaunchPoint> points = {{1, 10}, {1, 20}, {1, 21}, {1, 40}, {1, 41}, {1, 9}};
  EXPECT_EQ(innermost_ranges(ranges, points), (std::vector<storage::StringId>{2, 2, 1, 1, 0, 0}));
}

TEST(OpLinker, PointsInAnyOrderAndManySequentialRanges) {
  std::vector<OpRange> ranges;
  std::vector<LaunchPoint> points;
  for (int i = 0; i < 1000; ++i) {
    ranges.push_back({5, i * 100, i * 100 + 50, static_cast<storage::StringId>(i + 1)});
    points.push_back({5, (999 - i) * 100 + 25});  // inside, newest first
    points.push_back({5, (999 - i) * 100 + 75});  // in a gap
  }
  const auto ops = innermost_ranges(ranges, points);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(ops[2 * i], static_cast<storage::StringId>(999 - i + 1));
    EXPECT_EQ(ops[2 * i + 1], storage::kNoString);
  }
}

TEST(OpLinker, NoRangesOrNoPoints) {
  EXPECT_TRUE(innermost_ranges({}, {}).empty());
  const std::vector<LaunchPoint> points = {{1, 5}};
  EXPECT_EQ(innermost_ranges({}, points), (std::vector<storage::StringId>{0}));
}

}  // namespace
}  // namespace fusionscope::profiler
