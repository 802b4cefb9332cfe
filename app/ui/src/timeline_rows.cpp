#include "timeline_rows.h"

#include <algorithm>
#include <cmath>

#include "fusionscope/analysis/format.h"
#include "metrics_row.h"

namespace fusionscope::ui {

namespace {

// Draws the items of one lane through the level-of-detail pass and reports the one under the
// mouse (or the merged block under it).
void draw_lane_items(RowFrame& f, const analysis::LaneIndex& lane, ItemKind kind, RowHover& hover) {
  std::vector<analysis::LodBox>& boxes = f.state->boxes;
  boxes.clear();
  analysis::build_lod(lane, f.view, boxes);
  const ItemLookContext context{f.run->run, f.state->color_mode, f.theme};
  struct Closure {
    const ItemLookContext* context;
    const analysis::LaneIndex* lane;
    ItemLook (*look)(const ItemLookContext&, uint32_t);
  } closure{&context, &lane, item_type(kind).look};
  const ItemLookFn look{&closure, [](const void* c, uint32_t position) {
                          const auto& cl = *static_cast<const Closure*>(c);
                          return cl.look(*cl.context, cl.lane->item[position]);
                        }};
  f.draw->PushClipRect(ImVec2(f.clip.x, f.clip.y), ImVec2(f.clip.z, f.clip.w), true);
  const int h = draw_row_boxes(f.draw, f.geo, boxes, look, *f.theme, f.mouse);
  f.draw->PopClipRect();
  if (h < 0) return;
  const analysis::LodBox& box = boxes[static_cast<size_t>(h)];
  hover = {};
  if (box.merged()) {
    hover.merged = true;
    hover.box = box;
  } else {
    hover.item = {f.run_index, kind, lane.item[box.first]};
  }
}

bool in(uint32_t i, uint32_t begin, uint32_t end) {
  return i >= begin && i < end;
}

// A lane holding only framework annotations projected onto a GPU stream (imported traces'
// gpu_user_annotation): drawn with that stream's row, not among the CPU threads.
bool gpu_annotations_only(const storage::RunData& d, const storage::CpuLane& lane) {
  if (lane.api_begin != lane.api_end || lane.range_begin == lane.range_end) return false;
  for (uint32_t i = lane.range_begin; i < lane.range_end; ++i) {
    if (d.ranges[i].kind != storage::RangeKind::kGpuAnnotation) return false;
  }
  return true;
}

class RunHeaderRow final : public TimelineRow {
 public:
  using TimelineRow::TimelineRow;
  float height(const Theme& theme) const override { return std::round(theme.row_height * 1.2f); }
  std::string label(const TimelineRun& run) const override { return run.label; }
  bool is_header() const override { return true; }
  void draw(RowFrame&, RowHover&) const override {}
};

// One nesting depth of a CPU thread's ranges.
class RangeRow final : public TimelineRow {
 public:
  RangeRow(int run, int lane, int depth) : TimelineRow(run), lane_(lane), depth_(depth) {}
  std::string label(const TimelineRun& run) const override {
    if (depth_ > 0) return "";
    const storage::CpuLane& lane = run.run->data.cpu_lanes[lane_];
    // A lane of GPU annotations is a stream's (its "thread" is the stream id).
    return run.run->index.cpu[lane_].process +
           (gpu_annotations_only(run.run->data, lane)
                ? "Stream " + std::to_string(lane.thread_id) + " annotations"
                : "Thread " + std::to_string(lane.thread_id));
  }
  bool label_is_dim() const override { return depth_ > 0; }
  float gap_after(const Theme&) const override { return 0; }
  void draw(RowFrame& f, RowHover& hover) const override {
    draw_lane_items(f, f.run->run->index.cpu[lane_].ranges_by_depth[depth_], ItemKind::kRange,
                    hover);
  }
  bool holds(const storage::RunData& d, const ItemRef& item) const override {
    const storage::CpuLane& lane = d.cpu_lanes[lane_];
    return item.kind == ItemKind::kRange && in(item.index, lane.range_begin, lane.range_end) &&
           d.ranges[item.index].depth == depth_;
  }

