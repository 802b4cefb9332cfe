#include <algorithm>

#include "fusionscope/analysis/format.h"
#include "views.h"

namespace fusionscope::ui {

namespace {

using analysis::KernelStat;
using analysis::StatColumn;

// Picks the run the tables show.
void run_picker(AppState& app, StatsViewState& s) {
  const Session& session = *app.session;
  const LoadedRun* current = session.find_run(s.run);
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("Run");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 26);
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
    ImGui::SameLine(0, 24 * app.theme.scale);
    ImGui::TextDisabled("%s kernels (%s in timed iterations), %s GPU time per iteration",
                        analysis::format_count(sum.kernels).c_str(),
                        analysis::format_count(sum.timed_kernels).c_str(),
                        analysis::format_duration(sum.kernel_time_per_iteration_ns()).c_str());
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

void percent_cell(double percent, const Theme& theme) {
  // A bar under the number: the share of GPU time at a glance.
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  const float h = ImGui::GetTextLineHeight();
  draw->AddRectFilled(
      p, ImVec2(p.x + w * static_cast<float>(std::clamp(percent, 0.0, 100.0) / 100.0), p.y + h),
      IM_COL32(70, 110, 180, 150), 2.0f);
  ImGui::Text("%.1f %%", percent);
  (void)theme;
}

void stats_table(const char* id, const char* key_label, std::vector<KernelStat>& stats,
                 const LoadedRun& run, bool keys_are_kernels, float height, const Theme& theme) {
  // height 0: as tall as the rows; otherwise that height, scrolling, with the header kept.
  ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg |
                          ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersInnerV |
                          ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingStretchProp;
  if (height > 0) flags |= ImGuiTableFlags_ScrollY;
  if (!ImGui::BeginTable(id, 8, flags, ImVec2(0, height))) return;
  if (height > 0) ImGui::TableSetupScrollFreeze(0, 1);
  auto col = [](const char* name, StatColumn c, float weight, ImGuiTableColumnFlags extra = 0) {
    ImGui::TableSetupColumn(name, ImGuiTableColumnFlags_WidthStretch | extra, weight,
                            static_cast<ImGuiID>(c));
  };
  col(key_label, StatColumn::kKey, 4.0f);
  col(keys_are_kernels ? "Ops" : "Kernels", StatColumn::kCount, 0.7f, ImGuiTableColumnFlags_NoSort);
  col("Count", StatColumn::kCount, 0.8f);
  col("Total", StatColumn::kTotal, 1.0f,
      ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
  col("Mean", StatColumn::kMean, 1.0f, ImGuiTableColumnFlags_PreferSortDescending);
  col("Min", StatColumn::kMin, 1.0f, ImGuiTableColumnFlags_PreferSortDescending);
  col("Max", StatColumn::kMax, 1.0f, ImGuiTableColumnFlags_PreferSortDescending);
  col("% GPU time", StatColumn::kPercent, 1.2f, ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableHeadersRow();
  sort_by_table(stats, run.data);
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(stats.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const KernelStat& st = stats[static_cast<size_t>(i)];
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      const std::string key = keys_are_kernels
                                  ? run.names.short_name(st.key)
                                  : (st.key ? run.data.str(st.key) : std::string("(no op)"));
      const ImU32 swatch = color_for_name(run.data.str(st.key));
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float sz = ImGui::GetTextLineHeight() * 0.7f;
      const float off = (ImGui::GetTextLineHeight() - sz) * 0.5f;
      ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + off),
                                                ImVec2(p.x + sz, p.y + off + sz), swatch, 2.0f);
      ImGui::Dummy(ImVec2(sz, sz));
      ImGui::SameLine();
      ImGui::TextUnformatted(key.c_str());
      if (keys_are_kernels && ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
        ImGui::TextUnformatted(run.names.full_name(st.key).c_str());
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
      ImGui::TableSetColumnIndex(1);
      ImGui::Text("%u", st.distinct);
      ImGui::TableSetColumnIndex(2);
      ImGui::TextUnformatted(analysis::format_count(st.count).c_str());
      ImGui::TableSetColumnIndex(3);
      ImGui::TextUnformatted(analysis::format_duration(static_cast<double>(st.total_ns)).c_str());
      ImGui::TableSetColumnIndex(4);
      ImGui::TextUnformatted(analysis::format_duration(st.mean_ns).c_str());
      ImGui::TableSetColumnIndex(5);
      ImGui::TextUnformatted(analysis::format_duration(static_cast<double>(st.min_ns)).c_str());
      ImGui::TableSetColumnIndex(6);
      ImGui::TextUnformatted(analysis::format_duration(static_cast<double>(st.max_ns)).c_str());
      ImGui::TableSetColumnIndex(7);
      percent_cell(st.percent, theme);
    }
  }
  ImGui::EndTable();
}

}  // namespace

void draw_stats_view(AppState& app) {
  StatsViewState& s = app.stats;
  if (!app.session->find_run(s.run)) s.run = app.runs.current;
  run_picker(app, s);
  const LoadedRun* run = app.session->find_run(s.run);
  if (!run) {
    ImGui::TextDisabled("Pick a run.");
    return;
  }
  if (run->summary.timed_split) {
    ImGui::SameLine(0, 24 * app.theme.scale);
    ImGui::Checkbox("timed iterations only", &s.timed_only);
  }
  if (s.computed_for != s.run || s.computed_timed_only != s.timed_only) {
    const std::vector<bool> mask =
        s.timed_only ? analysis::timed_kernel_mask(run->data) : std::vector<bool>{};
    s.kernels = analysis::kernel_stats(run->data, mask);
    s.ops = analysis::op_stats(run->data, mask);
    s.computed_for = s.run;
    s.computed_timed_only = s.timed_only;
  }
  if (s.kernels.empty()) {
    ImGui::Spacing();
    ImGui::TextDisabled("This run has no kernels%s%s",
                        run->data.info.trace_status.empty() ? "" : ": ",
                        run->data.info.trace_status.c_str());
    return;
  }
  // Both tables as tall as their rows when they fit (an estimate with room to spare); otherwise
  // they scroll, the kernels' taking 60 % of the space.
  const float avail = ImGui::GetContentRegionAvail().y;
  const float title = ImGui::GetTextLineHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
  const float row = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y + 1.0f;
  auto rows_h = [&](size_t n) { return row * static_cast<float>(n + 1) + 8.0f; };
  const float room = avail - 2 * title - ImGui::GetStyle().ItemSpacing.y;
  float kernels_h = 0, ops_h = 0;
  if (rows_h(s.kernels.size()) + rows_h(s.ops.size()) > room) {
    kernels_h = std::max(room * 0.6f, room - rows_h(s.ops.size()));
    ops_h = room - kernels_h;
  }
  ImGui::Spacing();
  ImGui::TextUnformatted("Kernels");
  stats_table("##kernels", "Kernel", s.kernels, *run, true, kernels_h, app.theme);
  ImGui::TextUnformatted("Ops");
  stats_table("##ops", "Op", s.ops, *run, false, ops_h, app.theme);
}

}  // namespace fusionscope::ui
