// Level of detail for a timeline row, in the manner of Tracy's zone merging: items wide enough
// to see are drawn one by one; a run of items narrower than a few pixels is merged into one
// block. Runs are skipped by binary search on LaneIndex::max_end, so the cost of a pass follows
// the number of pixels across the view, not the number of items in it.
#pragma once

#include <cstdint>
#include <vector>

#include "fusionscope/analysis/lane_index.h"

namespace fusionscope::analysis {

struct LodView {
  int64_t begin_ns = 0;  // visible time window [begin_ns, end_ns)
  int64_t end_ns = 0;
  double width_px = 0;    // pixels the window spans
  double merge_px = 3.0;  // items narrower than this may merge with their neighbours
};

struct LodBox {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t first = 0;  // position in the LaneIndex of the first item covered
  uint32_t count = 0;  // items covered; 1 = one item drawn as itself
  bool merged() const { return count > 1; }
};

// Appends to `out` the boxes to draw for the part of `lane` inside the view, in time order.
// Every visible item is covered by exactly one box; boxes do not overlap in time except where
// the items themselves overlap.
void build_lod(const LaneIndex& lane, const LodView& view, std::vector<LodBox>& out);

}  // namespace fusionscope::analysis
