// Finds, for points in time on CPU threads (kernel launches), the innermost enclosing range on the
// same thread. Ranges on one thread may nest; an enclosing range has start <= t <= end.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fusionscope/storage/records.h"

namespace fusionscope::profiler {

struct OpRange {
  uint32_t thread_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  storage::StringId name = storage::kNoString;
};

struct LaunchPoint {
  uint32_t thread_id = 0;
  int64_t t_ns = 0;
};

// result[i] is the name of the innermost range enclosing points[i], or kNoString.
std::vector<storage::StringId> innermost_ranges(std::span<const OpRange> ranges,
                                                std::span<const LaunchPoint> points);

}  // namespace fusionscope::profiler