 private:
  size_t lane_;
  size_t depth_;
};

// A CPU thread's CUDA API calls.
class ApiRow final : public TimelineRow {
 public:
  ApiRow(int run, int lane) : TimelineRow(run), lane_(lane) {}
  std::string label(const TimelineRun& run) const override {
    const analysis::CpuRowIndex& row = run.run->index.cpu[lane_];
    return row.ranges_by_depth.empty()
               ? row.process + "Thread " + std::to_string(row.thread_id) + " API"
               : "CUDA API";
  }
  void draw(RowFrame& f, RowHover& hover) const override {
    draw_lane_items(f, f.run->run->index.cpu[lane_].api_calls, ItemKind::kApiCall, hover);
  }
  bool holds(const storage::RunData& d, const ItemRef& item) const override {
    const storage::CpuLane& lane = d.cpu_lanes[lane_];
    return item.kind == ItemKind::kApiCall && in(item.index, lane.api_begin, lane.api_end);
  }

 private:
  size_t lane_;
};

// A GPU stream: memcpy and memset under the kernels.
class GpuStreamRow final : public TimelineRow {
 public:
  GpuStreamRow(int run, int lane) : TimelineRow(run), lane_(lane) {}
  std::string label(const TimelineRun& run) const override {
    const storage::GpuLane& g = run.run->data.gpu_lanes[lane_];
    return run.run->index.gpu[lane_].process + "GPU " + std::to_string(g.device) + "  stream " +
           std::to_string(g.stream);
  }
  void draw(RowFrame& f, RowHover& hover) const override {
    const analysis::GpuRowIndex& index = f.run->run->index.gpu[lane_];
    draw_lane_items(f, index.memops, ItemKind::kMemop, hover);
    draw_lane_items(f, index.kernels, ItemKind::kKernel, hover);
  }
  bool holds(const storage::RunData& d, const ItemRef& item) const override {
    const storage::GpuLane& lane = d.gpu_lanes[lane_];
    return (item.kind == ItemKind::kKernel && in(item.index, lane.kernel_begin, lane.kernel_end)) ||
           (item.kind == ItemKind::kMemop && in(item.index, lane.memop_begin, lane.memop_end));
  }

 private:
  size_t lane_;
};

// Counters over time under the run's GPU streams, as Nsight Systems' GPU metrics rows.
class MetricsChartRow final : public TimelineRow {
 public:
  MetricsChartRow(int run, MetricsRow row) : TimelineRow(run), row_(row) {}
  float height(const Theme& theme) const override { return metrics_row_height(row_, theme); }
  std::string label(const TimelineRun&) const override { return metrics_row_label(row_); }
  int gutter_lines() const override { return 3; }
  void draw_gutter(ImDrawList* draw, ImVec2 at, const TimelineRun& run, const TimelineState& state,
                   const Theme& theme) const override {
    draw_metrics_row_legend(draw, at, row_, run.run->pm, state.dram_peak, theme);
  }
  void draw(RowFrame& f, RowHover& hover) const override {
    f.draw->PushClipRect(ImVec2(f.clip.x, f.clip.y), ImVec2(f.clip.z, f.clip.w), true);
    draw_metrics_row(f.draw, f.geo, row_, f.run->run->pm, f.state->dram_peak, *f.theme);
    f.draw->PopClipRect();
    if (f.mouse.y >= f.geo.y0 && f.mouse.y < f.geo.y1 && f.mouse.x >= f.geo.x0 &&
        f.mouse.x < f.geo.x1) {
      hover = {};
      hover.chart = true;
      hover.t_ns = f.geo.t0_ns + (f.mouse.x - f.geo.x0) / f.geo.px_per_ns;
    }
  }
  void tooltip(const TimelineRun& run, const RowHover& hover, const TimelineState& state,
               const Theme&) const override {
    metrics_row_tooltip(row_, run.run->pm, hover.t_ns, state.dram_peak);
  }

