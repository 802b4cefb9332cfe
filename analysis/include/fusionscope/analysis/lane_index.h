// One timeline row as plain sorted arrays, the form the level-of-detail pass searches.
// Items are sorted by start; max_end[i] is the latest end among items 0..i, which is
// non-decreasing even when items overlap, so "first item still visible at t" is a binary search.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace fusionscope::analysis {

struct LaneIndex {
  std::vector<int64_t> start;
  std::vector<int64_t> end;
  std::vector<int64_t> max_end;
  std::vector<uint32_t> item;  // index of each entry in the source array (kernels, ranges, ...)
  std::vector<int64_t> busy_through;  // sum of the durations of items 0..i (for density)

  size_t size() const { return start.size(); }
  bool empty() const { return start.empty(); }
  void reserve(size_t n);
  // Appends one item; items must come in order of start (checked by the caller's sort).
  void push(int64_t start_ns, int64_t end_ns, uint32_t source_index);
  // Position of the first item that ends after t (items before it are all over by t).
  size_t first_ending_after(int64_t t_ns) const;
  // Position of the first item that starts at or after t.
  size_t first_starting_at_or_after(int64_t t_ns) const;
  // The fraction of [t0, t1) that items cover, from the running sums: exact for items that do
  // not overlap each other (a stream's kernels, one depth of ranges), clamped to [0, 1].
  double busy_fraction(int64_t t0_ns, int64_t t1_ns) const;
};

// Builds the index of records[begin, end) of any record type with start_ns and end_ns fields,
// already sorted by start. An item whose end precedes its start is indexed as zero-length.
template <class Record>
LaneIndex index_lane(std::span<const Record> records, uint32_t begin, uint32_t end) {
  LaneIndex lane;
  lane.reserve(end > begin ? end - begin : 0);
  for (uint32_t i = begin; i < end && i < records.size(); ++i)
    lane.push(records[i].start_ns, records[i].end_ns, i);
  return lane;
}

}  // namespace fusionscope::analysis
