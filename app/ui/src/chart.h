// The pieces every chart is drawn with (the sweep's, the roofline, the bandwidth bars, the
// counter rows under the timeline), on ImGui draw lists, in the manner of ImPlot: a plot area
// mapping fractions to pixels, a logarithmic scale with its ticks, axis grid lines with labels,
// dashed lines, and legends whose marks are the very colours the chart draws with.
#pragma once

#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <imgui.h>

#include "theme.h"

namespace fusionscope::ui::chart {

// The plotting rectangle: fractions [0, 1] along each axis to pixels, y upwards.
struct PlotArea {
  ImVec2 min, max;
  float x(double fraction) const { return min.x + static_cast<float>(fraction) * (max.x - min.x); }
  float y(double fraction) const { return max.y - static_cast<float>(fraction) * (max.y - min.y); }
  ImVec2 at(double fx, double fy) const { return ImVec2(x(fx), y(fy)); }
  bool contains(ImVec2 p) const {
    return p.x >= min.x && p.x < max.x && p.y >= min.y && p.y < max.y;
  }
};

// A logarithmic scale over [lo, hi] (both > 0).
struct LogScale {
  double lo = 1, hi = 10;
  double fraction(double v) const;
  // 1, 2 and 5 times the powers of ten inside the scale.
  std::vector<double> ticks_125() const;
  // The powers of ten inside the scale.
  std::vector<double> decades() const;
};

// A linear scale over [lo, hi].
struct LinearScale {
  double lo = 0, hi = 1;
  double fraction(double v) const { return hi > lo ? (v - lo) / (hi - lo) : 0.0; }
  // Multiples of `step` inside the scale.
  std::vector<double> ticks(double step) const;
};

// Horizontal grid lines at `ticks` (values), labelled left of the area by `label`; `emphasise`
// (a value, or NaN) is drawn brighter, as 1x on a speedup axis.
void y_grid(ImDrawList* draw, const PlotArea& area, std::span<const double> ticks,
            const std::function<double(double)>& fraction,
            const std::function<std::string(double)>& label, const Theme& theme,
            double emphasise = std::numeric_limits<double>::quiet_NaN());

// Vertical grid lines at `ticks`, labelled under the area (no labels when `label` is empty).
void x_grid(ImDrawList* draw, const PlotArea& area, std::span<const double> ticks,
            const std::function<double(double)>& fraction,
            const std::function<std::string(double)>& label, const Theme& theme);

// A line of dashes `dash` long with gaps as long.
void dashed_line(ImDrawList* draw, ImVec2 a, ImVec2 b, ImU32 colour, float thickness, float dash);

enum class Mark { kSwatch, kLine, kDashed, kDot };

struct LegendEntry {
  std::string label;
  ImU32 colour = 0;
  Mark mark = Mark::kSwatch;
};

// A legend as ImGui items on the current line, wrapping when the window is narrow.
void legend(std::span<const LegendEntry> entries, const Theme& theme);

// A legend drawn on `draw` from `at` to the right (no ImGui items); returns the x it ends at.
float legend_at(ImDrawList* draw, ImVec2 at, std::span<const LegendEntry> entries,
                const Theme& theme);

// The mark of one entry in a box of `size` at `at` (for tables and tooltips).
void draw_mark(ImDrawList* draw, ImVec2 at, float size, const LegendEntry& entry, float scale);

}  // namespace fusionscope::ui::chart
