#include "timeline.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "fusionscope/analysis/format.h"
#include "fusionscope/analysis/time_ruler.h"
#include "item_details.h"
#include "metrics_row.h"
#include "timeline_draw.h"

namespace fusionscope::ui {

namespace {

constexpr double kMinSpanNs = 20.0;

// kMetrics: a chart row of PM-sampled counters (metrics_row.h); its depth is the MetricsRow.
enum class RowKind { kRunHeader, kRanges, kApi, kGpu, kMetrics };

struct Row {
  RowKind kind = RowKind::kRunHeader;
  int run = 0;
  int lane = 0;   // CPU or GPU lane of the run
  int depth = 0;  // range rows
  float y = 0;    // top, relative to the content's top
  float h = 0;
};

std::vector<Row> layout_rows(std::span<const TimelineRun> runs, const Theme& theme, float& height) {
  std::vector<Row> rows;
  float y = 0;
  const float rh = theme.row_height;
  const float gap = std::round(6.0f * theme.scale);
  for (int r = 0; r < static_cast<int>(runs.size()); ++r) {
    const analysis::RunIndex& index = runs[static_cast<size_t>(r)].run->index;
    rows.push_back({RowKind::kRunHeader, r, 0, 0, y, std::round(rh * 1.2f)});
    y += rows.back().h + gap * 0.5f;
    for (int l = 0; l < static_cast<int>(index.cpu.size()); ++l) {
      const analysis::CpuRowIndex& cpu = index.cpu[static_cast<size_t>(l)];
      for (int d = 0; d < static_cast<int>(cpu.ranges_by_depth.size()); ++d) {
        rows.push_back({RowKind::kRanges, r, l, d, y, rh});
        y += rh;
      }
      if (!cpu.api_calls.empty()) {
        rows.push_back({RowKind::kApi, r, l, 0, y, rh});
        y += rh;
      }
      y += gap;
    }
    for (int l = 0; l < static_cast<int>(index.gpu.size()); ++l) {
      rows.push_back({RowKind::kGpu, r, l, 0, y, rh});
      y += rh + gap * 0.5f;
    }
    // Counters over time under the run's GPU streams, as Nsight Systems' GPU metrics rows.
    for (MetricsRow m : metrics_rows(runs[static_cast<size_t>(r)].run->pm)) {
      rows.push_back(
          {RowKind::kMetrics, r, 0, static_cast<int>(m), y, metrics_row_height(m, theme)});
      y += rows.back().h + gap * 0.5f;
    }
    y += gap;
  }
  height = y;
  return rows;
}

int find_row(const std::vector<Row>& rows, RowKind kind, int run, int lane, int depth = 0) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    if (row.kind == kind && row.run == run && row.lane == lane && row.depth == depth)
      return static_cast<int>(i);
  }
  return -1;
}

// The row an item is drawn in, or -1.
int row_of(const std::vector<Row>& rows, const storage::RunData& d, const ItemRef& item) {
  switch (item.kind) {
    case ItemKind::kKernel:
      for (int l = 0; l < static_cast<int>(d.gpu_lanes.size()); ++l)
        if (item.index >= d.gpu_lanes[l].kernel_begin && item.index < d.gpu_lanes[l].kernel_end)
          return find_row(rows, RowKind::kGpu, item.run, l);
      break;
    case ItemKind::kMemop:
      for (int l = 0; l < static_cast<int>(d.gpu_lanes.size()); ++l)
        if (item.index >= d.gpu_lanes[l].memop_begin && item.index < d.gpu_lanes[l].memop_end)
          return find_row(rows, RowKind::kGpu, item.run, l);
      break;
    case ItemKind::kApiCall:
      for (int l = 0; l < static_cast<int>(d.cpu_lanes.size()); ++l)
        if (item.index >= d.cpu_lanes[l].api_begin && item.index < d.cpu_lanes[l].api_end)
          return find_row(rows, RowKind::kApi, item.run, l);
      break;
    case ItemKind::kRange:
      for (int l = 0; l < static_cast<int>(d.cpu_lanes.size()); ++l)
        if (item.index >= d.cpu_lanes[l].range_begin && item.index < d.cpu_lanes[l].range_end)
          return find_row(rows, RowKind::kRanges, item.run, l, d.ranges[item.index].depth);
      break;
    case ItemKind::kNone:
      break;
  }
  return -1;
}

