// The Advice tab: the fusion advisor's rules (analysis/advisor.h) on one run of the session:
// each advice with its numbers, and its kernels as links that open them on the timeline.
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "fusionscope/analysis/advisor.h"
#include "fusionscope/analysis/format.h"
#include "view_registry.h"
#include "views.h"

namespace fusionscope::ui {
namespace {

// The advice of the runs of the open session, computed once per run (a session's runs do not
// change while it is open; a new session starts over).
struct AdviceCache {
  const Session* session = nullptr;
  analysis::AdviceContext context;
  std::map<int64_t, std::vector<analysis::Advice>> by_run;
  int64_t run = -1;  // the run the tab shows
};

AdviceCache& cache_for(const Session& session) {
  static AdviceCache cache;
  if (cache.session != &session) {
    cache = AdviceCache{};
    cache.session = &session;
    cache.context.session = session.info;
    for (const auto& r : session.runs) {
      cache.context.peers.push_back({r->data.info, analysis::gpu_time_per_iteration(r->data)});
    }
  }
  return cache;
}

std::string figure_text(const analysis::AdviceFigure& f) {
  if (std::isnan(f.value)) return "unknown";
  if (f.unit == "ns") return analysis::format_duration(f.value);
  if (f.unit == "byte") return analysis::format_bytes(f.value);
  if (f.unit == "fraction") return analysis::format_percent(f.value);
  if (f.unit == "count") return analysis::format_count(static_cast<uint64_t>(f.value));
  char text[32];
  std::snprintf(text, sizeof text, "%.3g %s", f.value, f.unit.c_str());
  return text;
}

void open_on_timeline(AppState& app, int64_t run, uint32_t kernel) {
  auto& shown = app.runs.selected;
  if (std::find(shown.begin(), shown.end(), run) == shown.end()) shown = {run};
  app.runs.current = run;
  app.timeline.focus = {true, run, kernel};
  show_view(app, "timeline");
}

}  // namespace

void draw_advice_view(AppState& app) {
  if (!app.session) return;
  const Session& session = *app.session;
  AdviceCache& cache = cache_for(session);
  if (!session.find_run(cache.run)) {
    cache.run = app.runs.current >= 0 && session.find_run(app.runs.current)
                    ? app.runs.current
                    : (session.runs.empty() ? -1 : session.runs.front()->data.info.id);
  }
  const LoadedRun* current = session.find_run(cache.run);

  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("Run");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 26);
  if (ImGui::BeginCombo("##advice_run",
                        current ? run_label(current->data.info).c_str() : "(none)")) {
    for (const auto& run : session.runs) {
      const bool is = run->data.info.id == cache.run;
      if (ImGui::Selectable(run_label(run->data.info).c_str(), is)) cache.run = run->data.info.id;
      if (is) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  if (!current) return;
  auto found = cache.by_run.find(cache.run);
  if (found == cache.by_run.end()) {
    found = cache.by_run.emplace(cache.run, analysis::advise(current->data, cache.context)).first;
  }
  const std::vector<analysis::Advice>& advice = found->second;
  ImGui::SameLine(0, 24 * app.theme.scale);
  ImGui::TextDisabled("%zu advice from %zu rules", advice.size(), analysis::advice_rules().size());
  ImGui::Separator();
  if (advice.empty()) {
    ImGui::TextWrapped(
        "No rule fired: no pointwise chain, no GLU intermediate written and read back, no "
        "kernel shorter than its launch, no idle GPU between kernels, no kernel far below its "
        "roofline.");
    return;
  }
  ImGui::BeginChild("##advice_list");
  for (size_t i = 0; i < advice.size(); ++i) {
    const analysis::Advice& a = advice[i];
    ImGui::PushID(static_cast<int>(i));
    const ImVec4 colour = a.severity == "warning" ? ImVec4(0.95f, 0.65f, 0.25f, 1.0f)
                                                  : ImVec4(0.55f, 0.75f, 0.95f, 1.0f);
    ImGui::TextColored(colour, "%s", a.rule.c_str());
    ImGui::SameLine();
    ImGui::TextWrapped("%s", a.summary.c_str());
    if (ImGui::BeginTable("##figures", 2, ImGuiTableFlags_SizingFixedFit)) {
      for (const auto& f : a.figures) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", f.name.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(figure_text(f).c_str());
      }
      ImGui::EndTable();
    }
    for (const auto& k : a.kernels) {
      const std::string label = current->names.short_name(current->data.kernels[k.index].name) +
                                "  (" +
                                analysis::format_duration(static_cast<double>(k.duration_ns)) +
                                ", correlation " + std::to_string(k.correlation_id) + ")";
      ImGui::PushID(static_cast<int>(k.index));
      ImGui::Bullet();
      if (ImGui::SmallButton(label.c_str())) open_on_timeline(app, cache.run, k.index);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show this kernel on the timeline");
      ImGui::PopID();
    }
    if (a.cites_run != 0) {
      if (const LoadedRun* cited = session.find_run(a.cites_run)) {
        ImGui::Bullet();
        if (ImGui::SmallButton(("compare with " + run_label(cited->data.info)).c_str())) {
          app.runs.selected = {cache.run, a.cites_run};
          show_view(app, "comparison");
        }
      }
    }
    ImGui::Spacing();
    ImGui::Separator();
    ImGui::PopID();
  }
  ImGui::EndChild();
}

}  // namespace fusionscope::ui
