#include "timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "fusionscope/analysis/format.h"
#include "fusionscope/analysis/time_ruler.h"
#include "item_details.h"
#include "timeline_frame.h"

namespace fusionscope::ui {

namespace {

constexpr double kMinSpanNs = 20.0;

// Ticks counted from `zero` (axis time): labels are times since the chosen origin.
analysis::Ruler ruler_for(const TimelineAxis& axis, double zero, const Theme& theme) {
  return analysis::make_ruler(static_cast<int64_t>(std::floor(axis.begin - zero)),
                              static_cast<int64_t>(std::ceil(axis.end - zero)), axis.x1 - axis.x0,
                              110.0f * theme.scale);
}

void draw_ruler(ImDrawList* draw, const TimelineAxis& axis, const analysis::Ruler& ruler,
                double zero, ImVec2 min, ImVec2 max, const TimelineState& s, const Theme& theme,
                float mouse_x, bool show_cursor) {
  draw->AddRectFilled(min, max, theme.ruler_bg);
  const float font = ImGui::GetFontSize();
  draw->PushClipRect(ImVec2(axis.x0, min.y), max, true);
  // The origin: a small mark under the ruler's 0.
  const float zx = axis.x_of(zero);
  draw->AddTriangleFilled(ImVec2(zx - 5 * theme.scale, max.y), ImVec2(zx + 5 * theme.scale, max.y),
                          ImVec2(zx, max.y - 7 * theme.scale), theme.range_edge);
  for (const analysis::RulerTick& t : ruler.ticks) {
    const float x = std::round(axis.x_of(static_cast<double>(t.t_ns) + zero));
    const float len = t.major ? (max.y - min.y) * 0.45f : (max.y - min.y) * 0.2f;
    draw->AddLine(ImVec2(x, max.y - len), ImVec2(x, max.y), theme.tick);
    if (t.major) {
      const std::string label = ruler.label(t.t_ns);
      draw->AddText(ImVec2(x + 4.0f * theme.scale, min.y + (max.y - min.y - font) * 0.35f),
                    theme.ruler_text, label.c_str());
    }
  }
  if (s.has_range) {
    const float a = axis.x_of(std::min(s.range_a, s.range_b));
    const float b = axis.x_of(std::max(s.range_a, s.range_b));
    draw->AddRectFilled(ImVec2(a, min.y), ImVec2(b, max.y), theme.range_fill);
    const std::string text = analysis::format_duration(std::fabs(s.range_b - s.range_a));
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    const float cx =
        std::clamp(0.5f * (a + b), axis.x0 + ts.x * 0.5f + 4, axis.x1 - ts.x * 0.5f - 4);
    const ImVec2 p(cx - ts.x * 0.5f, min.y + (max.y - min.y - ts.y) * 0.5f);
    draw->AddRectFilled(ImVec2(p.x - 6, p.y - 1), ImVec2(p.x + ts.x + 6, p.y + ts.y + 1),
                        theme.range_edge, 3.0f);
    draw->AddText(p, theme.box_text, text.c_str());
  }
  if (show_cursor)
    draw->AddLine(ImVec2(mouse_x, min.y), ImVec2(mouse_x, max.y), theme.hover_outline);
  draw->PopClipRect();
  draw->AddLine(ImVec2(min.x, max.y - 1), ImVec2(max.x, max.y - 1), theme.tick);
}

// The gutter label and background of a row (a run's header draws across the whole width).
void draw_row_frame(ImDrawList* draw, const TimelineRow& row, size_t index, const TimelineRun& run,
                    const TimelineState& state, float y0, ImVec2 win_min, ImVec2 win_max,
                    float axis_x0, const Theme& theme) {
  const float y1 = y0 + row.h;
  const std::string label = row.label(run);
  const float line = ImGui::GetTextLineHeight();
  const float text_y =
      y0 + std::max((row.h - line * static_cast<float>(row.gutter_lines())) * 0.5f, 0.0f);
  if (row.is_header()) {
    draw->AddRectFilled(ImVec2(win_min.x, y0), ImVec2(win_max.x, y1), theme.run_header_bg);
    draw->AddText(ImVec2(win_min.x + 8 * theme.scale, text_y), theme.gutter_text, label.c_str());
    return;
  }
  if (index % 2 == 1)
    draw->AddRectFilled(ImVec2(win_min.x, y0), ImVec2(win_max.x, y1), theme.row_alt_bg);
  const ImVec4 clip(win_min.x, y0, axis_x0 - 6 * theme.scale, y1);
  draw->AddText(ImGui::GetFont(), ImGui::GetFontSize(),
                ImVec2(win_min.x + 14 * theme.scale, text_y),
                row.label_is_dim() ? theme.gutter_text_dim : theme.gutter_text, label.c_str(),
                nullptr, 0.0f, &clip);
  if (row.gutter_lines() > 1) {
    draw->PushClipRect(ImVec2(clip.x, clip.y), ImVec2(clip.z, clip.w), true);
    row.draw_gutter(draw, ImVec2(win_min.x + 14 * theme.scale, text_y + line), run, state, theme);
    draw->PopClipRect();
  }
}

// Outlines of the selected and hovered items, and the lines joining each to its launch or work.
void draw_selection(ImDrawList* draw, const TimelineState& s, const TimelineRows& rows,
                    std::span<const TimelineRun> runs, const TimelineAxis& axis, ImVec2 origin,
                    const Theme& theme) {
  auto rect_of = [&](const ItemRef& item, ImVec2& a, ImVec2& b) -> bool {
    const int ri = row_of(rows, runs, item);
    int64_t start, end;
    if (ri < 0 || !item_extent(runs[static_cast<size_t>(item.run)].run->data, item, start, end))
      return false;
    const TimelineRow& row = *rows[static_cast<size_t>(ri)];
    const RowGeometry geo{
        axis.x0,
        axis.x1,
        origin.y + row.y,
        origin.y + row.y + row.h,
        axis.begin + static_cast<double>(runs[static_cast<size_t>(item.run)].origin_ns),
        axis.px_per_ns()};
    item_rect(geo, start, end, a, b);
    return true;
  };
  auto draw_flows = [&](const ItemRef& item) {
    ImVec2 a, b;
    if (!rect_of(item, a, b)) return;
    for (const ItemRef& other : correlated(runs[static_cast<size_t>(item.run)], item)) {
      ImVec2 oa, ob;
      if (!rect_of(other, oa, ob)) continue;
      // From the launch (CPU, above) to the work (GPU, below), starting at the call's start.
      const bool item_is_launch = item.kind == ItemKind::kApiCall;
      const ImVec2 from = item_is_launch ? ImVec2(a.x, b.y) : ImVec2(oa.x, ob.y);
      const ImVec2 to = item_is_launch ? ImVec2(oa.x, oa.y) : ImVec2(a.x, a.y);
      const float dy = std::max(std::fabs(to.y - from.y) * 0.5f, 10.0f);
      draw->AddBezierCubic(from, ImVec2(from.x, from.y + dy), ImVec2(to.x, to.y - dy), to,
                           theme.flow_line, 1.6f * theme.scale);
      draw->AddCircleFilled(to, 3.0f * theme.scale, theme.flow_line);
      draw->AddRect(oa, ob, theme.flow_line, 0.0f, 0, 1.5f * theme.scale);
    }
  };
  if (s.selected.valid()) draw_flows(s.selected);
  if (s.hovered.valid() && s.hovered != s.selected) draw_flows(s.hovered);
  ImVec2 a, b;
  if (rect_of(s.hovered, a, b)) draw->AddRect(a, b, theme.hover_outline, 0.0f, 0, 1.0f);
  if (rect_of(s.selected, a, b))
    draw->AddRect(a, b, theme.selected_outline, 0.0f, 0, 2.0f * theme.scale);
}

// The rows an area selection crosses and the items in them, when the range or the rows changed.
void gather_area(TimelineState& s, const TimelineRows& rows, std::span<const TimelineRun> runs) {
  AreaSelection& area = s.area;
  if (!s.has_range) {
    if (!area.key.empty()) {
      area.rows.clear();
      area.items.clear();
      area.key.clear();
      ++area.generation;
    }
    return;
  }
  const double a = std::min(s.range_a, s.range_b), b = std::max(s.range_a, s.range_b);
  const float y0 = std::min(area.y0, area.y1), y1 = std::max(area.y0, area.y1);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.0f %.0f %.1f %.1f %d %zu", a, b, y0, y1, area.all_rows ? 1 : 0,
                rows.size());
  std::string key = buf;
  for (const TimelineRun& r : runs)
    key += " " + std::to_string(r.run->data.info.id) + "@" + std::to_string(r.origin_ns);
  if (key == area.key) return;
  area.key = std::move(key);
  area.rows.clear();
  area.items.clear();
  ++area.generation;
  for (size_t i = 0; i < rows.size(); ++i) {
    const TimelineRow& row = *rows[i];
    if (row.is_header()) continue;
    if (!area.all_rows && (row.y + row.h <= y0 || row.y > y1)) continue;
    area.rows.push_back(static_cast<int>(i));
    const TimelineRun& run = runs[static_cast<size_t>(row.run())];
    const double o = static_cast<double>(run.origin_ns);
    row.items_between(run, row.run(), static_cast<int64_t>(std::floor(a + o)),
                      static_cast<int64_t>(std::ceil(b + o)), area.items);
  }
}

}  // namespace