// Looks of each kind of item.
struct LookContext {
  const LoadedRun* run;
  const analysis::LaneIndex* lane;
  ColorMode mode;
  const Theme* theme;
};

ItemLook kernel_look(const void* c, uint32_t pos) {
  const auto& ctx = *static_cast<const LookContext*>(c);
  const storage::KernelRecord& k = ctx.run->data.kernels[ctx.lane->item[pos]];
  const storage::StringId key =
      (ctx.mode == ColorMode::kByOp && k.op != storage::kNoString) ? k.op : k.name;
  return {color_for_name(ctx.run->data.str(key)), ctx.run->names.short_name(k.name)};
}

ItemLook memop_look(const void* c, uint32_t pos) {
  const auto& ctx = *static_cast<const LookContext*>(c);
  const storage::MemopRecord& m = ctx.run->data.memops[ctx.lane->item[pos]];
  if (m.kind == storage::MemopKind::kMemset) return {ctx.theme->memset_fill, "Memset"};
  switch (m.copy_kind) {
    case storage::CopyKind::kHtoD:
      return {ctx.theme->memcpy_fill, "Memcpy HtoD"};
    case storage::CopyKind::kDtoH:
      return {ctx.theme->memcpy_fill, "Memcpy DtoH"};
    case storage::CopyKind::kDtoD:
      return {ctx.theme->memcpy_fill, "Memcpy DtoD"};
    case storage::CopyKind::kPeer:
      return {ctx.theme->memcpy_fill, "Memcpy peer"};
    default:
      return {ctx.theme->memcpy_fill, "Memcpy"};
  }
}

ItemLook api_look(const void* c, uint32_t pos) {
  const auto& ctx = *static_cast<const LookContext*>(c);
  const storage::ApiCallRecord& a = ctx.run->data.api_calls[ctx.lane->item[pos]];
  const ImU32 fill =
      a.domain == storage::ApiDomain::kDriver ? ctx.theme->api_driver : ctx.theme->api_runtime;
  return {fill, ctx.run->data.str(a.name)};
}

ItemLook range_look(const void* c, uint32_t pos) {
  const auto& ctx = *static_cast<const LookContext*>(c);
  const std::string& name = ctx.run->data.str(ctx.run->data.ranges[ctx.lane->item[pos]].name);
  // "iteration 7" and "ProfilerStep#7" take the colour of their kind, not of their number.
  std::string_view key = name;
  while (!key.empty() &&
         (std::isdigit(static_cast<unsigned char>(key.back())) || key.back() == '#'))
    key.remove_suffix(1);
  return {shade(color_for_name(key), 0.9f), name};
}

// Converts between axis time and screen x for the canvas.
struct Axis {
  float x0 = 0, x1 = 0;
  double begin = 0, end = 1;
  double px_per_ns() const { return (x1 - x0) / (end - begin); }
  double t_of(float x) const { return begin + (x - x0) / px_per_ns(); }
  float x_of(double t) const { return x0 + static_cast<float>((t - begin) * px_per_ns()); }
};

