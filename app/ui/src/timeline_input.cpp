#include <algorithm>
#include <cmath>

#include "timeline_frame.h"

namespace fusionscope::ui {

namespace {

constexpr double kMinSpanNs = 20.0;

void clamp_view(TimelineState& s, std::span<const TimelineRun> runs) {
  double b, e;
  runs_extent(runs, b, e);
  const double max_span = std::max((e - b) * 4.0, 1e6);
  const double span = std::clamp(s.view_end - s.view_begin, kMinSpanNs, max_span);
  double center = 0.5 * (s.view_begin + s.view_end);
  // Keep part of the data on screen.
  center = std::clamp(center, b - span * 0.45, e + span * 0.45);
  s.view_begin = center - span * 0.5;
  s.view_end = center + span * 0.5;
}

void zoom_at(TimelineState& s, double t, double factor) {
  s.view_begin = t - (t - s.view_begin) * factor;
  s.view_end = t + (s.view_end - t) * factor;
}

// Zooms to an item of one of the runs; false when it has no extent.
bool zoom_to_item(TimelineState& s, std::span<const TimelineRun> runs, const ItemRef& item,
                  double margin) {
  int64_t start, end;
  if (!item.valid() || item.run >= static_cast<int>(runs.size()) ||
      !item_extent(runs[static_cast<size_t>(item.run)].run->data, item, start, end))
    return false;
  const double o = static_cast<double>(runs[static_cast<size_t>(item.run)].origin_ns);
  zoom_to(s, static_cast<double>(start) - o, static_cast<double>(end) - o, margin);
  return true;
}

void wheel(TimelineState& s, const TimelineInput& in, const Theme& theme) {
  const ImGuiIO& io = ImGui::GetIO();
  if (!(in.canvas_hovered || in.ruler_hovered) || io.MouseWheel == 0.0f) return;
  if (io.KeyCtrl || io.KeyShift)
    ImGui::SetScrollY(in.scroll_y - io.MouseWheel * theme.row_height * 3.0f);
  else if (in.mouse_on_axis)
    zoom_at(s, in.axis.t_of(in.mouse.x), std::pow(0.8, static_cast<double>(io.MouseWheel)));
}

// A click selects what is under the mouse (a merged block zooms in instead); a drag pans or
// measures a range.
void drag(TimelineState& s, const TimelineInput& in, const TimelineRows& rows,
          std::span<const TimelineRun> runs) {
  const ImGuiIO& io = ImGui::GetIO();
  for (int button = 0; button < 2; ++button) {
    if ((in.canvas_hovered || (in.ruler_hovered && button == 0)) && ImGui::IsMouseClicked(button) &&
        s.drag == TimelineDrag::kNone) {
      s.drag = (button == 1 || io.KeyShift) && in.mouse_on_axis ? TimelineDrag::kRange
                                                                : TimelineDrag::kPan;
      s.drag_button = button;
      s.drag_on_ruler = in.ruler_hovered;
      s.drag_moved = false;
      s.drag_start = in.mouse;
      s.drag_view_begin = s.view_begin;
      s.drag_view_end = s.view_end;
      s.drag_scroll_y = in.scroll_y;
      if (s.drag == TimelineDrag::kRange) {
        s.range_a = s.range_b = in.axis.t_of(in.mouse.x);
        s.area.y0 = s.area.y1 = in.mouse.y - in.content_y0;
        s.area.all_rows = in.ruler_hovered;
      }
    }
  }
  if (s.drag == TimelineDrag::kNone) return;
  const float dx = in.mouse.x - s.drag_start.x, dy = in.mouse.y - s.drag_start.y;
  if (std::fabs(dx) + std::fabs(dy) > 3.0f) s.drag_moved = true;
  if (ImGui::IsMouseDown(s.drag_button)) {
    if (s.drag_moved && s.drag == TimelineDrag::kPan) {
      const double ns_per_px = (s.drag_view_end - s.drag_view_begin) / (in.axis.x1 - in.axis.x0);
      s.view_begin = s.drag_view_begin - dx * ns_per_px;
      s.view_end = s.drag_view_end - dx * ns_per_px;
      if (!s.drag_on_ruler) ImGui::SetScrollY(s.drag_scroll_y - dy);
    } else if (s.drag_moved && s.drag == TimelineDrag::kRange) {
      s.range_b = in.axis.t_of(std::clamp(in.mouse.x, in.axis.x0, in.axis.x1));
      s.area.y1 = std::clamp(in.mouse.y - in.content_y0, 0.0f, in.content_h);
      s.has_range = true;
    }
    return;
  }
  if (!s.drag_moved && !s.drag_on_ruler) {
    if (s.drag == TimelineDrag::kPan && in.gutter_row >= 0) {
      const TimelineRow& row = *rows[static_cast<size_t>(in.gutter_row)];
      s.lanes.toggle(row.lane_key, row.lane_idle);
    } else if (s.drag == TimelineDrag::kPan) {
      if (in.hover.merged && in.hover_row >= 0) {
        const TimelineRow& row = *rows[static_cast<size_t>(in.hover_row)];
        const double o = static_cast<double>(runs[static_cast<size_t>(row.run())].origin_ns);
        zoom_to(s, static_cast<double>(in.hover.box.start_ns) - o,
                static_cast<double>(in.hover.box.end_ns) - o);
      } else {
        s.selected = in.hover.item;
      }
    } else {
      s.has_range = false;  // a click without a drag clears the measured range
    }
  }
  s.drag = TimelineDrag::kNone;
}

// As in Perfetto: W/S zoom, A/D pan; F, I and 0 fit; Z zooms to the area; Esc clears. With the
// GLFW backend io.KeysDown is indexed by GLFW key codes, which are the ASCII capitals.
void keys(TimelineState& s, const TimelineInput& in, std::span<const TimelineRun> runs) {
  const ImGuiIO& io = ImGui::GetIO();
  const bool over = in.canvas_hovered || in.ruler_hovered;
  if (io.WantTextInput || !(over || ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows)))
    return;
  const double dt = std::min<double>(io.DeltaTime, 0.1);
  const double span = s.view_end - s.view_begin;
  const double pivot =
      over && in.mouse_on_axis ? in.axis.t_of(in.mouse.x) : 0.5 * (s.view_begin + s.view_end);
  if (ImGui::IsKeyDown('W')) zoom_at(s, pivot, std::exp(-2.5 * dt));
  if (ImGui::IsKeyDown('S')) zoom_at(s, pivot, std::exp(2.5 * dt));
  if (ImGui::IsKeyDown('A')) {
    s.view_begin -= span * 1.2 * dt;
    s.view_end -= span * 1.2 * dt;
  }
  if (ImGui::IsKeyDown('D')) {
    s.view_begin += span * 1.2 * dt;
    s.view_end += span * 1.2 * dt;
  }
  // F: the selection, else the timed iterations; I: the timed iterations; 0: everything.
  if (ImGui::IsKeyPressed('F', false) && !zoom_to_item(s, runs, s.selected, 0.15))
    fit_iterations(s, runs);
  if (ImGui::IsKeyPressed('I', false)) fit_iterations(s, runs);
  if (ImGui::IsKeyPressed('0', false)) fit_view(s, runs);
  if (ImGui::IsKeyPressed('Z', false) && s.has_range)
    zoom_to(s, std::min(s.range_a, s.range_b), std::max(s.range_a, s.range_b), 0.02);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
    s.has_range = false;
    s.selected = {};
  }
}

}  // namespace

void handle_timeline_input(TimelineState& s, const TimelineInput& in, const TimelineRows& rows,
                           std::span<const TimelineRun> runs, const Theme& theme) {
  wheel(s, in, theme);
  drag(s, in, rows, runs);
  if (in.canvas_hovered && ImGui::IsMouseDoubleClicked(0) &&
      !zoom_to_item(s, runs, in.hover.item, 0.15) && !in.hover.merged)
    fit_view(s, runs);
  keys(s, in, runs);
  clamp_view(s, runs);
}

}  // namespace fusionscope::ui
