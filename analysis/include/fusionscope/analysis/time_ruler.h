// Tick marks for a time axis: a step of 1, 2 or 5 times a power of ten nanoseconds, chosen so that
// labels stay at least a given number of pixels apart, and labels in the unit that step needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusionscope::analysis {

struct RulerTick {
  int64_t t_ns = 0;    // relative to the ruler's origin
  bool major = false;  // labelled
};

struct Ruler {
  int64_t major_step_ns = 0;
  int64_t minor_step_ns = 0;
  std::vector<RulerTick> ticks;  // ascending, minor ticks included
  // Labels share one unit, picked by the largest tick in view, with the decimals the step needs:
  // "1.2345 ms" for a 500 ns step near 1 ms, "120 us" for a 20 us step.
  double unit_ns = 1;
  const char* unit = "ns";
  int decimals = 0;
  std::string label(int64_t t_ns) const;
};

// Ticks covering [view_begin_ns, view_end_ns) (relative to the origin) for a view drawn across
// width_px pixels, with labels at least min_label_px apart. Empty for an empty view or width.
Ruler make_ruler(int64_t view_begin_ns, int64_t view_end_ns, double width_px, double min_label_px);

}  // namespace fusionscope::analysis
