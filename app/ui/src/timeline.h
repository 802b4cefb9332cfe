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
#include <set>
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

// What the next frame fits the view to.
enum class FitRequest : uint8_t { kNone, kIterations, kAll };

// Where the ruler's 0 is: the runs' alignment point, the first run's start, its first timed
// iteration, or a point marked on the ruler (right-click).
enum class TimeOrigin : uint8_t { kAligned, kRunStart, kFirstIteration, kMarked };

// An area selection: the measured time range across the rows the drag crossed (every row when
// it was dragged on the ruler), with the items that lie in it, as Perfetto's area selection.
struct AreaSelection {
  float y0 = 0, y1 = 0;  // the drag's extent, relative to the rows' content top
  bool all_rows = false;
  std::vector<int> rows;       // this frame's rows that are selected
  std::vector<ItemRef> items;  // what overlaps the range in those rows
  std::string key;             // what `rows` and `items` were gathered for
  uint64_t generation = 0;     // changes whenever `items` do
};

// Lanes (a CPU thread's rows, a GPU stream) folded into one thin row: clicked in the gutter, or
// idle over the timed iterations while `collapse_idle` is on. Keys are "RUN cpu THREAD" and
// "RUN gpu DEVICE:STREAM" (lane_key() in timeline_rows.h).
struct LaneCollapse {
  bool collapse_idle = true;
  std::set<std::string> collapsed;  // folded by a click
  std::set<std::string> expanded;   // unfolded by a click although idle
  bool folded(const std::string& key, bool idle) const {
    return collapsed.count(key) > 0 || (collapse_idle && idle && expanded.count(key) == 0);
  }
  void toggle(const std::string& key, bool idle) {
    if (folded(key, idle)) {
      collapsed.erase(key);
      expanded.insert(key);
    } else {
      collapsed.insert(key);
      expanded.erase(key);
    }
  }
};

struct TimelineState {
  double view_begin = 0;  // visible window on the axis, ns
  double view_end = 1;
  // The next frame fits the view to the timed iterations (everything when the runs have none).
  FitRequest fit = FitRequest::kIterations;
  TimeOrigin origin = TimeOrigin::kFirstIteration;
  double marked_origin = 0;  // axis time of TimeOrigin::kMarked
  double menu_t = 0;         // axis time where the ruler's menu was opened
  ColorMode color_mode = ColorMode::kByOp;
  ItemRef selected;
  ItemRef hovered;  // this frame's
  // Measured range (shift-drag or right-drag), an area selection over the rows it crossed.
  bool has_range = false;
  double range_a = 0, range_b = 0;
  AreaSelection area;
  LaneCollapse lanes;
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
  // The rows drawn last frame, for the state probe: gutter label and screen rectangle.
  struct DrawnRow {
    std::string label;
    float x = 0, y = 0, w = 0, h = 0;
  };
  std::vector<DrawnRow> drawn_rows;
  // Full scale of the PM-sampled DRAM bandwidth rows (metrics_row.h), byte/s: the GPU's peak,
  // set by the view; 0 scales each run's row to its own maximum.
  double dram_peak = 0;
};

// Draws the ruler and the rows of `runs` in a region of `size` and handles input.
void draw_timeline(const char* id, TimelineState& state, std::span<const TimelineRun> runs,
                   const Theme& theme, ImVec2 size);

// The height that shows every row of `runs` and the ruler without scrolling (lanes folded as
// `state` says).
float timeline_height(std::span<const TimelineRun> runs, const Theme& theme,
                      const TimelineState* state = nullptr);

// The axis extent covering every run, shifted by its origin; {0, 1} with nothing to show.
void runs_extent(std::span<const TimelineRun> runs, double& begin, double& end);
void fit_view(TimelineState& state, std::span<const TimelineRun> runs);
// The axis extent of the runs' timed iterations (analysis/iterations.h); false when none has any.
bool iterations_extent(std::span<const TimelineRun> runs, double& begin, double& end);
// Fits the timed iterations, or everything when there are none.
void fit_iterations(TimelineState& state, std::span<const TimelineRun> runs);
// The axis time the ruler counts from.
double time_zero(const TimelineState& state, std::span<const TimelineRun> runs);
// Shows [begin, end) with a margin of `margin` of the width on each side.
void zoom_to(TimelineState& state, double begin, double end, double margin = 0.08);

}  // namespace fusionscope::ui