 private:
  MetricsRow row_;
};

}  // namespace

void TimelineRow::tooltip(const TimelineRun&, const RowHover& hover, const TimelineState&,
                          const Theme&) const {
  if (!hover.merged) return;
  ImGui::Text("%s items merged at this zoom", analysis::format_count(hover.box.count).c_str());
  ImGui::TextDisabled(
      "%s span; click to zoom in",
      analysis::format_duration(static_cast<double>(hover.box.end_ns - hover.box.start_ns))
          .c_str());
}

TimelineRows build_rows(std::span<const TimelineRun> runs, const Theme& theme, float* height) {
  TimelineRows rows;
  const float gap = std::round(6.0f * theme.scale);
  float y = 0;
  auto add = [&](std::unique_ptr<TimelineRow> row, float extra_gap = 0) {
    row->y = y;
    row->h = row->height(theme);
    y += row->h + row->gap_after(theme) + extra_gap;
    rows.push_back(std::move(row));
  };
  for (int r = 0; r < static_cast<int>(runs.size()); ++r) {
    const LoadedRun& run = *runs[static_cast<size_t>(r)].run;
    add(std::make_unique<RunHeaderRow>(r));
    auto add_ranges = [&](int l) {
      const analysis::CpuRowIndex& cpu = run.index.cpu[static_cast<size_t>(l)];
      for (int d = 0; d < static_cast<int>(cpu.ranges_by_depth.size()); ++d)
        add(std::make_unique<RangeRow>(r, l, d));
    };
    std::vector<int> annotation_lanes;  // GPU annotations, drawn above their stream
    for (int l = 0; l < static_cast<int>(run.index.cpu.size()); ++l) {
      if (gpu_annotations_only(run.data, run.data.cpu_lanes[static_cast<size_t>(l)])) {
        annotation_lanes.push_back(l);
        continue;
      }
      add_ranges(l);
      const analysis::CpuRowIndex& cpu = run.index.cpu[static_cast<size_t>(l)];
      if (!cpu.api_calls.empty()) add(std::make_unique<ApiRow>(r, l));
      y += gap;
    }
    for (int l = 0; l < static_cast<int>(run.index.gpu.size()); ++l) {
      const storage::GpuLane& g = run.data.gpu_lanes[static_cast<size_t>(l)];
      // A stream's annotations belong to the same process's stream of that number only.
      for (int a : annotation_lanes) {
        const storage::CpuLane& c = run.data.cpu_lanes[static_cast<size_t>(a)];
        if (c.pid == g.pid && c.thread_id == g.stream) add_ranges(a);
      }
      add(std::make_unique<GpuStreamRow>(r, l));
    }
    // Annotations of a stream that ran no kernel or memop still show, after the streams.
    for (int a : annotation_lanes) {
      const storage::CpuLane& c = run.data.cpu_lanes[static_cast<size_t>(a)];
      const bool drawn = std::any_of(
          run.data.gpu_lanes.begin(), run.data.gpu_lanes.end(),
          [&](const storage::GpuLane& g) { return g.pid == c.pid && g.stream == c.thread_id; });
      if (!drawn) add_ranges(a);
    }
    for (MetricsRow m : metrics_rows(run.pm)) add(std::make_unique<MetricsChartRow>(r, m));
    y += gap;
  }
  if (height) *height = y;
  return rows;
}

int row_of(const TimelineRows& rows, std::span<const TimelineRun> runs, const ItemRef& item) {
  if (!item.valid() || item.run >= static_cast<int>(runs.size())) return -1;
  const storage::RunData& d = runs[static_cast<size_t>(item.run)].run->data;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i]->run() == item.run && rows[i]->holds(d, item)) return static_cast<int>(i);
  return -1;
}

}  // namespace fusionscope::ui
