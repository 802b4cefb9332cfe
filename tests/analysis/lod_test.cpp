#include "fusionscope/analysis/lod.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace fusionscope::analysis {
namespace {

struct Span {
  int64_t start, end;
};

LaneIndex lane_of(const std::vector<Span>& items) {
  LaneIndex lane;
  for (uint32_t i = 0; i < items.size(); ++i) lane.push(items[i].start, items[i].end, i);
  return lane;
}

std::vector<LodBox> lod(const LaneIndex& lane, int64_t begin, int64_t end, double width_px,
                        double merge_px = 3.0) {
  std::vector<LodBox> out;
  build_lod(lane, {begin, end, width_px, merge_px}, out);
  return out;
}

bool visible(const LaneIndex& lane, size_t i, int64_t begin, int64_t end) {
  return lane.end[i] > begin && lane.start[i] < end;
}

// Boxes cover disjoint, increasing position ranges that include every visible item once; a
// single box is a visible item drawn as itself; a box spans its items.
void expect_covers(const LaneIndex& lane, const std::vector<LodBox>& boxes, int64_t begin,
                   int64_t end) {
  std::vector<int> covered(lane.size(), 0);
  int64_t last_first = -1;
  for (const LodBox& b : boxes) {
    ASSERT_GE(b.count, 1u);
    ASSERT_LE(size_t{b.first} + b.count, lane.size());
    EXPECT_GT(static_cast<int64_t>(b.first), last_first);
    last_first = b.first;
    EXPECT_EQ(b.start_ns, lane.start[b.first]);
    for (uint32_t i = b.first; i < b.first + b.count; ++i) {
      ++covered[i];
      EXPECT_GE(b.end_ns, lane.end[i]) << "box ends before item " << i;
    }
    if (b.count == 1) {
      EXPECT_TRUE(visible(lane, b.first, begin, end));
      EXPECT_EQ(b.end_ns, lane.end[b.first]);
    }
  }
  for (size_t i = 0; i < lane.size(); ++i) {
    EXPECT_LE(covered[i], 1) << "item " << i << " drawn twice";
    if (visible(lane, i, begin, end)) {
      EXPECT_EQ(covered[i], 1) << "visible item " << i << " lost";
    }
  }
}

TEST(Lod, EmptyLaneOrViewGivesNothing) {
  EXPECT_TRUE(lod(LaneIndex{}, 0, 100, 100).empty());
  const LaneIndex lane = lane_of({{0, 10}, {20, 30}});
  EXPECT_TRUE(lod(lane, 50, 50, 100).empty());   // zero-length view
  EXPECT_TRUE(lod(lane, 60, 50, 100).empty());   // reversed view
  EXPECT_TRUE(lod(lane, 0, 100, 0).empty());     // no pixels
  EXPECT_TRUE(lod(lane, 30, 100, 100).empty());  // after every item (end is exclusive)
  EXPECT_TRUE(lod(lane, -100, 0, 100).empty());  // before every item
}

TEST(Lod, WideItemsAreDrawnOneByOneIncludingEdges) {
  // 1 ns per pixel: every 10 ns item is 10 px wide.
  const LaneIndex lane = lane_of({{0, 10}, {20, 30}, {40, 50}, {60, 70}});
  const auto boxes = lod(lane, 25, 65, 40);
  ASSERT_EQ(boxes.size(), 3u);  // the item cut by each edge stays
  EXPECT_EQ(boxes[0].first, 1u);
  EXPECT_EQ(boxes[2].first, 3u);
  for (const auto& b : boxes) EXPECT_FALSE(b.merged());
  expect_covers(lane, boxes, 25, 65);
}

TEST(Lod, DenseNarrowItemsMergeIntoOneBlock) {
  // 1000 items of 1 ns, 1 ns apart, over 20 px: 100 ns per pixel.
  std::vector<Span> items;
  for (int64_t i = 0; i < 1000; ++i) items.push_back({2 * i, 2 * i + 1});
  const LaneIndex lane = lane_of(items);
  const auto boxes = lod(lane, 0, 2000, 20);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].count, 1000u);
  EXPECT_EQ(boxes[0].start_ns, 0);
  EXPECT_EQ(boxes[0].end_ns, 1999);
  expect_covers(lane, boxes, 0, 2000);
}

