#include "op_linker.h"

#include <algorithm>
#include <numeric>
#include <queue>

namespace fusionscope::profiler {

std::vector<storage::StringId> innermost_ranges(std::span<const OpRange> ranges,
                                                std::span<const LaunchPoint> points) {
  std::vector<storage::StringId> result(points.size(), storage::kNoString);
  std::vector<uint32_t> by_start(ranges.size());
  std::iota(by_start.begin(), by_start.end(), 0u);
  std::sort(by_start.begin(), by_start.end(), [&](uint32_t a, uint32_t b) {
    if (ranges[a].thread_id != ranges[b].thread_id)
      return ranges[a].thread_id < ranges[b].thread_id;
    return ranges[a].start_ns < ranges[b].start_ns;
  });
  std::vector<uint32_t> by_time(points.size());
  std::iota(by_time.begin(), by_time.end(), 0u);
  std::sort(by_time.begin(), by_time.end(), [&](uint32_t a, uint32_t b) {
    if (points[a].thread_id != points[b].thread_id)
      return points[a].thread_id < points[b].thread_id;
    return points[a].t_ns < points[b].t_ns;
  });

  // One sweep per thread in time order. Ranges that have started wait in a max-heap by start;
  // a range on top that ended before the current point can never enclose a later one, so it is
  // dropped; what remains on top is the latest-starting open range: the innermost.
  // Of two ranges starting together, the shorter is the inner one.
  auto later_start = [&](uint32_t a, uint32_t b) {
    if (ranges[a].start_ns != ranges[b].start_ns) return ranges[a].start_ns < ranges[b].start_ns;
    return ranges[a].end_ns > ranges[b].end_ns;
  };
  size_t r = 0;
  size_t p = 0;
  while (p < by_time.size()) {
    const uint32_t thread = points[by_time[p]].thread_id;
    while (r < by_start.size() && ranges[by_start[r]].thread_id < thread) ++r;
    std::priority_queue<uint32_t, std::vector<uint32_t>, decltype(later_start)> open(later_start);
    for (; p < by_time.size() && points[by_time[p]].thread_id == thread; ++p) {
      const int64_t t = points[by_time[p]].t_ns;
      while (r < by_start.size() && ranges[by_start[r]].thread_id == thread &&
             ranges[by_start[r]].start_ns <= t) {
        open.push(by_start[r++]);
      }
      while (!open.empty() && ranges[open.top()].end_ns < t) open.pop();
      if (!open.empty()) result[by_time[p]] = ranges[open.top()].name;
    }
  }
  return result;
}

}  // namespace fusionscope::profiler
