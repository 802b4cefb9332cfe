// Drawing one timeline row from the boxes the level-of-detail pass produced. Separate from the
// timeline's layout and input so the frame-build benchmark measures the same code the app runs.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <imgui.h>

#include "fusionscope/analysis/lod.h"
#include "theme.h"

namespace fusionscope::ui {

// Where a row is on screen and which times it shows.
struct RowGeometry {
  float x0 = 0, x1 = 0;  // horizontal extent of the time axis, screen pixels
  float y0 = 0, y1 = 0;  // the row's vertical extent
  double t0_ns = 0;      // absolute time drawn at x0
  double px_per_ns = 0;
  float x_of(double t_ns) const { return x0 + static_cast<float>((t_ns - t0_ns) * px_per_ns); }
};

// How one item looks: its fill and the label drawn inside when it fits.
struct ItemLook {
  ImU32 fill = 0;
  std::string_view label;
  bool highlight = false;  // outlined (a Find match)
};

// Produces the look of the item at a LaneIndex position. A plain function pointer with a context,
// so the per-box call stays cheap.
struct ItemLookFn {
  const void* context = nullptr;
  ItemLook (*fn)(const void* context, uint32_t position) = nullptr;
  ItemLook operator()(uint32_t position) const { return fn(context, position); }
};

// Draws `boxes` (from analysis::build_lod over `lane`) into `draw`. A block of items merged at this
// zoom is drawn as its density: per pixel column, a bar as tall as the share of the column's time
// the items cover. Returns the index in `boxes` of the box under `mouse`, or -1.
int draw_row_boxes(ImDrawList* draw, const RowGeometry& row, const analysis::LaneIndex& lane,
                   std::span<const analysis::LodBox> boxes, ItemLookFn look, const Theme& theme,
                   ImVec2 mouse);

// The density of [a, b) (screen x) of a row: busy fraction per pixel column.
void draw_density(ImDrawList* draw, const RowGeometry& row, const analysis::LaneIndex& lane,
                  float a, float b, const Theme& theme);

// The screen rectangle of [start, end) in a row, at least one pixel wide.
void item_rect(const RowGeometry& row, int64_t start_ns, int64_t end_ns, ImVec2& min, ImVec2& max);

}  // namespace fusionscope::ui