TEST(Lod, AGapWiderThanTheMergeDistanceSplitsBlocks) {
  std::vector<Span> items;
  for (int64_t i = 0; i < 10; ++i) items.push_back({i * 2, i * 2 + 1});              // block at 0
  for (int64_t i = 0; i < 10; ++i) items.push_back({500 + i * 2, 500 + i * 2 + 1});  // block at 500
  const LaneIndex lane = lane_of(items);
  // 10 ns per pixel, merge at 3 px = 30 ns: the 480 ns gap separates the blocks.
  const auto boxes = lod(lane, 0, 1000, 100);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_EQ(boxes[0].count, 10u);
  EXPECT_EQ(boxes[1].first, 10u);
  EXPECT_EQ(boxes[1].count, 10u);
  expect_covers(lane, boxes, 0, 1000);
}

TEST(Lod, AWideItemIsNeverSwallowedByAMergedBlock) {
  std::vector<Span> items = {{0, 1}, {2, 3}, {4, 5}, {6, 400}, {401, 402}, {403, 404}};
  const LaneIndex lane = lane_of(items);
  const auto boxes = lod(lane, 0, 1000, 100);  // 10 ns/px: the 394 ns item is 39 px wide
  ASSERT_EQ(boxes.size(), 3u);
  EXPECT_EQ(boxes[0].count, 3u);
  EXPECT_EQ(boxes[1].first, 3u);
  EXPECT_EQ(boxes[1].count, 1u);
  EXPECT_EQ(boxes[2].count, 2u);
  expect_covers(lane, boxes, 0, 1000);
}

TEST(Lod, IsolatedNarrowItemStaysSelectable) {
  const LaneIndex lane = lane_of({{100, 101}, {900, 901}});
  const auto boxes = lod(lane, 0, 1000, 100);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_FALSE(boxes[0].merged());
  EXPECT_FALSE(boxes[1].merged());
}

TEST(Lod, ZeroLengthItems) {
  const LaneIndex lane = lane_of({{10, 10}, {10, 10}, {20, 15}, {500, 500}});
  EXPECT_EQ(lane.end[2], 20);  // an end before the start is indexed as zero-length
  const auto boxes = lod(lane, 0, 1000, 100);
  expect_covers(lane, boxes, 0, 1000);
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_EQ(boxes[0].count, 3u);
}

TEST(Lod, OverlappingItemsUnderALongOne) {
  // A long item with short ones inside it (an imported trace's clock jitter, nested annotations).
  const LaneIndex lane = lane_of({{0, 1000}, {10, 20}, {30, 40}, {990, 1500}, {1600, 1700}});
  EXPECT_EQ(lane.max_end[1], 1000);
  EXPECT_EQ(lane.first_ending_after(500), 0u);  // the long item is still on screen
  EXPECT_EQ(lane.first_ending_after(1000), 3u);
  for (auto [b, e, w] : std::vector<std::tuple<int64_t, int64_t, double>>{
           {0, 2000, 2000}, {500, 1650, 100}, {25, 35, 1000}, {0, 2000, 5}}) {
    const auto boxes = lod(lane, b, e, w);
    expect_covers(lane, boxes, b, e);
  }
}

