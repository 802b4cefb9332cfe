// The timeline, modelled on Tracy's and Perfetto's: per run, CPU thread rows (NVTX and framework
// ranges nested by depth, then CUDA API calls) above GPU stream rows (kernels, memcpy, memset) and
// chart rows of sampled counters. Mouse wheel zooms at the cursor, dragging pans, W/S zoom and
// A/D pan, double-click zooms to an item, shift-drag or right-drag measures a range, F fits.
// Several runs share one time axis, each shifted so that its own origin is at 0.
//
// The rows are one type per kind (timeline_rows.h), the items one type per record kind
// (timeline_items.h); this file lays them out and draws the frame, timeline_input.cpp turns the
// mouse and keys into changes of the state.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <imgui.h>

#include "fusionscope/analysis/lod.h"
#include "session.h"
#include "theme.h"
#include "timeline_items.h"

namespace fusionscope::ui {

enum class TimelineDrag { kNone, kPan, kRange };

struct TimelineState {
  double view_begin = 0;  // visible window on the axis, ns
  double view_end = 1;
  bool fit_pending = true;  // fit the view to the runs on the next frame
  ColorMode color_mode = ColorMode::kByOp;
  ItemRef selected;
  ItemRef hovered;  // this frame's
  // Measured range (shift-drag or right-drag).
  bool has_range = false;
  double range_a = 0, range_b = 0;
  // Mouse drag in progress.
  TimelineDrag drag = TimelineDrag::kNone;
  int drag_button = 0;
  bool drag_on_ruler = false;
  bool drag_moved = false;
  ImVec2 drag_start;
  double drag_view_begin = 0, drag_view_end = 0;
  float drag_scroll_y = 0;
  // Where the canvas (the time axis across the rows) was last frame, screen pixels.
  float canvas_x0 = 0, canvas_x1 = 0;
  float canvas_y0 = 0, canvas_y1 = 0;
  std::vector<analysis::LodBox> boxes;  // scratch reused by every row, every frame
  // Full scale of the PM-sampled DRAM bandwidth rows (metrics_row.h), byte/s: the GPU's peak,
  // set by the view; 0 scales each run's row to its own maximum.
  double dram_peak = 0;
};

// Draws the ruler and the rows of `runs` in a region of `size` and handles input.
void draw_timeline(const char* id, TimelineState& state, std::span<const TimelineRun> runs,
                   const Theme& theme, ImVec2 size);

// The height that shows every row of `runs` and the ruler without scrolling.
float timeline_height(std::span<const TimelineRun> runs, const Theme& theme);

// The axis extent covering every run, shifted by its origin; {0, 1} with nothing to show.
void runs_extent(std::span<const TimelineRun> runs, double& begin, double& end);
void fit_view(TimelineState& state, std::span<const TimelineRun> runs);
// Shows [begin, end) with a margin of `margin` of the width on each side.
void zoom_to(TimelineState& state, double begin, double end, double margin = 0.08);

}  // namespace fusionscope::ui
