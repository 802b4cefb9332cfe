// A duration histogram as a small chart: one or more series over shared bins (A and B of a
// comparison overlaid, as in Tracy's compare window), the x axis in durations, a legend, and the
// bin under the mouse in a tooltip.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <imgui.h>

#include "theme.h"

namespace fusionscope::ui {

struct HistogramSeries {
  std::string label;
  std::span<const double> values_ns;  // kept by the caller between frames
  ImU32 colour = 0;
};

// Draws the chart in a region of `size` at the cursor. The bins are counted again only when the
// values (their storage or count) or the width change.
void draw_duration_histogram(const char* id, std::span<const HistogramSeries> series, ImVec2 size,
                             const Theme& theme);

}  // namespace fusionscope::ui
