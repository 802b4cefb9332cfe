// Colours and sizes: the ImGui style, and the timeline's palette (boxes coloured by a stable hash
// of their name, so one kernel or op keeps its colour across runs and sessions).
#pragma once

#include <cstdint>
#include <string_view>

#include <imgui.h>

namespace fusionscope::ui {

struct Theme {
  float scale = 1.0f;  // high-DPI factor applied to every size below
  bool light = false;  // the light palette (make_theme)
  float row_height = 20.0f;
  float lane_gutter = 170.0f;  // width of the lane labels left of the timeline
  float details_width = 380.0f;

  ImU32 canvas_bg = IM_COL32(30, 32, 36, 255);
  ImU32 row_alt_bg = IM_COL32(36, 38, 43, 255);
  ImU32 run_header_bg = IM_COL32(48, 54, 66, 255);
  ImU32 gutter_text = IM_COL32(200, 204, 212, 255);
  ImU32 gutter_text_dim = IM_COL32(140, 146, 156, 255);
  ImU32 ruler_bg = IM_COL32(40, 43, 49, 255);
  ImU32 ruler_text = IM_COL32(190, 194, 202, 255);
  ImU32 grid_line = IM_COL32(255, 255, 255, 18);
  ImU32 axis_emphasis = IM_COL32(255, 255, 255, 110);  // a chart's reference line (1x speedup)
  ImU32 tick = IM_COL32(150, 155, 165, 255);
  ImU32 box_text = IM_COL32(20, 22, 26, 255);
  ImU32 box_outline = IM_COL32(0, 0, 0, 70);
  ImU32 merged_fill = IM_COL32(120, 126, 138, 255);
  ImU32 density_fill = IM_COL32(110, 150, 220, 255);  // busy fraction of zoomed-out rows
  ImU32 density_bg = IM_COL32(110, 150, 220, 40);     // behind it, the span the items cover
  ImU32 hover_outline = IM_COL32(255, 255, 255, 230);
  ImU32 selected_outline = IM_COL32(255, 214, 64, 255);
  ImU32 flow_line = IM_COL32(255, 214, 64, 220);
  ImU32 find_outline = IM_COL32(255, 255, 255, 255);  // Find's matches
  float find_dim = 0.3f;  // what is not a match, faded towards the background
  ImU32 range_fill = IM_COL32(90, 150, 255, 40);
  ImU32 range_edge = IM_COL32(120, 170, 255, 200);
  ImU32 api_runtime = IM_COL32(150, 168, 190, 255);
  ImU32 api_driver = IM_COL32(170, 156, 196, 255);
  ImU32 api_other = IM_COL32(130, 136, 146, 255);
  ImU32 memcpy_fill = IM_COL32(120, 200, 140, 255);
  ImU32 memset_fill = IM_COL32(200, 190, 110, 255);
  ImVec4 text_dim = ImVec4(0.62f, 0.64f, 0.68f, 1.0f);
  ImVec4 good = ImVec4(0.45f, 0.82f, 0.52f, 1.0f);
  ImVec4 bad = ImVec4(0.95f, 0.47f, 0.42f, 1.0f);
  ImVec4 accent = ImVec4(0.98f, 0.80f, 0.30f, 1.0f);
};

// A theme at the given DPI scale, dark or light.
Theme make_theme(float scale, bool light = false);

// Applies the app's look to the current ImGui style (colours, rounding, spacing at `scale`).
void apply_style(float scale, bool light = false);

// The window's clear colour for the theme (behind everything ImGui draws).
ImVec4 clear_colour(bool light);

// A pastel fill for a name, the same for the same text everywhere; dark text reads on it.
ImU32 color_for_name(std::string_view name);

// `color` moved towards `toward` (the background): weight 1 keeps it, 0 is `toward`.
ImU32 blend(ImU32 color, ImU32 toward, float weight);

// `color` with its brightness multiplied by `factor`.
ImU32 shade(ImU32 color, float factor);

}  // namespace fusionscope::ui