float timeline_height(std::span<const TimelineRun> runs, const Theme& theme,
                      const TimelineState* state) {
  float content_h = 0;
  build_rows(runs, theme, state ? &state->lanes : nullptr, &content_h);
  return content_h + std::round(theme.row_height * 1.25f);
}

void runs_extent(std::span<const TimelineRun> runs, double& begin, double& end) {
  begin = std::numeric_limits<double>::max();
  end = std::numeric_limits<double>::lowest();
  for (const TimelineRun& r : runs) {
    const storage::RunData& d = r.run->data;
    if (d.end_ns <= d.begin_ns && d.kernels.empty() && d.api_calls.empty()) continue;
    begin = std::min(begin, static_cast<double>(d.begin_ns - r.origin_ns));
    end = std::max(end, static_cast<double>(d.end_ns - r.origin_ns));
  }
  if (begin > end) {
    begin = 0;
    end = 1;
  }
  if (end - begin < kMinSpanNs) end = begin + kMinSpanNs;
}

void zoom_to(TimelineState& s, double begin, double end, double margin) {
  const double span = std::max(end - begin, kMinSpanNs);
  s.view_begin = begin - span * margin;
  s.view_end = begin + span * (1.0 + margin);
}

void fit_view(TimelineState& s, std::span<const TimelineRun> runs) {
  double b, e;
  runs_extent(runs, b, e);
  zoom_to(s, b, e, 0.02);
}

