// The Statistics tab: the kernels and ops of one run (count, total, mean, min, max, share),
// filtered by Find's query when asked; the run's timed iterations one by one with their spread and
// outliers; and a duration histogram of the row clicked (or of the iterations). The run follows
// the runs table's selection.
#include <algorithm>
#include <cmath>

#include "chart.h"
#include "fusionscope/analysis/format.h"
#include "histogram_view.h"
#include "text_fit.h"
#include "ui_probe.h"
#include "views.h"

namespace fusionscope::ui {

namespace {

using analysis::format_count;
using analysis::format_duration;
using analysis::KernelStat;
using analysis::StatColumn;

// Picks the run the tables show.
void run_picker(AppState& app, StatsViewState& s) {
  const Session& session = *app.session;
  const LoadedRun* current = session.find_run(s.run);
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("Run");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 22);
  if (ImGui::BeginCombo("##stats_run",
                        current ? run_label(current->data.info).c_str() : "(none)")) {
    for (const auto& run : session.runs) {
      const bool is = run->data.info.id == s.run;
      if (ImGui::Selectable(run_label(run->data.info).c_str(), is)) s.run = run->data.info.id;
      if (is) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  if (current && current->summary.kernels > 0) {
    const analysis::RunSummary& sum = current->summary;
    ImGui::SameLine(0, 16 * app.theme.scale);
    ImGui::TextDisabled("%s kernels (%s timed), %s GPU per iteration",
                        format_count(sum.kernels).c_str(), format_count(sum.timed_kernels).c_str(),
                        format_duration(sum.kernel_time_per_iteration_ns()).c_str());
  }
}

// Applies the table's sort order when the user changes it.
void sort_by_table(std::vector<KernelStat>& stats, const storage::RunData& run) {
  ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
  if (!specs || !specs->SpecsDirty || specs->SpecsCount == 0) return;
  const ImGuiTableColumnSortSpecs& spec = specs->Specs[0];
  analysis::sort_stats(stats, static_cast<StatColumn>(spec.ColumnUserID),
                       spec.SortDirection == ImGuiSortDirection_Ascending, run);
  specs->SpecsDirty = false;
}

void percent_cell(double percent) {
  // A bar under the number: the share of GPU time at a glance.
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  const float h = ImGui::GetTextLineHeight();
  draw->AddRectFilled(
      p, ImVec2(p.x + w * static_cast<float>(std::clamp(percent, 0.0, 100.0) / 100.0), p.y + h),
      IM_COL32(70, 110, 180, 150), 2.0f);
  ImGui::TextUnformatted(analysis::format_percent(percent / 100.0, 1).c_str());
}

bool key_matches(const LoadedRun& run, storage::StringId key, bool is_op,
                 const analysis::NameQuery& q) {
  if (is_op) return key != storage::kNoString && q.matches(run.data.str(key));
  return q.matches(run.names.short_name(key)) || q.matches(run.names.full_name(key)) ||
         q.matches(run.data.str(key));
}

struct TableSpec {
  const char* id;
  const char* key_label;
  bool is_op;
};

void stats_table(const TableSpec& spec, std::vector<KernelStat>& stats, const LoadedRun& run,
                 float height, StatsViewState& s, const analysis::NameQuery* filter, ColorMode mode,
                 const Theme& theme) {
  ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg |
                          ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersInnerV |
                          ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingStretchProp;
  if (height > 0) flags |= ImGuiTableFlags_ScrollY;
  if (!ImGui::BeginTable(spec.id, 8, flags, ImVec2(0, height))) return;
  if (height > 0) ImGui::TableSetupScrollFreeze(0, 1);
  auto col = [](const char* name, StatColumn c, float weight, ImGuiTableColumnFlags extra = 0) {
    ImGui::TableSetupColumn(name, ImGuiTableColumnFlags_WidthStretch | extra, weight,
                            static_cast<ImGuiID>(c));
  };
  col(spec.key_label, StatColumn::kKey, 4.0f);
  col(spec.is_op ? "Kernels" : "Ops", StatColumn::kCount, 0.6f, ImGuiTableColumnFlags_NoSort);
  col("Count", StatColumn::kCount, 0.8f);
  col("Total", StatColumn::kTotal, 1.0f,
      ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
  col("Mean", StatColumn::kMean, 1.0f, ImGuiTableColumnFlags_PreferSortDescending);
  col("Min", StatColumn::kMin, 1.0f, ImGuiTableColumnFlags_PreferSortDescending);
  col("Max", StatColumn::kMax, 1.0f, ImGuiTableColumnFlags_PreferSortDescending);
  col("% GPU time", StatColumn::kPercent, 1.1f, ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableHeadersRow();
  sort_by_table(stats, run.data);
  std::vector<const KernelStat*> rows;
  for (const KernelStat& st : stats)
    if (!filter || key_matches(run, st.key, spec.is_op, *filter)) rows.push_back(&st);
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const KernelStat& st = *rows[static_cast<size_t>(i)];
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::PushID(static_cast<int>(st.key));
      const bool selected = s.selected == st.key && s.selected_is_op == spec.is_op;
      // The swatch is the colour the timeline draws the row's items in (by op or by name).
      storage::StringId colour_key = st.key;
      if (!spec.is_op && mode == ColorMode::kByOp && st.key < s.op_of_name.size() &&
          s.op_of_name[st.key] != storage::kNoString)
        colour_key = s.op_of_name[st.key];
      const float h = ImGui::GetTextLineHeight();
      chart::draw_mark(ImGui::GetWindowDrawList(), ImGui::GetCursorScreenPos(), h * 0.8f,
                       {"", run.colours.of(colour_key), chart::Mark::kSwatch}, theme.scale);
      ImGui::Dummy(ImVec2(h, h));
      ImGui::SameLine();
      const std::string key = spec.is_op ? (st.key ? run.data.str(st.key) : std::string("(no op)"))
                                         : run.names.short_name(st.key);
      // The whole row selects it: its durations go to the histogram.
      if (ImGui::Selectable(
              "##row", selected,
              ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap)) {
        s.selected = selected ? storage::kNoString : st.key;
        s.selected_is_op = spec.is_op;
      }
      ImGui::SameLine();
      text_elided(key);
      if (!spec.is_op && ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
        ImGui::TextUnformatted(run.names.full_name(st.key).c_str());
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
      ImGui::PopID();
      ImGui::TableSetColumnIndex(1);
      ImGui::Text("%u", st.distinct);
      ImGui::TableSetColumnIndex(2);
      ImGui::TextUnformatted(format_count(st.count).c_str());
      ImGui::TableSetColumnIndex(3);
      ImGui::TextUnformatted(format_duration(static_cast<double>(st.total_ns)).c_str());
      ImGui::TableSetColumnIndex(4);
      ImGui::TextUnformatted(format_duration(st.mean_ns).c_str());
      ImGui::TableSetColumnIndex(5);
      ImGui::TextUnformatted(format_duration(static_cast<double>(st.min_ns)).c_str());
      ImGui::TableSetColumnIndex(6);
      ImGui::TextUnformatted(format_duration(static_cast<double>(st.max_ns)).c_str());
      ImGui::TableSetColumnIndex(7);
      percent_cell(st.percent);
    }
  }
  ImGui::EndTable();
}

// The timed iterations one by one: GPU time (first kernel start to last end), kernel time and
// kernels, the spread over them, and the outliers in red.
void iterations_table(const LoadedRun& run, const StatsViewState& s, float height,
                      const Theme& theme) {
  const analysis::RunIterations& its = run.iterations;
  const analysis::IterationSpread& spread = s.spread;
  if (spread.count == 0) {
    ImGui::TextDisabled(
        "No iterations told apart in this run (no \"iteration N\" or repeated "
        "top-level ranges).");
    return;
  }
  ImGui::Text("GPU time per iteration: median %s, mean %s +/- %s",
              format_duration(spread.median).c_str(), format_duration(spread.mean).c_str(),
              format_duration(spread.stddev).c_str());
  ImGui::TextDisabled("%s to %s over %zu timed iterations; %zu outlier%s",
                      format_duration(spread.min).c_str(), format_duration(spread.max).c_str(),
                      spread.count, spread.outliers.size(), spread.outliers.size() == 1 ? "" : "s");
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp |
                                ImGuiTableFlags_ScrollY;
  if (!ImGui::BeginTable("##iterations", 5, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Iteration", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  ImGui::TableSetupColumn("GPU time", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("Kernel time", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("Kernels", ImGuiTableColumnFlags_WidthStretch, 0.7f);
  ImGui::TableSetupColumn("vs median", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(s.timed_iterations.size()));
  while (clipper.Step()) {
    for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
      const size_t i = s.timed_iterations[static_cast<size_t>(row)];
      const analysis::Iteration& it = its.iterations[i];
      const bool outlier = std::binary_search(spread.outliers.begin(), spread.outliers.end(), i);
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      if (outlier)
        ImGui::TextColored(theme.bad, "%ld (outlier)", it.number);
      else
        ImGui::Text("%ld", it.number);
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(
          it.has_gpu() ? format_duration(static_cast<double>(it.gpu_span())).c_str() : "-");
      ImGui::TableSetColumnIndex(2);
      ImGui::TextUnformatted(format_duration(static_cast<double>(it.kernel_ns)).c_str());
      ImGui::TableSetColumnIndex(3);
      ImGui::Text("%u", it.kernels);
      ImGui::TableSetColumnIndex(4);
      if (it.has_gpu() && spread.median > 0)
        ImGui::TextUnformatted(
            analysis::format_percent(static_cast<double>(it.gpu_span()) / spread.median - 1.0, 1)
                .c_str());
    }
  }
  ImGui::EndTable();
}

// The durations the histogram shows: the selected row's kernels, or the iterations' GPU times;
// gathered again only when the selection changes.
void update_histogram(const LoadedRun& run, StatsViewState& s) {
  if (s.histogram_of == s.selected && s.histogram_of_op == s.selected_is_op) return;
  s.histogram_of = s.selected;
  s.histogram_of_op = s.selected_is_op;
  s.histogram_values.clear();
  const storage::RunData& d = run.data;
  if (s.selected != storage::kNoString) {
    const bool masked = s.mask.size() == d.kernels.size();
    for (size_t i = 0; i < d.kernels.size(); ++i) {
      const storage::KernelRecord& k = d.kernels[i];
      if ((masked && !s.mask[i]) || (s.selected_is_op ? k.op : k.name) != s.selected) continue;
      s.histogram_values.push_back(static_cast<double>(k.end_ns - k.start_ns));
    }
    return;
  }
  for (size_t i : s.timed_iterations) {
    const analysis::Iteration& it = run.iterations.iterations[i];
    if (it.has_gpu()) s.histogram_values.push_back(static_cast<double>(it.gpu_span()));
  }
}

}  // namespace

void draw_stats_view(AppState& app) {
  StatsViewState& s = app.stats;
  // Follows the runs table: a run clicked there is the one shown here.
  if (app.runs.current != s.followed) {
    s.followed = app.runs.current;
    if (app.session->find_run(app.runs.current)) s.run = app.runs.current;
  }
  if (!app.session->find_run(s.run)) s.run = app.runs.current;
  run_picker(app, s);
  const LoadedRun* run = app.session->find_run(s.run);
  if (!run) {
    ImGui::TextDisabled("Pick a run.");
    return;
  }
  if (run->summary.timed_split) {
    ImGui::SameLine(0, 16 * app.theme.scale);
    ImGui::Checkbox("timed iterations only", &s.timed_only);
  }
  const analysis::NameQuery* filter = nullptr;
  if (app.find.query) {
    ImGui::SameLine(0, 16 * app.theme.scale);
    const std::string label = "only Find's matches \"" + app.find.query->text() + "\"";
    ImGui::Checkbox(label.c_str(), &s.filter_by_find);
    if (s.filter_by_find) filter = &*app.find.query;
  }
  if (s.computed_for != s.run || s.computed_timed_only != s.timed_only) {
    s.mask = s.timed_only ? analysis::timed_kernel_mask(run->data) : std::vector<bool>{};
    s.kernels = analysis::kernel_stats(run->data, s.mask);
    s.ops = analysis::op_stats(run->data, s.mask);
    s.computed_for = s.run;
    s.computed_timed_only = s.timed_only;
    s.selected = storage::kNoString;
    s.op_of_name.assign(run->data.strings.size(), storage::kNoString);
    for (const storage::KernelRecord& k : run->data.kernels)
      if (k.name < s.op_of_name.size() && s.op_of_name[k.name] == storage::kNoString)
        s.op_of_name[k.name] = k.op;
    s.spread = analysis::iteration_spread(run->iterations, analysis::IterationFigure::kGpuSpan);
    std::sort(s.spread.outliers.begin(), s.spread.outliers.end());
    s.timed_iterations.clear();
    for (size_t i = 0; i < run->iterations.iterations.size(); ++i)
      if (run->iterations.iterations[i].timed) s.timed_iterations.push_back(i);
    s.histogram_of = storage::kNoString - 1;  // gather again
  }
  update_histogram(*run, s);
  if (s.kernels.empty()) {
    ImGui::Spacing();
    ImGui::TextDisabled("This run has no kernels%s%s",
                        run->data.info.trace_status.empty() ? "" : ": ",
                        run->data.info.trace_status.c_str());
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float right_w = std::min(avail.x * 0.38f, ImGui::GetFontSize() * 34);
  const float left_w = avail.x - right_w - ImGui::GetStyle().ItemSpacing.x;
  ImGui::BeginChild("##stats_tables", ImVec2(left_w, avail.y), false);
  {
    // Both tables as tall as their rows when they fit; otherwise they scroll, the kernels'
    // taking 60 % of the space.
    const float room_y = ImGui::GetContentRegionAvail().y;
    const float title = ImGui::GetTextLineHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
    const float row = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y + 1.0f;
    auto rows_h = [&](size_t n) { return row * static_cast<float>(n + 1) + 8.0f; };
    const float room = room_y - 2 * title - ImGui::GetStyle().ItemSpacing.y;
    float kernels_h = 0, ops_h = 0;
    if (rows_h(s.kernels.size()) + rows_h(s.ops.size()) > room) {
      kernels_h = std::max(room * 0.6f, room - rows_h(s.ops.size()));
      ops_h = room - kernels_h;
    }
    const ColorMode mode = app.timeline.timeline.color_mode;
    ImGui::TextUnformatted("Kernels");
    stats_table({"##kernels", "Kernel", false}, s.kernels, *run, kernels_h, s, filter, mode,
                app.theme);
    ImGui::TextUnformatted("Ops");
    stats_table({"##ops", "Op", true}, s.ops, *run, ops_h, s, filter, mode, app.theme);
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##stats_iterations", ImVec2(right_w, avail.y), false);
  {
    const float room = ImGui::GetContentRegionAvail().y;
    ImGui::TextUnformatted("Per iteration");
    // As tall as its rows, up to 45% of the column.
    const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y + 1.0f;
    iterations_table(*run, s,
                     std::clamp(row_h * static_cast<float>(s.timed_iterations.size() + 1) + 6.0f,
                                ImGui::GetFrameHeight() * 3, room * 0.45f),
                     app.theme);
    ImGui::Spacing();
    HistogramSeries series;
    series.values_ns = s.histogram_values;
    if (s.selected == storage::kNoString) {
      series.label = "GPU time per iteration";
      series.colour = IM_COL32(110, 165, 235, 255);
      ImGui::TextUnformatted("Histogram: GPU time per iteration");
      ImGui::TextDisabled("(click a kernel or op for its durations)");
    } else {
      series.label =
          s.selected_is_op ? run->data.str(s.selected) : run->names.short_name(s.selected);
      series.colour = run->colours.of(s.selected);
      ImGui::TextUnformatted("Histogram of its durations");
    }
    draw_duration_histogram("##stats_hist", std::span(&series, 1),
                            ImVec2(ImGui::GetContentRegionAvail().x,
                                   std::max(ImGui::GetContentRegionAvail().y - 8, 80.0f)),
                            app.theme);
  }
  ImGui::EndChild();
}

}  // namespace fusionscope::ui
