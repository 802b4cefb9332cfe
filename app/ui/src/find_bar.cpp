#include "find_bar.h"

#include <algorithm>

#include <GLFW/glfw3.h>

#include "fusionscope/analysis/format.h"
#include "ui_probe.h"

namespace fusionscope::ui {

std::string find_summary(const FindResults& r) {
  std::string text;
  auto part = [&](ItemKind kind, const char* one, const char* many) {
    const KindTotals& t = r.of(kind);
    if (t.count == 0) return;
    text += (text.empty() ? "" : ", ") + analysis::format_count(t.count) + " " +
            (t.count == 1 ? one : many) + " (" +
            analysis::format_duration(static_cast<double>(t.total_ns)) + ")";
  };
  part(ItemKind::kKernel, "kernel", "kernels");
  part(ItemKind::kMemop, "memcpy/memset", "memcpy/memsets");
  part(ItemKind::kApiCall, "API call", "API calls");
  part(ItemKind::kRange, "range", "ranges");
  return text.empty() ? "no match" : text;
}

void step_find(AppState& app, int direction, std::span<const TimelineRun> runs) {
  FindState& f = app.find;
  const std::vector<FindHit>& hits = f.results.hits;
  if (hits.empty()) return;
  TimelineState& t = app.timeline.timeline;
  if (f.current < 0) {
    // From the view: the first match at or after its middle (or before it, going back).
    const double middle = 0.5 * (t.view_begin + t.view_end);
    auto it = std::lower_bound(hits.begin(), hits.end(), middle,
                               [](const FindHit& h, double v) { return h.t < v; });
    int i = static_cast<int>(it - hits.begin());
    if (direction < 0) --i;
    f.current = (i + static_cast<int>(hits.size())) % static_cast<int>(hits.size());
  } else {
    f.current =
        (f.current + direction + static_cast<int>(hits.size())) % static_cast<int>(hits.size());
  }
  const FindHit& h = hits[static_cast<size_t>(f.current)];
  const ItemRef item{h.run, h.kind, h.index};
  t.selected = item;
  int64_t start, end;
  if (h.run >= static_cast<int>(runs.size()) ||
      !item_extent(runs[static_cast<size_t>(h.run)].run->data, item, start, end))
    return;
  const double o = static_cast<double>(runs[static_cast<size_t>(h.run)].origin_ns);
  const double b = static_cast<double>(start) - o, e = static_cast<double>(end) - o;
  const double span = t.view_end - t.view_begin;
  if (e - b > span * 0.8) {
    zoom_to(t, b, e, 0.15);
  } else {
    // Keep the zoom, centre the match.
    t.view_begin = 0.5 * (b + e) - span * 0.5;
    t.view_end = t.view_begin + span;
  }
  t.fit = FitRequest::kNone;
}

void draw_find_bar(AppState& app, std::span<const TimelineRun> runs) {
  FindState& f = app.find;
  const ImGuiIO& io = ImGui::GetIO();
  if (app.find_requested || (!io.WantTextInput && ImGui::IsKeyPressed(GLFW_KEY_SLASH, false))) {
    f.open = true;
    f.focus_requested = true;
    app.find_requested = false;
  }
  update_find(f, runs);
  if (!f.open) return;
  const float em = ImGui::GetFontSize();
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("Find");
  ImGui::SameLine();
  if (f.focus_requested) {
    ImGui::SetKeyboardFocusHere();
    f.focus_requested = false;
  }
  ImGui::SetNextItemWidth(em * 18);
  const bool enter = ImGui::InputTextWithHint(
      "##find", "kernel, op, API call or range name", f.text, sizeof f.text,
      ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
  probe_item(app, "find.text");
  const bool text_active = ImGui::IsItemActive();
  if (enter) {
    step_find(app, io.KeyShift ? -1 : 1, runs);
    ImGui::SetKeyboardFocusHere(-1);  // stay in the field for the next Enter
  }
  ImGui::SameLine();
  ImGui::Checkbox("regex", &f.regex);
  ImGui::SameLine();
  ImGui::Checkbox("case", &f.match_case);
  ImGui::SameLine(0, em);
  ImGui::Checkbox("kernels", &f.scope.kernels);
  ImGui::SameLine();
  ImGui::Checkbox("ops", &f.scope.ops);
  ImGui::SameLine();
  ImGui::Checkbox("API", &f.scope.api_calls);
  ImGui::SameLine();
  ImGui::Checkbox("ranges", &f.scope.ranges);
  ImGui::SameLine(0, em);
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) step_find(app, -1, runs);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("previous match (Shift+Enter)");
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right)) step_find(app, 1, runs);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("next match (Enter)");
  ImGui::SameLine(0, em);
  if (!f.error.empty()) {
    ImGui::TextColored(app.theme.bad, "%s", f.error.c_str());
  } else if (f.query) {
    const size_t n = f.results.hits.size();
    if (f.current >= 0 && n > 0)
      ImGui::Text("%d of %s:", f.current + 1, analysis::format_count(n).c_str());
    else
      ImGui::TextDisabled("%s matches:", analysis::format_count(n).c_str());
    ImGui::SameLine();
    ImGui::TextUnformatted(find_summary(f.results).c_str());
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("x") ||
      (text_active && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false))) {
    f.open = false;
    f.key.clear();  // the highlight goes with the bar
  }
}

}  // namespace fusionscope::ui
