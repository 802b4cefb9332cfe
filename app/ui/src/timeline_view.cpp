#include <algorithm>

#include "area_panel.h"
#include "find_bar.h"
#include "fusionscope/analysis/format.h"
#include "item_details.h"
#include "ui_probe.h"
#include "views.h"

namespace fusionscope::ui {

namespace {

std::string run_caption(const LoadedRun& run) {
  std::string s = run_label(run.data.info);
  if (run.summary.kernels > 0)
    s += "   " + analysis::format_count(run.summary.kernels) + " kernels, " +
         analysis::format_duration(run.summary.kernel_time_per_iteration_ns()) +
         " GPU per iteration";
  return s;
}

void draw_toolbar(TimelineViewState& s, const Theme& theme) {
  const float gap = 20 * theme.scale;
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("Colour by");
  ImGui::SameLine();
  int mode = s.timeline.color_mode == ColorMode::kByOp ? 0 : 1;
  ImGui::RadioButton("op", &mode, 0);
  ImGui::SameLine();
  ImGui::RadioButton("kernel", &mode, 1);
  s.timeline.color_mode = mode == 0 ? ColorMode::kByOp : ColorMode::kByKernel;
  ImGui::SameLine(0, gap);
  ImGui::TextDisabled("Align runs at");
  ImGui::SameLine();
  const char* names[] = {"run start", "first kernel", "first iteration"};
  int align = static_cast<int>(s.alignment);
  ImGui::SetNextItemWidth(120 * theme.scale);
  if (ImGui::Combo("##align", &align, names, 3)) {
    s.alignment = static_cast<analysis::Alignment>(align);
    s.timeline.fit = FitRequest::kIterations;  // the same iterations stay in view
  }
  ImGui::SameLine(0, gap);
  ImGui::TextDisabled("Time from");
  ImGui::SameLine();
  const char* origins[] = {"the alignment", "run start", "first iteration", "the mark"};
  int origin = static_cast<int>(s.timeline.origin);
  ImGui::SetNextItemWidth(120 * theme.scale);
  if (ImGui::Combo("##origin", &origin, origins, 4))
    s.timeline.origin = static_cast<TimeOrigin>(origin);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Where the ruler counts from; right-click the ruler to mark a point");
  ImGui::SameLine(0, gap);
  if (ImGui::Button("Fit iterations")) s.timeline.fit = FitRequest::kIterations;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The timed iterations (I; F without a selection)");
  ImGui::SameLine();
  if (ImGui::Button("Fit all")) s.timeline.fit = FitRequest::kAll;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Everything, setup included (0)");
  ImGui::SameLine(0, gap);
  ImGui::Checkbox("Fold idle lanes", &s.timeline.lanes.collapse_idle);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Threads and streams with nothing in the timed iterations as one thin row; "
        "click a lane's label to fold or unfold it");
}

// Selects the requested kernel and shows about one iteration around it.
void focus_kernel(TimelineViewState& s, const std::vector<TimelineRun>& runs) {
  for (size_t i = 0; i < runs.size(); ++i) {
    const LoadedRun& run = *runs[i].run;
    if (run.data.info.id != s.focus.run || s.focus.kernel >= run.data.kernels.size()) continue;
    const storage::KernelRecord& k = run.data.kernels[s.focus.kernel];
    const double at = static_cast<double>(k.start_ns - runs[i].origin_ns);
    const double span = std::max(run.summary.kernel_time_per_iteration_ns() * 1.3,
                                 static_cast<double>(k.end_ns - k.start_ns) * 4.0);
    s.timeline.selected = {static_cast<int>(i), ItemKind::kKernel, s.focus.kernel};
    zoom_to(s.timeline, at - span * 0.3, at + span * 0.7, 0.0);
    s.timeline.fit = FitRequest::kNone;
  }
  s.focus.pending = false;
}

}  // namespace

std::vector<TimelineRun> shown_timeline_runs(const AppState& app) {
  std::vector<TimelineRun> runs;
  if (!app.session) return runs;
  for (int64_t id : app.runs.selected) {
    const LoadedRun* run = app.session->find_run(id);
    if (!run ||
        (run->data.kernels.empty() && run->data.api_calls.empty() && run->data.ranges.empty()))
      continue;
    runs.push_back(
        {run, analysis::alignment_origin(run->data, app.timeline.alignment, 0), run_caption(*run)});
  }
  return runs;
}

void draw_timeline_view(AppState& app) {
  TimelineViewState& s = app.timeline;
  const Session& session = *app.session;
  std::vector<TimelineRun> runs = shown_timeline_runs(app);
  std::vector<int64_t> shown;
  for (const TimelineRun& r : runs) shown.push_back(r.run->data.info.id);
  if (shown != s.shown) {
    s.timeline.fit = FitRequest::kIterations;
    s.timeline.selected = {};
    s.shown = shown;
  }

  if (s.focus.pending) focus_kernel(s, runs);
  s.timeline.dram_peak = analysis::ceilings_of(session.info).bandwidth;
  draw_toolbar(s, app.theme);
  draw_find_bar(app, runs);
  const double zero = time_zero(s.timeline, runs);
  for (TimelineRun& r : runs) r.ruler_zero = zero;
  if (app.find.active())
    for (size_t i = 0; i < runs.size() && i < app.find.results.runs.size(); ++i)
      runs[i].matches = &app.find.results.runs[i];
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (runs.empty()) {
    ImGui::Spacing();
    ImGui::TextDisabled("Select a run with a trace in the table above to see its timeline.");
    return;
  }
  // Wider while an area selection's tables are shown.
  const float details_w =
      s.timeline.has_range
          ? std::min(std::max(app.theme.details_width * 1.45f, avail.x * 0.36f), avail.x * 0.45f)
          : std::min(app.theme.details_width, avail.x * 0.4f);
  const float timeline_w = avail.x - details_w - ImGui::GetStyle().ItemSpacing.x;
  ImGui::BeginGroup();
  draw_timeline("main", s.timeline, runs, app.theme, ImVec2(timeline_w, avail.y));
  const TimelineState& t = s.timeline;
  probe_rect(app, "timeline.canvas", t.canvas_x0, t.canvas_y0, t.canvas_x1 - t.canvas_x0,
             t.canvas_y1 - t.canvas_y0);
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginChild("##details", ImVec2(details_w, avail.y), true);
  // The area selection's tables, and under them (or alone) the selected item's details.
  if (draw_area_panel(app, runs)) {
    if (s.timeline.selected.valid()) {
      ImGui::Separator();
      draw_item_details(s.timeline, runs, app.theme);
    }
  } else {
    draw_item_details(s.timeline, runs, app.theme);
  }
  ImGui::EndChild();
}

}  // namespace fusionscope::ui
