#include "fusionscope/analysis/lod.h"

#include <algorithm>
#include <cmath>

namespace fusionscope::analysis {

namespace {

// First position p in [from, n) with max_end[p] >= t; n if none.
size_t first_max_end_at_least(const LaneIndex& lane, size_t from, int64_t t) {
  return static_cast<size_t>(
      std::lower_bound(lane.max_end.begin() + static_cast<std::ptrdiff_t>(from), lane.max_end.end(),
                       t) -
      lane.max_end.begin());
}

}  // namespace

void build_lod(const LaneIndex& lane, const LodView& view, std::vector<LodBox>& out) {
  const size_t n = lane.size();
  if (n == 0 || view.end_ns <= view.begin_ns || !(view.width_px > 0)) return;
  const double ns_per_px = static_cast<double>(view.end_ns - view.begin_ns) / view.width_px;
  // Items shorter than merge_ns may merge; a gap shorter than merge_ns does not separate them.
  const int64_t merge_ns = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(ns_per_px * std::max(view.merge_px, 0.0))));

  size_t i = lane.first_ending_after(view.begin_ns);
  while (i < n && lane.start[i] < view.end_ns) {
    if (lane.end[i] <= view.begin_ns) {  // under an earlier, longer item that is visible
      ++i;
      continue;
    }
    if (lane.end[i] - lane.start[i] >= merge_ns) {
      out.push_back({lane.start[i], lane.end[i], static_cast<uint32_t>(i), 1});
      ++i;
      continue;
    }
    // A narrow item: absorb the neighbours that end within merge_ns of the block, by binary
    // search, then one more narrow item that starts within reach; stop at a wide item or a gap.
    LodBox box{lane.start[i], lane.end[i], static_cast<uint32_t>(i), 1};
    size_t j = i + 1;
    while (j < n && lane.start[j] < view.end_ns) {
      const int64_t reach = box.end_ns + merge_ns;
      const size_t k = first_max_end_at_least(lane, j, reach);
      if (k > j) {
        box.end_ns = std::max(box.end_ns, lane.max_end[k - 1]);
        j = k;
        if (j >= n || lane.start[j] >= view.end_ns) break;
      }
      // The gap is measured from the block's new end, not from where this step began.
      if (lane.start[j] < box.end_ns + merge_ns && lane.end[j] - lane.start[j] < merge_ns) {
        box.end_ns = std::max(box.end_ns, lane.end[j]);
        ++j;
        continue;
      }
      break;
    }
    box.count = static_cast<uint32_t>(j - i);
    out.push_back(box);
    i = j;
  }
}

}  // namespace fusionscope::analysis