bool iterations_extent(std::span<const TimelineRun> runs, double& begin, double& end) {
  bool any = false;
  for (const TimelineRun& r : runs) {
    const std::optional<analysis::TimeSpan> span = r.run->timed_span;
    if (!span) continue;
    const double b = static_cast<double>(span->begin - r.origin_ns);
    const double e = static_cast<double>(span->end - r.origin_ns);
    begin = any ? std::min(begin, b) : b;
    end = any ? std::max(end, e) : e;
    any = true;
  }
  return any;
}

void fit_iterations(TimelineState& s, std::span<const TimelineRun> runs) {
  double b, e;
  if (iterations_extent(runs, b, e))
    zoom_to(s, b, e, 0.02);
  else
    fit_view(s, runs);
}

double time_zero(const TimelineState& s, std::span<const TimelineRun> runs) {
  if (s.origin == TimeOrigin::kMarked) return s.marked_origin;
  if (runs.empty() || s.origin == TimeOrigin::kAligned) return 0;
  const TimelineRun& r = runs.front();
  if (s.origin == TimeOrigin::kFirstIteration)
    for (const analysis::Iteration& it : r.run->iterations.iterations)
      if (it.timed) return static_cast<double>(it.begin() - r.origin_ns);
  return static_cast<double>(r.run->data.begin_ns - r.origin_ns);
}

