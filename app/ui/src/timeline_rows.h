// The rows of the timeline, one type per kind, after Tracy's TimelineItem: each knows its height,
// its label in the gutter, how it draws its part of the frame and reports what lies under the
// mouse, which items it holds, and what its tooltip says about things that are not items (merged
// blocks, chart samples). A new kind of row is one class here and a line in build_rows().
#pragma once

#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <imgui.h>

#include "fusionscope/analysis/lod.h"
#include "timeline.h"
#include "timeline_draw.h"

namespace fusionscope::ui {

// What a row draws with this frame.
struct RowFrame {
  ImDrawList* draw = nullptr;
  const Theme* theme = nullptr;
  TimelineState* state = nullptr;
  const TimelineRun* run = nullptr;
  int run_index = 0;
  RowGeometry geo;         // the row's rectangle; geo.t0_ns is the run's time at the axis' left
  analysis::LodView view;  // the run's times across the axis
  ImVec4 clip;             // the visible part of the row (x0, y0, x1, y1)
  ImVec2 mouse;            // far away when the mouse is not over the axis
};

// What lies under the mouse in a row.
struct RowHover {
  ItemRef item;          // an item drawn as itself
  bool merged = false;   // else a block of items merged at this zoom
  analysis::LodBox box;  // that block
  bool chart = false;    // else a chart row's sample
  double t_ns = 0;       // the run's time under the mouse
  bool any() const { return item.valid() || merged || chart; }
};

class TimelineRow {
 public:
  explicit TimelineRow(int run) : run_(run) {}
  virtual ~TimelineRow() = default;

  int run() const { return run_; }
  virtual float height(const Theme& theme) const { return theme.row_height; }
  // Space below the row before the next one.
  virtual float gap_after(const Theme& theme) const { return std::round(3.0f * theme.scale); }
  virtual std::string label(const TimelineRun& run) const = 0;
  virtual bool label_is_dim() const { return false; }
  // Lines the gutter shows: the label, then what draw_gutter() adds under it.
  virtual int gutter_lines() const { return 1; }
  // Draws what goes under the label in the gutter (a chart row's scale and legend) at `at`.
  virtual void draw_gutter(ImDrawList*, ImVec2 /*at*/, const TimelineRun&, const TimelineState&,
                           const Theme&) const {}
  // A run's header spans the gutter and the axis and draws its own background.
  virtual bool is_header() const { return false; }
  // Draws the row's content; fills `hover` when the mouse is over something of it.
  virtual void draw(RowFrame& frame, RowHover& hover) const = 0;
  // Whether this row draws `item` (the item's run is this row's run).
  virtual bool holds(const storage::RunData&, const ItemRef&) const { return false; }
  // Appends the items of this row that overlap [t0_ns, t1_ns) of the run's clock (an area
  // selection); `run_index` is the run's place among the drawn runs.
  virtual void items_between(const TimelineRun&, int /*run_index*/, int64_t /*t0_ns*/,
                             int64_t /*t1_ns*/, std::vector<ItemRef>& /*out*/) const {}
  // The tooltip for a hover that is not an item (a merged block, a chart sample).
  virtual void tooltip(const TimelineRun& run, const RowHover& hover, const TimelineState& state,
                       const Theme& theme) const;

  float y = 0;  // top, relative to the rows' content, set by the layout
  float h = 0;
  // The first row of a lane (a thread's top row, a stream) carries the lane's key, so that a
  // click on its label folds or unfolds the lane; `lane_idle` says whether it is idle.
  std::string lane_key;
  bool lane_idle = false;

 private:
  int run_;
};

using TimelineRows = std::vector<std::unique_ptr<TimelineRow>>;

// The rows of `runs`, laid out top to bottom, lanes folded as `lanes` says (null: none);
// *height gets the content's height.
TimelineRows build_rows(std::span<const TimelineRun> runs, const Theme& theme,
                        const LaneCollapse* lanes, float* height);

// The index of the row that draws `item`, or -1.
int row_of(const TimelineRows& rows, std::span<const TimelineRun> runs, const ItemRef& item);

}  // namespace fusionscope::ui
