#include "fusionscope/analysis/lane_index.h"

#include <algorithm>

namespace fusionscope::analysis {

void LaneIndex::reserve(size_t n) {
  start.reserve(n);
  end.reserve(n);
  max_end.reserve(n);
  item.reserve(n);
}

void LaneIndex::push(int64_t start_ns, int64_t end_ns, uint32_t source_index) {
  const int64_t e = std::max(start_ns, end_ns);
  start.push_back(start_ns);
  end.push_back(e);
  max_end.push_back(max_end.empty() ? e : std::max(max_end.back(), e));
  item.push_back(source_index);
}

size_t LaneIndex::first_ending_after(int64_t t_ns) const {
  return static_cast<size_t>(std::upper_bound(max_end.begin(), max_end.end(), t_ns) -
                             max_end.begin());
}

size_t LaneIndex::first_starting_at_or_after(int64_t t_ns) const {
  return static_cast<size_t>(std::lower_bound(start.begin(), start.end(), t_ns) - start.begin());
}

}  // namespace fusionscope::analysis