void draw_timeline(const char* id, TimelineState& s, std::span<const TimelineRun> runs,
                   const Theme& theme, ImVec2 size) {
  ImGui::PushID(id);
  if (s.fit == FitRequest::kIterations) fit_iterations(s, runs);
  if (s.fit == FitRequest::kAll) fit_view(s, runs);
  s.fit = FitRequest::kNone;
  if (s.selected.valid() && s.selected.run >= static_cast<int>(runs.size())) s.selected = {};
  s.hovered = {};

  float content_h = 0;
  const TimelineRows rows = build_rows(runs, theme, &s.lanes, &content_h);
  const float ruler_h = std::round(theme.row_height * 1.25f);
  const float lanes_h = std::max(size.y - ruler_h, theme.row_height);
  const float scrollbar_w = content_h > lanes_h ? ImGui::GetStyle().ScrollbarSize : 0.0f;

  // Ruler, fixed above the scrolling rows.
  TimelineInput in;
  const ImVec2 top = ImGui::GetCursorScreenPos();
  TimelineAxis& axis = in.axis;
  axis.x0 = top.x + theme.lane_gutter;
  axis.x1 = std::max(axis.x0 + 10.0f, top.x + size.x - scrollbar_w);
  axis.begin = s.view_begin;
  axis.end = s.view_end;
  s.canvas_x0 = axis.x0;
  s.canvas_x1 = axis.x1;
  ImGui::InvisibleButton("##ruler", ImVec2(size.x, ruler_h),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  in.ruler_hovered = ImGui::IsItemHovered();
  // Right-click on the ruler: where time is counted from.
  if (ImGui::IsItemClicked(ImGuiMouseButton_Right)) s.menu_t = axis.t_of(ImGui::GetIO().MousePos.x);
  if (ImGui::BeginPopupContextItem("##ruler_menu")) {
    if (ImGui::MenuItem("Time 0 here")) {
      s.origin = TimeOrigin::kMarked;
      s.marked_origin = s.menu_t;
    }
    if (ImGui::MenuItem("Time from the first iteration", nullptr,
                        s.origin == TimeOrigin::kFirstIteration))
      s.origin = TimeOrigin::kFirstIteration;
    if (ImGui::MenuItem("Time from the run's start", nullptr, s.origin == TimeOrigin::kRunStart))
      s.origin = TimeOrigin::kRunStart;
    if (ImGui::MenuItem("Time from the alignment point", nullptr, s.origin == TimeOrigin::kAligned))
      s.origin = TimeOrigin::kAligned;
    ImGui::EndPopup();
  }
  const double zero = time_zero(s, runs);
  ImDrawList* top_draw = ImGui::GetWindowDrawList();
  ImGui::SetCursorScreenPos(ImVec2(top.x, top.y + ruler_h));  // rows right below, no item spacing

  // Rows.
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::PushStyleColor(ImGuiCol_ChildBg, ImGui::ColorConvertU32ToFloat4(theme.canvas_bg));
  ImGui::BeginChild("##rows", ImVec2(size.x, lanes_h), false,
                    ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoMove);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 win_min = ImGui::GetWindowPos();
  const ImVec2 win_max(win_min.x + ImGui::GetWindowWidth(), win_min.y + ImGui::GetWindowHeight());
  const ImVec2 origin = ImGui::GetCursorScreenPos();  // content top-left, scrolled
  ImGui::InvisibleButton("##canvas",
                         ImVec2(std::max(size.x - scrollbar_w, 1.0f), std::max(content_h, lanes_h)),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  in.canvas_hovered = ImGui::IsItemHovered();
  in.mouse = ImGui::GetIO().MousePos;
  in.mouse_on_axis = in.mouse.x >= axis.x0 && in.mouse.x < axis.x1;
  in.scroll_y = ImGui::GetScrollY();
  in.content_y0 = origin.y;
  in.content_h = content_h;
  s.canvas_y0 = win_min.y;
  s.canvas_y1 = win_max.y;

  // Vertical grid at the ruler's major ticks.
  const analysis::Ruler ruler = ruler_for(axis, zero, theme);
  draw->PushClipRect(ImVec2(axis.x0, win_min.y), ImVec2(axis.x1, win_max.y), true);
  for (const analysis::RulerTick& t : ruler.ticks)
    if (t.major) {
      const float x = std::round(axis.x_of(static_cast<double>(t.t_ns) + zero));
      draw->AddLine(ImVec2(x, win_min.y), ImVec2(x, win_max.y), theme.grid_line);
    }
  draw->PopClipRect();

  // Every visible row: its frame, then what it draws; the row under the mouse says what is there.
  const ImVec2 far_away(-1e9f, -1e9f);
  s.drawn_rows.clear();
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    const TimelineRow& row = *rows[ri];
    const float y0 = origin.y + row.y, y1 = y0 + row.h;
    if (y1 < win_min.y || y0 > win_max.y) continue;
    const TimelineRun& tr = runs[static_cast<size_t>(row.run())];
    s.drawn_rows.push_back({row.label(tr), axis.x0, y0, axis.x1 - axis.x0, row.h});
    // The label of a lane's first row folds and unfolds the lane.
    if (!row.lane_key.empty() && in.canvas_hovered && in.mouse.x < axis.x0 && in.mouse.y >= y0 &&
        in.mouse.y < y1) {
      in.gutter_row = static_cast<int>(ri);
      draw->AddRectFilled(ImVec2(win_min.x, y0), ImVec2(axis.x0 - 1, y1), theme.range_fill);
    }
    draw_row_frame(draw, row, ri, tr, s, y0, win_min, win_max, axis.x0, theme);
    if (row.is_header()) continue;
    RowFrame f;
    f.draw = draw;
    f.theme = &theme;
    f.state = &s;
    f.run = &tr;
    f.run_index = row.run();
    f.geo = {axis.x0,         axis.x1, y0, y1, axis.begin + static_cast<double>(tr.origin_ns),
             axis.px_per_ns()};
    f.view.begin_ns = static_cast<int64_t>(std::floor(f.geo.t0_ns));
    f.view.end_ns = static_cast<int64_t>(std::ceil(axis.end + static_cast<double>(tr.origin_ns)));
    f.view.width_px = axis.x1 - axis.x0;
    f.view.merge_px = 3.0 * theme.scale;
    f.clip = ImVec4(axis.x0, std::max(y0, win_min.y), axis.x1, std::min(y1, win_max.y));
    f.mouse = in.canvas_hovered && in.mouse_on_axis ? in.mouse : far_away;
    RowHover hover;
    row.draw(f, hover);
    if (hover.any()) {
      in.hover_row = static_cast<int>(ri);
      in.hover = hover;
    }
  }
  s.hovered = in.hover.item;

  // Selection, range and cursor over the rows.
  draw->PushClipRect(ImVec2(axis.x0, win_min.y), ImVec2(axis.x1, win_max.y), true);
  draw_selection(draw, s, rows, runs, axis, origin, theme);
  if (s.has_range) {
    const float a = axis.x_of(std::min(s.range_a, s.range_b));
    const float b = axis.x_of(std::max(s.range_a, s.range_b));
    draw->AddRectFilled(ImVec2(a, win_min.y), ImVec2(b, win_max.y), theme.range_fill);
    draw->AddLine(ImVec2(a, win_min.y), ImVec2(a, win_max.y), theme.range_edge);
    draw->AddLine(ImVec2(b, win_min.y), ImVec2(b, win_max.y), theme.range_edge);
  }
  const bool show_cursor = (in.canvas_hovered || in.ruler_hovered) && in.mouse_on_axis;
  if (show_cursor)
    draw->AddLine(ImVec2(in.mouse.x, win_min.y), ImVec2(in.mouse.x, win_max.y), theme.grid_line,
                  1.0f);
  draw->PopClipRect();
  // Separator between the gutter and the axis.
  draw->AddLine(ImVec2(axis.x0 - 1, win_min.y), ImVec2(axis.x0 - 1, win_max.y), theme.grid_line);

  handle_timeline_input(s, in, rows, runs, theme);
  gather_area(s, rows, runs);
  if (s.has_range) {
    // The selected rows tinted within the range.
    draw->PushClipRect(ImVec2(axis.x0, win_min.y), ImVec2(axis.x1, win_max.y), true);
    const float a = axis.x_of(std::min(s.range_a, s.range_b));
    const float b = axis.x_of(std::max(s.range_a, s.range_b));
    for (int ri : s.area.rows) {
      const TimelineRow& row = *rows[static_cast<size_t>(ri)];
      draw->AddRectFilled(ImVec2(a, origin.y + row.y), ImVec2(b, origin.y + row.y + row.h),
                          theme.range_fill);
    }
    draw->PopClipRect();
  }

  // Tooltip for what is under the mouse: an item says it itself, anything else its row.
  if (in.canvas_hovered && s.drag == TimelineDrag::kNone && in.gutter_row >= 0)
    ImGui::SetTooltip("Click to fold or unfold this lane");
  if (in.canvas_hovered && s.drag == TimelineDrag::kNone && in.hover_row >= 0) {
    const TimelineRow& row = *rows[static_cast<size_t>(in.hover_row)];
    const TimelineRun& tr = runs[static_cast<size_t>(row.run())];
    ImGui::BeginTooltip();
    if (in.hover.item.valid())
      draw_item_tooltip(tr, in.hover.item, theme);
    else
      row.tooltip(tr, in.hover, s, theme);
    ImGui::EndTooltip();
  }
  ImGui::EndChild();
  ImGui::PopStyleColor();
  ImGui::PopStyleVar();

  // The ruler uses the rows' axis, so both agree within the frame.
  draw_ruler(top_draw, axis, ruler, zero, top, ImVec2(top.x + size.x, top.y + ruler_h), s, theme,
             in.mouse.x, show_cursor);
  const std::string span = "view " + analysis::format_duration(s.view_end - s.view_begin);
  top_draw->AddText(
      ImVec2(top.x + 8 * theme.scale, top.y + (ruler_h - ImGui::GetFontSize()) * 0.5f),
      theme.gutter_text_dim, span.c_str());
  ImGui::PopID();
}

}  // namespace fusionscope::ui
