// The spilling lists an import remembers a trace's facts in: records given back in the order
// they came, or sorted (stably), whether they stayed in memory or went to many runs on file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "spill.h"
#include "test_paths.h"

namespace {

using fusionscope::interchange::detail::SpillList;
using fusionscope::interchange::detail::SpillSorter;
namespace t = fusionscope::testing;

struct Item {
  uint32_t key = 0;
  uint32_t order = 0;  // where it was pushed: equal keys must come back in this order
  friend bool operator==(const Item&, const Item&) = default;
};
struct ByKey {
  bool operator()(const Item& a, const Item& b) const { return a.key < b.key; }
};

std::vector<Item> random_items(size_t n, uint32_t keys) {
  std::mt19937 random(42);
  std::vector<Item> items(n);
  for (size_t i = 0; i < n; ++i)
    items[i] = {static_cast<uint32_t>(random() % keys), static_cast<uint32_t>(i)};
  return items;
}

TEST(Spill, SorterGivesBackEveryRecordStablySortedWhateverItsMemory) {
  const std::vector<Item> items = random_items(20'000, 500);
  std::vector<Item> expected = items;
  std::stable_sort(expected.begin(), expected.end(), ByKey{});
  // All in memory; a few runs; more runs than are merged at once (merged first); two records
  // a run.
  for (size_t memory : {size_t{1} << 20, size_t{64} << 10, size_t{1} << 10, size_t{1}}) {
    SpillSorter<Item, ByKey> sorter(t::scratch_dir(), memory);
    for (const Item& i : items) sorter.push(i);
    ASSERT_EQ(sorter.size(), items.size());
    // Two readers at once, each from the first record.
    auto a = sorter.reader();
    auto b = sorter.reader();
    std::vector<Item> got_a, got_b;
    Item x;
    while (a.next(x)) got_a.push_back(x);
    while (const Item* p = b.peek()) {
      got_b.push_back(*p);
      b.next(x);
      EXPECT_EQ(x, got_b.back());
    }
    EXPECT_TRUE(got_a == expected) << "memory " << memory;
    EXPECT_TRUE(got_b == expected) << "memory " << memory;
  }
}

TEST(Spill, ListGivesBackEveryRecordInOrder) {
  const std::vector<Item> items = random_items(10'000, 100);
  for (size_t memory : {size_t{1} << 20, size_t{1} << 10, size_t{1}}) {
    SpillList<Item> list(t::scratch_dir(), memory);
    for (const Item& i : items) list.push(i);
    std::vector<Item> got;
    Item x;
    while (list.next(x)) got.push_back(x);
    EXPECT_TRUE(got == items) << "memory " << memory;
  }
}

}  // namespace
