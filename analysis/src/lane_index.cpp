#include "fusionscope/analysis/lane_index.h"

#include <algorithm>

namespace fusionscope::analysis {

void LaneIndex::reserve(size_t n) {
  start.reserve(n);
  end.reserve(n);
  max_end.reserve(n);
  item.reserve(n);
  busy_through.reserve(n);
}

void LaneIndex::push(int64_t start_ns, int64_t end_ns, uint32_t source_index) {
  const int64_t e = std::max(start_ns, end_ns);
  start.push_back(start_ns);
  end.push_back(e);
  max_end.push_back(max_end.empty() ? e : std::max(max_end.back(), e));
  item.push_back(source_index);
  busy_through.push_back((busy_through.empty() ? 0 : busy_through.back()) + (e - start_ns));
}

double LaneIndex::busy_fraction(int64_t t0, int64_t t1) const {
  if (t1 <= t0 || start.empty()) return 0.0;
  const size_t p = first_starting_at_or_after(t0);
  const size_t q = first_starting_at_or_after(t1);
  // The items starting inside, less what the last of them runs past t1...
  int64_t busy = 0;
  if (q > p) {
    busy = busy_through[q - 1] - (p > 0 ? busy_through[p - 1] : 0);
    busy -= std::max<int64_t>(0, end[q - 1] - t1);
  }
  // ...plus what the item started before t0 still covers (the one that ends last: max_end).
  if (p > 0) busy += std::max<int64_t>(0, std::min(max_end[p - 1], t1) - t0);
  return std::clamp(static_cast<double>(busy) / static_cast<double>(t1 - t0), 0.0, 1.0);
}

size_t LaneIndex::first_ending_after(int64_t t_ns) const {
  return static_cast<size_t>(std::upper_bound(max_end.begin(), max_end.end(), t_ns) -
                             max_end.begin());
}

size_t LaneIndex::first_starting_at_or_after(int64_t t_ns) const {
  return static_cast<size_t>(std::lower_bound(start.begin(), start.end(), t_ns) - start.begin());
}

}  // namespace fusionscope::analysis
