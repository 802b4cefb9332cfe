// What the timeline's drawing hands to its input handling each frame: the axis, where the mouse
// is, and what lies under it. Internal to timeline.cpp and timeline_input.cpp.
#pragma once

#include <span>

#include <imgui.h>

#include "timeline.h"
#include "timeline_rows.h"

namespace fusionscope::ui {

// Converts between axis time and screen x.
struct TimelineAxis {
  float x0 = 0, x1 = 0;
  double begin = 0, end = 1;
  double px_per_ns() const { return (x1 - x0) / (end - begin); }
  double t_of(float x) const { return begin + (x - x0) / px_per_ns(); }
  float x_of(double t) const { return x0 + static_cast<float>((t - begin) * px_per_ns()); }
};

struct TimelineInput {
  TimelineAxis axis;
  ImVec2 mouse;
  bool canvas_hovered = false;  // over the rows
  bool ruler_hovered = false;
  bool mouse_on_axis = false;  // between the gutter and the scrollbar
  float scroll_y = 0;          // of the rows
  float content_y0 = 0;        // screen y of the rows' content top (scrolled)
  float content_h = 0;
  int gutter_row = -1;  // the lane label under the mouse (a lane's first row)
  int hover_row = -1;   // the row under the mouse and what it said lies there
  RowHover hover;
};

// Mouse and keys: zoom, pan, select, measure, fit; keeps the view within reach of the data.
void handle_timeline_input(TimelineState& state, const TimelineInput& input,
                           const TimelineRows& rows, std::span<const TimelineRun> runs,
                           const Theme& theme);

}  // namespace fusionscope::ui
