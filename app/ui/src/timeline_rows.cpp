#include "timeline_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

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
    const RunMatches* matches;
    ItemKind kind;
    float dim;
    ImU32 background;
  } closure{&context,          &lane, item_type(kind).look, f.run->matches, kind, f.theme->find_dim,
            f.theme->canvas_bg};
  const ItemLookFn look{&closure, [](const void* c, uint32_t position) {
                          const auto& cl = *static_cast<const Closure*>(c);
                          const uint32_t index = cl.lane->item[position];
                          ItemLook l = cl.look(*cl.context, index);
                          // With a Find query: matches outlined, the rest faded.
                          if (cl.matches) {
                            if (cl.matches->matches(cl.kind, index))
                              l.highlight = true;
                            else
                              l.fill = blend(l.fill, cl.background, cl.dim);
                          }
                          return l;
                        }};
  f.draw->PushClipRect(ImVec2(f.clip.x, f.clip.y), ImVec2(f.clip.z, f.clip.w), true);
  const int h = draw_row_boxes(f.draw, f.geo, lane, boxes, look, *f.theme, f.mouse);
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

// The items of a lane that overlap [t0, t1).
void lane_items_between(const analysis::LaneIndex& lane, ItemKind kind, int run_index, int64_t t0,
                        int64_t t1, std::vector<ItemRef>& out) {
  for (size_t i = lane.first_ending_after(t0); i < lane.size() && lane.start[i] < t1; ++i)
    if (lane.end[i] > t0 || (lane.end[i] == lane.start[i] && lane.start[i] >= t0))
      out.push_back({run_index, kind, lane.item[i]});
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
  void items_between(const TimelineRun& run, int run_index, int64_t t0, int64_t t1,
                     std::vector<ItemRef>& out) const override {
    lane_items_between(run.run->index.cpu[lane_].ranges_by_depth[depth_], ItemKind::kRange,
                       run_index, t0, t1, out);
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
  void items_between(const TimelineRun& run, int run_index, int64_t t0, int64_t t1,
                     std::vector<ItemRef>& out) const override {
    lane_items_between(run.run->index.cpu[lane_].api_calls, ItemKind::kApiCall, run_index, t0, t1,
                       out);
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
  void items_between(const TimelineRun& run, int run_index, int64_t t0, int64_t t1,
                     std::vector<ItemRef>& out) const override {
    const analysis::GpuRowIndex& index = run.run->index.gpu[lane_];
    lane_items_between(index.kernels, ItemKind::kKernel, run_index, t0, t1, out);
    lane_items_between(index.memops, ItemKind::kMemop, run_index, t0, t1, out);
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

// A lane folded into one thin row: its label, a rule, and how to unfold it.
class FoldedLaneRow final : public TimelineRow {
 public:
  FoldedLaneRow(int run, std::string label, size_t rows)
      : TimelineRow(run), label_(std::move(label)), rows_(rows) {}
  float height(const Theme& theme) const override { return std::round(theme.row_height * 0.65f); }
  std::string label(const TimelineRun&) const override {
    return "+ " + label_ + " (" + std::to_string(rows_) + (rows_ == 1 ? " row)" : " rows)");
  }
  bool label_is_dim() const override { return true; }
  void draw(RowFrame& f, RowHover&) const override {
    const float mid = std::round((f.geo.y0 + f.geo.y1) * 0.5f);
    f.draw->AddLine(ImVec2(f.geo.x0, mid), ImVec2(f.geo.x1, mid), f.theme->grid_line);
  }

 private:
  std::string label_;
  size_t rows_;
};

// Whether a lane has nothing in [b, e) (its run's timed iterations).
bool idle(const analysis::LaneIndex& lane, int64_t b, int64_t e) {
  const size_t i = lane.first_ending_after(b);
  return i >= lane.size() || lane.start[i] >= e;
}

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

TimelineRows build_rows(std::span<const TimelineRun> runs, const Theme& theme,
                        const LaneCollapse* lanes, float* height) {
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
    const std::string id = std::to_string(run.data.info.id);
    // A lane is idle when nothing of it lies in the timed iterations (or in the run at all).
    const std::optional<analysis::TimeSpan> span = run.timed_span;
    const int64_t b = span ? span->begin : std::numeric_limits<int64_t>::min();
    const int64_t e = span ? span->end : std::numeric_limits<int64_t>::max();
    // Adds a lane's rows, or one folded row in their place; the first carries the lane's key.
    auto add_lane = [&](const std::string& key, bool lane_idle, const std::string& label,
                        std::vector<std::unique_ptr<TimelineRow>> lane_rows) {
      if (lane_rows.empty()) return;
      if (lanes && lanes->folded(key, lane_idle))
        lane_rows = [&] {
          std::vector<std::unique_ptr<TimelineRow>> one;
          one.push_back(std::make_unique<FoldedLaneRow>(r, label, lane_rows.size()));
          return one;
        }();
      lane_rows.front()->lane_key = key;
      lane_rows.front()->lane_idle = lane_idle;
      for (auto& row : lane_rows) add(std::move(row));
    };
    add(std::make_unique<RunHeaderRow>(r));
    auto range_rows = [&](int l, std::vector<std::unique_ptr<TimelineRow>>& out) {
      const analysis::CpuRowIndex& cpu = run.index.cpu[static_cast<size_t>(l)];
      for (int d = 0; d < static_cast<int>(cpu.ranges_by_depth.size()); ++d)
        out.push_back(std::make_unique<RangeRow>(r, l, d));
    };
    auto cpu_idle = [&](int l) {
      const analysis::CpuRowIndex& cpu = run.index.cpu[static_cast<size_t>(l)];
      bool all = idle(cpu.api_calls, b, e);
      for (const analysis::LaneIndex& depth : cpu.ranges_by_depth) all = all && idle(depth, b, e);
      return all;
    };
    std::vector<int> annotation_lanes;  // GPU annotations, drawn above their stream
    for (int l = 0; l < static_cast<int>(run.index.cpu.size()); ++l) {
      const storage::CpuLane& lane = run.data.cpu_lanes[static_cast<size_t>(l)];
      if (gpu_annotations_only(run.data, lane)) {
        annotation_lanes.push_back(l);
        continue;
      }
      std::vector<std::unique_ptr<TimelineRow>> lane_rows;
      range_rows(l, lane_rows);
      if (!run.index.cpu[static_cast<size_t>(l)].api_calls.empty())
        lane_rows.push_back(std::make_unique<ApiRow>(r, l));
      add_lane(id + " cpu " + std::to_string(lane.pid) + ":" + std::to_string(lane.thread_id),
               cpu_idle(l),
               run.index.cpu[static_cast<size_t>(l)].process + "Thread " +
                   std::to_string(lane.thread_id),
               std::move(lane_rows));
      y += gap;
    }
    for (int l = 0; l < static_cast<int>(run.index.gpu.size()); ++l) {
      const storage::GpuLane& g = run.data.gpu_lanes[static_cast<size_t>(l)];
      const analysis::GpuRowIndex& index = run.index.gpu[static_cast<size_t>(l)];
      std::vector<std::unique_ptr<TimelineRow>> lane_rows;
      bool lane_idle = idle(index.kernels, b, e) && idle(index.memops, b, e);
      // A stream's annotations belong to the same process's stream of that number only.
      for (int a : annotation_lanes) {
        const storage::CpuLane& c = run.data.cpu_lanes[static_cast<size_t>(a)];
        if (c.pid == g.pid && c.thread_id == g.stream) {
          range_rows(a, lane_rows);
          lane_idle = lane_idle && cpu_idle(a);
        }
      }
      lane_rows.push_back(std::make_unique<GpuStreamRow>(r, l));
      add_lane(id + " gpu " + std::to_string(g.pid) + ":" + std::to_string(g.device) + ":" +
                   std::to_string(g.stream),
               lane_idle,
               index.process + "GPU " + std::to_string(g.device) + "  stream " +
                   std::to_string(g.stream),
               std::move(lane_rows));
    }
    // Annotations of a stream that ran no kernel or memop still show, after the streams.
    for (int a : annotation_lanes) {
      const storage::CpuLane& c = run.data.cpu_lanes[static_cast<size_t>(a)];
      const bool drawn = std::any_of(
          run.data.gpu_lanes.begin(), run.data.gpu_lanes.end(),
          [&](const storage::GpuLane& g) { return g.pid == c.pid && g.stream == c.thread_id; });
      if (drawn) continue;
      std::vector<std::unique_ptr<TimelineRow>> lane_rows;
      range_rows(a, lane_rows);
      add_lane(id + " annotations " + std::to_string(c.pid) + ":" + std::to_string(c.thread_id),
               cpu_idle(a),
               run.index.cpu[static_cast<size_t>(a)].process + "Stream " +
                   std::to_string(c.thread_id) + " annotations",
               std::move(lane_rows));
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