void clamp_view(TimelineState& s, std::span<const TimelineRun> runs) {
  double b, e;
  runs_extent(runs, b, e);
  const double max_span = std::max((e - b) * 4.0, 1e6);
  double span = std::clamp(s.view_end - s.view_begin, kMinSpanNs, max_span);
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

std::string gutter_label(const TimelineRun& tr, const Row& row) {
  const storage::RunData& d = tr.run->data;
  switch (row.kind) {
    case RowKind::kRunHeader:
      return tr.label;
    case RowKind::kRanges:
      return row.depth == 0
                 ? "Thread " + std::to_string(d.cpu_lanes[static_cast<size_t>(row.lane)].thread_id)
                 : "";
    case RowKind::kApi:
      return tr.run->index.cpu[static_cast<size_t>(row.lane)].ranges_by_depth.empty()
                 ? "Thread " +
                       std::to_string(d.cpu_lanes[static_cast<size_t>(row.lane)].thread_id) + " API"
                 : "CUDA API";
    case RowKind::kGpu: {
      const storage::GpuLane& g = d.gpu_lanes[static_cast<size_t>(row.lane)];
      return "GPU " + std::to_string(g.device) + "  stream " + std::to_string(g.stream);
    }
    case RowKind::kMetrics:
      return metrics_row_label(static_cast<MetricsRow>(row.depth));
  }
  return {};
}

analysis::Ruler ruler_for(const Axis& axis, const Theme& theme) {
  return analysis::make_ruler(static_cast<int64_t>(std::floor(axis.begin)),
                              static_cast<int64_t>(std::ceil(axis.end)), axis.x1 - axis.x0,
                              110.0f * theme.scale);
}

void draw_ruler(ImDrawList* draw, const Axis& axis, const analysis::Ruler& ruler, ImVec2 min,
                ImVec2 max, const TimelineState& s, const Theme& theme, float mouse_x,
                bool show_cursor) {
  draw->AddRectFilled(min, max, theme.ruler_bg);
  const float font = ImGui::GetFontSize();
  draw->PushClipRect(ImVec2(axis.x0, min.y), max, true);
  for (const analysis::RulerTick& t : ruler.ticks) {
    const float x = std::round(axis.x_of(static_cast<double>(t.t_ns)));
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

// The partners of an item through its correlation id: the launch of a kernel or memop, or what
// an API call launched.
std::vector<ItemRef> correlated(const TimelineRun& tr, const ItemRef& item) {
  std::vector<ItemRef> out;
  const storage::RunData& d = tr.run->data;
  const analysis::CorrelationIndex& corr = tr.run->index.correlation;
  uint32_t id = 0;
  if (item.kind == ItemKind::kKernel) id = d.kernels[item.index].correlation_id;
  if (item.kind == ItemKind::kMemop) id = d.memops[item.index].correlation_id;
  if (item.kind == ItemKind::kApiCall) {
    id = d.api_calls[item.index].correlation_id;
    for (uint32_t k : corr.kernels(id)) out.push_back({item.run, ItemKind::kKernel, k});
    for (uint32_t m : corr.memops(id)) out.push_back({item.run, ItemKind::kMemop, m});
    return out;
  }
  if (auto api = corr.api_call(id)) out.push_back({item.run, ItemKind::kApiCall, *api});
  return out;
}

}  // namespace

bool item_extent(const storage::RunData& d, const ItemRef& item, int64_t& start, int64_t& end) {
  switch (item.kind) {
    case ItemKind::kKernel:
      if (item.index >= d.kernels.size()) return false;
      start = d.kernels[item.index].start_ns;
      end = d.kernels[item.index].end_ns;
      return true;
    case ItemKind::kMemop:
      if (item.index >= d.memops.size()) return false;
      start = d.memops[item.index].start_ns;
      end = d.memops[item.index].end_ns;
      return true;
    case ItemKind::kApiCall:
      if (item.index >= d.api_calls.size()) return false;
      start = d.api_calls[item.index].start_ns;
      end = d.api_calls[item.index].end_ns;
      return true;
    case ItemKind::kRange:
      if (item.index >= d.ranges.size()) return false;
      start = d.ranges[item.index].start_ns;
      end = d.ranges[item.index].end_ns;
      return true;
    case ItemKind::kNone:
      break;
  }
  return false;
}

float timeline_height(std::span<const TimelineRun> runs, const Theme& theme) {
  float content_h = 0;
  layout_rows(runs, theme, content_h);
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

void draw_timeline(const char* id, TimelineState& s, std::span<const TimelineRun> runs,
                   const Theme& theme, ImVec2 size) {
  ImGui::PushID(id);
  ImGuiIO& io = ImGui::GetIO();
  if (s.fit_pending) {
    fit_view(s, runs);
    s.fit_pending = false;
  }
  if (s.selected.valid() && s.selected.run >= static_cast<int>(runs.size())) s.selected = {};
  s.hovered = {};

  float content_h = 0;
  const std::vector<Row> rows = layout_rows(runs, theme, content_h);
  const float ruler_h = std::round(theme.row_height * 1.25f);
  const float lanes_h = std::max(size.y - ruler_h, theme.row_height);
  const bool scrollbar = content_h > lanes_h;
  const float scrollbar_w = scrollbar ? ImGui::GetStyle().ScrollbarSize : 0.0f;

  // Ruler, fixed above the scrolling rows.
  const ImVec2 top = ImGui::GetCursorScreenPos();
  Axis axis;
  axis.x0 = top.x + theme.lane_gutter;
  axis.x1 = std::max(axis.x0 + 10.0f, top.x + size.x - scrollbar_w);
  axis.begin = s.view_begin;
  axis.end = s.view_end;
  s.canvas_x0 = axis.x0;
  s.canvas_x1 = axis.x1;
  ImGui::InvisibleButton("##ruler", ImVec2(size.x, ruler_h), ImGuiButtonFlags_MouseButtonLeft);
  const bool ruler_hovered = ImGui::IsItemHovered();
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
  const bool canvas_hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = io.MousePos;
  const bool mouse_on_axis = mouse.x >= axis.x0 && mouse.x < axis.x1;

  // Vertical grid at the ruler's major ticks.
  const analysis::Ruler ruler = ruler_for(axis, theme);
  {
    draw->PushClipRect(ImVec2(axis.x0, win_min.y), ImVec2(axis.x1, win_max.y), true);
    for (const analysis::RulerTick& t : ruler.ticks)
      if (t.major) {
        const float x = std::round(axis.x_of(static_cast<double>(t.t_ns)));
        draw->AddLine(ImVec2(x, win_min.y), ImVec2(x, win_max.y), theme.grid_line);
      }
    draw->PopClipRect();
  }

  // Every visible row: background, gutter label, boxes from the level-of-detail pass.
  int hovered_merged_row = -1;
  analysis::LodBox hovered_merged{};
  int hovered_metrics_row = -1;  // a PM chart row under the mouse, and the run's time there
  double hovered_metrics_t = 0;
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    const Row& row = rows[ri];
    const float y0 = origin.y + row.y, y1 = y0 + row.h;
    if (y1 < win_min.y || y0 > win_max.y) continue;
    const TimelineRun& tr = runs[static_cast<size_t>(row.run)];
    const LoadedRun& run = *tr.run;
    if (row.kind == RowKind::kRunHeader) {
      draw->AddRectFilled(ImVec2(win_min.x, y0), ImVec2(win_max.x, y1), theme.run_header_bg);
      const std::string label = gutter_label(tr, row);
      draw->AddText(ImVec2(win_min.x + 8 * theme.scale, y0 + (row.h - ImGui::GetFontSize()) * 0.5f),
                    theme.gutter_text, label.c_str());
      continue;
    }
    if (ri % 2 == 1)
      draw->AddRectFilled(ImVec2(win_min.x, y0), ImVec2(win_max.x, y1), theme.row_alt_bg);
    {
      const std::string label = gutter_label(tr, row);
      const ImVec4 clip(win_min.x, y0, axis.x0 - 6 * theme.scale, y1);
      const ImU32 col = row.kind == RowKind::kGpu || row.kind == RowKind::kMetrics || row.depth == 0
                            ? theme.gutter_text
                            : theme.gutter_text_dim;
      draw->AddText(
          ImGui::GetFont(), ImGui::GetFontSize(),
          ImVec2(win_min.x + 14 * theme.scale, y0 + (row.h - ImGui::GetFontSize()) * 0.5f), col,
          label.c_str(), nullptr, 0.0f, &clip);
    }

    RowGeometry geo;
    geo.x0 = axis.x0;
    geo.x1 = axis.x1;
    geo.y0 = y0;
    geo.y1 = y1;
    geo.t0_ns = axis.begin + static_cast<double>(tr.origin_ns);
    geo.px_per_ns = axis.px_per_ns();
    analysis::LodView view;
    view.begin_ns = static_cast<int64_t>(std::floor(geo.t0_ns));
    view.end_ns = static_cast<int64_t>(std::ceil(axis.end + static_cast<double>(tr.origin_ns)));
    view.width_px = axis.x1 - axis.x0;
    view.merge_px = 3.0 * theme.scale;

    auto draw_lane = [&](const analysis::LaneIndex& lane, ItemKind kind,
                         ItemLook (*fn)(const void*, uint32_t)) {
      s.boxes.clear();
      analysis::build_lod(lane, view, s.boxes);
      LookContext ctx{&run, &lane, s.color_mode, &theme};
      draw->PushClipRect(ImVec2(axis.x0, std::max(y0, win_min.y)),
                         ImVec2(axis.x1, std::min(y1, win_max.y)), true);
      const int h = draw_row_boxes(draw, geo, s.boxes, ItemLookFn{&ctx, fn}, theme,
                                   canvas_hovered && mouse_on_axis ? mouse : ImVec2(-1e9f, -1e9f));
      draw->PopClipRect();
      if (h < 0) return;
      const analysis::LodBox& box = s.boxes[static_cast<size_t>(h)];
      if (box.merged()) {
        hovered_merged_row = static_cast<int>(ri);
        hovered_merged = box;
      } else {
        s.hovered = {row.run, kind, lane.item[box.first]};
        hovered_merged_row = -1;
      }
    };
    const analysis::RunIndex& index = run.index;
    switch (row.kind) {
      case RowKind::kRanges:
        draw_lane(index.cpu[static_cast<size_t>(row.lane)]
                      .ranges_by_depth[static_cast<size_t>(row.depth)],
                  ItemKind::kRange, range_look);
        break;
      case RowKind::kApi:
        draw_lane(index.cpu[static_cast<size_t>(row.lane)].api_calls, ItemKind::kApiCall, api_look);
        break;
      case RowKind::kGpu:
        draw_lane(index.gpu[static_cast<size_t>(row.lane)].memops, ItemKind::kMemop, memop_look);
        draw_lane(index.gpu[static_cast<size_t>(row.lane)].kernels, ItemKind::kKernel, kernel_look);
        break;
      case RowKind::kMetrics: {
        draw->PushClipRect(ImVec2(axis.x0, std::max(y0, win_min.y)),
                           ImVec2(axis.x1, std::min(y1, win_max.y)), true);
        draw_metrics_row(draw, geo, static_cast<MetricsRow>(row.depth), run.pm, s.dram_peak, theme);
        draw->PopClipRect();
        if (canvas_hovered && mouse_on_axis && mouse.y >= y0 && mouse.y < y1) {
          hovered_metrics_row = static_cast<int>(ri);
          hovered_metrics_t = geo.t0_ns + (mouse.x - geo.x0) / geo.px_per_ns;
        }
        break;
      }
      case RowKind::kRunHeader:
        break;
    }
  }

  // Outlines and flow lines for the selected and hovered items.
  draw->PushClipRect(ImVec2(axis.x0, win_min.y), ImVec2(axis.x1, win_max.y), true);
  auto rect_of = [&](const ItemRef& item, ImVec2& a, ImVec2& b) -> bool {
    if (!item.valid()) return false;
    const TimelineRun& tr = runs[static_cast<size_t>(item.run)];
    const int ri = row_of(rows, tr.run->data, item);
    int64_t start, end;
    if (ri < 0 || !item_extent(tr.run->data, item, start, end)) return false;
    RowGeometry geo{axis.x0,
                    axis.x1,
                    origin.y + rows[static_cast<size_t>(ri)].y,
                    origin.y + rows[static_cast<size_t>(ri)].y + rows[static_cast<size_t>(ri)].h,
                    axis.begin + static_cast<double>(tr.origin_ns),
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
  {
    ImVec2 a, b;
    if (rect_of(s.hovered, a, b)) draw->AddRect(a, b, theme.hover_outline, 0.0f, 0, 1.0f);
    if (rect_of(s.selected, a, b))
      draw->AddRect(a, b, theme.selected_outline, 0.0f, 0, 2.0f * theme.scale);
  }
  if (s.has_range) {
    const float a = axis.x_of(std::min(s.range_a, s.range_b));
    const float b = axis.x_of(std::max(s.range_a, s.range_b));
    draw->AddRectFilled(ImVec2(a, win_min.y), ImVec2(b, win_max.y), theme.range_fill);
    draw->AddLine(ImVec2(a, win_min.y), ImVec2(a, win_max.y), theme.range_edge);
    draw->AddLine(ImVec2(b, win_min.y), ImVec2(b, win_max.y), theme.range_edge);
  }
  const bool show_cursor = (canvas_hovered || ruler_hovered) && mouse_on_axis;
  if (show_cursor)
    draw->AddLine(ImVec2(mouse.x, win_min.y), ImVec2(mouse.x, win_max.y), theme.grid_line, 1.0f);
  draw->PopClipRect();
  // Separator between the gutter and the axis.
  draw->AddLine(ImVec2(axis.x0 - 1, win_min.y), ImVec2(axis.x0 - 1, win_max.y), theme.grid_line);

  // Input.
  const bool over_timeline = canvas_hovered || ruler_hovered;
  const float scroll_y = ImGui::GetScrollY();
  if (over_timeline && io.MouseWheel != 0.0f) {
    if (io.KeyCtrl || io.KeyShift) {
      ImGui::SetScrollY(scroll_y - io.MouseWheel * theme.row_height * 3.0f);
    } else if (mouse_on_axis) {
      zoom_at(s, axis.t_of(mouse.x), std::pow(0.8, static_cast<double>(io.MouseWheel)));
    }
  }
  for (int button = 0; button < 2; ++button) {
    if ((canvas_hovered || (ruler_hovered && button == 0)) && ImGui::IsMouseClicked(button) &&
        s.drag == TimelineDrag::kNone) {
      s.drag =
          (button == 1 || io.KeyShift) && mouse_on_axis ? TimelineDrag::kRange : TimelineDrag::kPan;
      s.drag_button = button;
      s.drag_on_ruler = ruler_hovered;
      s.drag_moved = false;
      s.drag_start = mouse;
      s.drag_view_begin = s.view_begin;
      s.drag_view_end = s.view_end;
      s.drag_scroll_y = scroll_y;
      if (s.drag == TimelineDrag::kRange) s.range_a = s.range_b = axis.t_of(mouse.x);
    }
  }
  if (s.drag != TimelineDrag::kNone) {
    const float dx = mouse.x - s.drag_start.x, dy = mouse.y - s.drag_start.y;
    if (std::fabs(dx) + std::fabs(dy) > 3.0f) s.drag_moved = true;
    if (ImGui::IsMouseDown(s.drag_button)) {
      if (s.drag_moved && s.drag == TimelineDrag::kPan) {
        const double ns_per_px = (s.drag_view_end - s.drag_view_begin) / (axis.x1 - axis.x0);
        s.view_begin = s.drag_view_begin - dx * ns_per_px;
        s.view_end = s.drag_view_end - dx * ns_per_px;
        if (!s.drag_on_ruler) ImGui::SetScrollY(s.drag_scroll_y - dy);
      } else if (s.drag_moved && s.drag == TimelineDrag::kRange) {
        s.range_b = axis.t_of(std::clamp(mouse.x, axis.x0, axis.x1));
        s.has_range = true;
      }
    } else {
      if (!s.drag_moved && !s.drag_on_ruler) {
        if (s.drag == TimelineDrag::kPan) {
          // A click: select what is under the mouse; a merged block zooms in instead.
          if (hovered_merged_row >= 0) {
            const Row& row = rows[static_cast<size_t>(hovered_merged_row)];
            const double o = static_cast<double>(runs[static_cast<size_t>(row.run)].origin_ns);
            zoom_to(s, static_cast<double>(hovered_merged.start_ns) - o,
                    static_cast<double>(hovered_merged.end_ns) - o);
          } else {
            s.selected = s.hovered;
          }
        } else {
          s.has_range = false;  // a click without a drag clears the measured range
        }
      }
      s.drag = TimelineDrag::kNone;
    }
  }
  if (canvas_hovered && ImGui::IsMouseDoubleClicked(0)) {
    int64_t start, end;
    if (s.hovered.valid() &&
        item_extent(runs[static_cast<size_t>(s.hovered.run)].run->data, s.hovered, start, end)) {
      const double o = static_cast<double>(runs[static_cast<size_t>(s.hovered.run)].origin_ns);
      zoom_to(s, static_cast<double>(start) - o, static_cast<double>(end) - o, 0.15);
    } else if (hovered_merged_row < 0) {
      fit_view(s, runs);
    }
  }
  // Keyboard, as in Perfetto: W/S zoom, A/D pan; F fits the selection (or everything); Esc clears.
  // With the GLFW backend io.KeysDown is indexed by GLFW key codes, which are the ASCII capitals.
  if (!io.WantTextInput &&
      (over_timeline || ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows))) {
    const double dt = std::min<double>(io.DeltaTime, 0.1);
    const double span = s.view_end - s.view_begin;
    const double pivot =
        over_timeline && mouse_on_axis ? axis.t_of(mouse.x) : 0.5 * (s.view_begin + s.view_end);
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
    if (ImGui::IsKeyPressed('F', false)) {
      int64_t start, end;
      if (s.selected.valid() && item_extent(runs[static_cast<size_t>(s.selected.run)].run->data,
                                            s.selected, start, end)) {
        const double o = static_cast<double>(runs[static_cast<size_t>(s.selected.run)].origin_ns);
        zoom_to(s, static_cast<double>(start) - o, static_cast<double>(end) - o, 0.15);
      } else {
        fit_view(s, runs);
      }
    }
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
      s.has_range = false;
      s.selected = {};
    }
  }
  clamp_view(s, runs);

  // Tooltip for what is under the mouse.
  if (canvas_hovered && s.drag == TimelineDrag::kNone) {
    if (s.hovered.valid()) {
      ImGui::BeginTooltip();
      draw_item_tooltip(runs[static_cast<size_t>(s.hovered.run)], s.hovered, theme);
      ImGui::EndTooltip();
    } else if (hovered_metrics_row >= 0) {
      const Row& row = rows[static_cast<size_t>(hovered_metrics_row)];
      ImGui::BeginTooltip();
      metrics_row_tooltip(static_cast<MetricsRow>(row.depth),
                          runs[static_cast<size_t>(row.run)].run->pm, hovered_metrics_t,
                          s.dram_peak);
      ImGui::EndTooltip();
    } else if (hovered_merged_row >= 0) {
      ImGui::BeginTooltip();
      ImGui::Text("%s items merged at this zoom",
                  analysis::format_count(hovered_merged.count).c_str());
      ImGui::TextDisabled("%s span; click to zoom in",
                          analysis::format_duration(
                              static_cast<double>(hovered_merged.end_ns - hovered_merged.start_ns))
                              .c_str());
      ImGui::EndTooltip();
    }
  }
  ImGui::EndChild();
  ImGui::PopStyleColor();
  ImGui::PopStyleVar();

  // The ruler uses the rows' axis, so both agree within the frame.
  draw_ruler(top_draw, axis, ruler, top, ImVec2(top.x + size.x, top.y + ruler_h), s, theme, mouse.x,
             show_cursor);
  {
    const std::string span = analysis::format_duration(s.view_end - s.view_begin);
    top_draw->AddText(
        ImVec2(top.x + 8 * theme.scale, top.y + (ruler_h - ImGui::GetFontSize()) * 0.5f),
        theme.gutter_text_dim, ("view " + span).c_str());
  }
  ImGui::PopID();
}

}  // namespace fusionscope::ui