TEST(Lod, BoxCountFollowsPixelsNotItems) {
  // 200,000 items of 3 ns every 5 ns over 1000 px: the pass draws a handful of boxes.
  std::vector<Span> items;
  for (int64_t i = 0; i < 200'000; ++i) items.push_back({5 * i, 5 * i + 3});
  const LaneIndex lane = lane_of(items);
  const auto boxes = lod(lane, 0, 1'000'000, 1000);
  EXPECT_LE(boxes.size(), 2u * 1000 / 3 + 2);
  expect_covers(lane, boxes, 0, 1'000'000);
  // Zoomed in to 1 ns per pixel, every item is drawn as itself.
  const auto close = lod(lane, 500'000, 501'000, 1000);
  EXPECT_EQ(close.size(), 200u);
  for (const auto& b : close) EXPECT_FALSE(b.merged());
}

TEST(Lod, RandomLanesAgreeWithBruteForce) {
  std::mt19937_64 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    const bool overlapping = trial % 3 == 0;
    std::vector<Span> items;
    int64_t t = static_cast<int64_t>(rng() % 100);
    const int n = 1 + static_cast<int>(rng() % 400);
    for (int i = 0; i < n; ++i) {
      const int64_t len =
          (rng() % 4 == 0) ? static_cast<int64_t>(rng() % 5000) : static_cast<int64_t>(rng() % 50);
      const int64_t gap = static_cast<int64_t>(rng() % 200);
      items.push_back({t, t + len});
      t += overlapping ? gap : len + gap;
    }
    const LaneIndex lane = lane_of(items);
    const int64_t begin = static_cast<int64_t>(rng() % static_cast<uint64_t>(t + 1)) - 50;
    const int64_t end = begin + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(t + 100));
    const double width = 1.0 + static_cast<double>(rng() % 2000);
    const auto boxes = lod(lane, begin, end, width);
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    expect_covers(lane, boxes, begin, end);
    if (!overlapping) {
      // Non-overlapping lanes merge only narrow items.
      const double merge_ns = static_cast<double>(end - begin) / width * 3.0;
      for (const auto& b : boxes) {
        if (!b.merged()) continue;
        for (uint32_t i = b.first; i < b.first + b.count; ++i)
          EXPECT_LT(static_cast<double>(lane.end[i] - lane.start[i]), merge_ns + 1) << "item " << i;
      }
    }
  }
}

}  // namespace
}  // namespace fusionscope::analysis

namespace fusionscope::analysis {
namespace {

TEST(Lod, BackToBackItemsWithSmallGapsMergeIntoOneBlock) {
  // Items of 30-50 ns with 1-7 ns gaps at 100 ns per pixel (merge at 300 ns): every gap is far
  // under the merge distance, wherever the binary-search steps land, so the run is one block.
  std::mt19937_64 rng(7);
  std::vector<Span> items;
  int64_t t = 0;
  for (int i = 0; i < 5000; ++i) {
    const int64_t len = 30 + static_cast<int64_t>(rng() % 21);
    items.push_back({t, t + len});
    t += len + 1 + static_cast<int64_t>(rng() % 7);
  }
  const LaneIndex lane = lane_of(items);
  const auto boxes = lod(lane, 0, t, static_cast<double>(t) / 100.0);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].count, 5000u);
}

}  // namespace
}  // namespace fusionscope::analysis

namespace fusionscope::analysis {
namespace {

// Density of zoomed-out rows: the busy fraction of a window, checked against a brute-force sum.
TEST(LaneDensity, BusyFractionMatchesTheCoveredTime) {
  LaneIndex lane;
  lane.push(0, 10, 0);
  lane.push(20, 30, 1);
  lane.push(30, 60, 2);
  lane.push(100, 101, 3);
  EXPECT_DOUBLE_EQ(lane.busy_fraction(0, 100), 50.0 / 100);
  EXPECT_DOUBLE_EQ(lane.busy_fraction(5, 25), 10.0 / 20);  // 5 of the first, 5 of the second
  EXPECT_DOUBLE_EQ(lane.busy_fraction(40, 50), 1.0);       // inside the third
  EXPECT_DOUBLE_EQ(lane.busy_fraction(60, 100), 0.0);      // the gap
  EXPECT_DOUBLE_EQ(lane.busy_fraction(0, 200), 51.0 / 200);
  EXPECT_DOUBLE_EQ(lane.busy_fraction(10, 10), 0.0);
  // Any window of a lane of non-overlapping items agrees with a brute-force sum.
  for (int64_t a = -5; a < 110; a += 7)
    for (int64_t b = a + 1; b < 120; b += 11) {
      int64_t covered = 0;
      for (size_t i = 0; i < lane.size(); ++i)
        covered += std::max<int64_t>(0, std::min(lane.end[i], b) - std::max(lane.start[i], a));
      EXPECT_NEAR(lane.busy_fraction(a, b),
                  static_cast<double>(covered) / static_cast<double>(b - a), 1e-12)
          << a << " " << b;
    }
}

}  // namespace
}  // namespace fusionscope::analysis
