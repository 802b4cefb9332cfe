#include "area_panel.h"

#include <algorithm>
#include <cmath>

#include "chart.h"
#include "fusionscope/analysis/format.h"
#include "text_fit.h"
#include "ui_probe.h"

namespace fusionscope::ui {

namespace {

using analysis::format_bytes;
using analysis::format_count;
using analysis::format_duration;
using analysis::format_percent;

void group_table(const char* id, const std::vector<AreaGroup>& groups, const AreaGroup& total,
                 double length, bool dram, const Theme& theme) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp |
                                ImGuiTableFlags_ScrollY;
  if (!ImGui::BeginTable(id, dram ? 6 : 5, flags, ImVec2(0, 0))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthStretch, 3.0f);
  ImGui::TableSetupColumn("Count", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  ImGui::TableSetupColumn("Total", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("Mean", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("Share", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  if (dram) ImGui::TableSetupColumn("DRAM", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableHeadersRow();
  auto row = [&](const AreaGroup& g, bool is_total) {
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    if (g.colour != 0) {
      const float h = ImGui::GetTextLineHeight();
      chart::draw_mark(ImGui::GetWindowDrawList(), ImGui::GetCursorScreenPos(), h * 0.8f,
                       {g.name, g.colour, chart::Mark::kSwatch}, theme.scale);
      ImGui::Dummy(ImVec2(h, h));
      ImGui::SameLine();
    }
    if (is_total)
      ImGui::TextDisabled("total");
    else
      text_elided(g.name);
    ImGui::TableSetColumnIndex(1);
    ImGui::TextUnformatted(format_count(g.count).c_str());
    ImGui::TableSetColumnIndex(2);
    ImGui::TextUnformatted(format_duration(static_cast<double>(g.total_ns)).c_str());
    ImGui::TableSetColumnIndex(3);
    ImGui::TextUnformatted(format_duration(g.mean_ns()).c_str());
    ImGui::TableSetColumnIndex(4);
    ImGui::TextUnformatted(
        length > 0 ? format_percent(static_cast<double>(g.total_ns) / length).c_str() : "-");
    if (dram) {
      ImGui::TableSetColumnIndex(5);
      if (g.counted > 0)
        ImGui::TextUnformatted(format_bytes(g.dram_bytes).c_str());
      else
        ImGui::TextDisabled("-");
    }
  };
  for (const AreaGroup& g : groups) row(g, false);
  if (groups.size() > 1) row(total, true);
  ImGui::EndTable();
}

}  // namespace

const AreaSummary& current_area_summary(AppState& app, std::span<const TimelineRun> runs) {
  TimelineViewState& v = app.timeline;
  const TimelineState& t = v.timeline;
  if (v.area_generation != t.area.generation || v.area_key != t.area.key ||
      v.area_mode != t.color_mode) {
    v.area_mode = t.color_mode;
    v.area_summary = summarize_area(runs, t.area.items, std::min(t.range_a, t.range_b),
                                    std::max(t.range_a, t.range_b), t.color_mode);
    v.area_generation = t.area.generation;
    v.area_key = t.area.key;
  }
  return v.area_summary;
}

bool draw_area_panel(AppState& app, std::span<const TimelineRun> runs) {
  TimelineState& t = app.timeline.timeline;
  if (!t.has_range) return false;
  const AreaSummary& s = current_area_summary(app, runs);
  ImGui::TextColored(app.theme.accent, "Area selection");
  ImGui::SameLine();
  ImGui::TextDisabled("%s across %zu rows", format_duration(s.length()).c_str(),
                      t.area.rows.size());
  if (ImGui::SmallButton("Zoom to it (Z)")) zoom_to(t, s.begin, s.end, 0.02);
  probe_item(app, "area.zoom");
  ImGui::SameLine();
  if (ImGui::SmallButton("Clear (Esc)")) t.has_range = false;
  struct Tab {
    const char* name;
    AreaTable table;
    bool dram;
  };
  const Tab tabs[] = {{"Kernels", AreaTable::kKernels, true},
                      {"Ops", AreaTable::kOps, true},
                      {"API calls", AreaTable::kApiCalls, false},
                      {"Ranges", AreaTable::kRanges, false},
                      {"Memcpy", AreaTable::kMemops, false}};
  if (!ImGui::BeginTabBar("##area_tabs")) return true;
  for (const Tab& tab : tabs) {
    const std::vector<AreaGroup>& groups = s.of(tab.table);
    if (groups.empty()) continue;
    const std::string label = std::string(tab.name) + " " + format_count(s.total(tab.table).count);
    if (!ImGui::BeginTabItem((label + "###" + tab.name).c_str())) continue;
    const bool counted = tab.dram && s.total(tab.table).counted > 0;
    group_table(tab.name, groups, s.total(tab.table), s.length(), counted, app.theme);
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
  return true;
}

}  // namespace fusionscope::ui
