#include <algorithm>
#include <cstdio>

#include "fusionscope/analysis/format.h"
#include "session_menu.h"
#include "ui_probe.h"
#include "views.h"

namespace fusionscope::ui {

std::string run_label(const storage::RunInfo& info) {
  return info.name.empty() ? "#" + std::to_string(info.id) : info.name;
}

namespace {

ImVec4 status_color(const LoadedRun& run, const Theme& theme) {
  if (!run.error.empty()) return theme.bad;
  switch (run.data.info.status) {
    case storage::RunStatus::kOk:
      return theme.good;
    case storage::RunStatus::kFailed:
      return theme.bad;
    default:
      return theme.text_dim;
  }
}

void click_run(RunsPanelState& s, const Session& session, int64_t id) {
  const ImGuiIO& io = ImGui::GetIO();
  auto& sel = s.selected;
  if (io.KeyCtrl) {
    auto it = std::find(sel.begin(), sel.end(), id);
    if (it != sel.end() && sel.size() > 1)
      sel.erase(it);
    else if (it == sel.end())
      sel.push_back(id);
  } else if (io.KeyShift && s.current >= 0) {
    int a = session.index_of(s.current), b = session.index_of(id);
    if (a > b) std::swap(a, b);
    sel.clear();
    for (int i = a; i <= b; ++i) sel.push_back(session.runs[static_cast<size_t>(i)]->data.info.id);
  } else {
    sel = {id};
  }
  // Keep table order so the timeline lists runs as the table does.
  std::sort(sel.begin(), sel.end(),
            [&](int64_t x, int64_t y) { return session.index_of(x) < session.index_of(y); });
  s.current = id;
}

// What a table row cannot say: why runs failed or have no complete trace, and the session's notes.
void draw_run_notes(AppState& app) {
  ImGui::Spacing();
  for (const auto& run : app.session->runs) {
    const storage::RunInfo& info = run->data.info;
    const std::string why = !run->error.empty()   ? "could not be loaded: " + run->error
                            : !info.error.empty() ? info.error
                                                  : info.trace_status;
    if (why.empty()) continue;
    ImGui::TextColored(info.status == storage::RunStatus::kFailed || !run->error.empty()
                           ? app.theme.bad
                           : app.theme.text_dim,
                       "%s", run_label(info).c_str());
    ImGui::SameLine();
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(why.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!app.session->info.notes.empty()) {
    ImGui::Spacing();
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%s", app.session->info.notes.c_str());
    ImGui::PopTextWrapPos();
  }
}

}  // namespace

void draw_session_header(AppState& app) {
  const Session& s = *app.session;
  const storage::SessionInfo& info = s.info;
  ImGui::TextColored(app.theme.accent, "%s",
                     info.name.empty() ? s.path.filename().c_str() : info.name.c_str());
  ImGui::SameLine(0, 16 * app.theme.scale);
  std::string gpu = info.gpu_name.empty() ? "GPU unknown" : info.gpu_name;
  if (info.cc_major > 0)
    gpu += "  sm_" + std::to_string(info.cc_major) + std::to_string(info.cc_minor);
  if (info.sm_count > 0) gpu += ", " + std::to_string(info.sm_count) + " SMs";
  if (info.mem_bandwidth_gbs > 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, ", %.0f GB/s", info.mem_bandwidth_gbs);
    gpu += buf;
  }
  ImGui::TextDisabled("%s   %zu runs%s%s", gpu.c_str(), s.runs.size(),
                      info.host.empty() ? "" : "   host ", info.host.c_str());
  if (!info.notes.empty()) {
    ImGui::SameLine(0, 16 * app.theme.scale);
    ImGui::TextDisabled("(notes)");
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36.0f);
      ImGui::TextUnformatted(info.notes.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
  }
}

void draw_runs_view(AppState& app) {
  draw_session_header(app);
  const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  draw_runs_panel(app, row_h * static_cast<float>(app.session->runs.size() + 1) + 4);
  draw_run_notes(app);
}

void draw_runs_panel(AppState& app, float height) {
  const Session& session = *app.session;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##runs", 8, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Run", ImGuiTableColumnFlags_WidthStretch, 3.2f);
  ImGui::TableSetupColumn("Kind", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  ImGui::TableSetupColumn("Variant", ImGuiTableColumnFlags_WidthStretch, 1.3f);
  ImGui::TableSetupColumn("Dtype", ImGuiTableColumnFlags_WidthStretch, 0.6f);
  ImGui::TableSetupColumn("Iterations", ImGuiTableColumnFlags_WidthStretch, 0.9f);
  ImGui::TableSetupColumn("Status", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  ImGui::TableSetupColumn("Kernels", ImGuiTableColumnFlags_WidthStretch, 0.9f);
  ImGui::TableSetupColumn("GPU time / iter", ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableHeadersRow();
  for (const auto& run_ptr : session.runs) {
    const LoadedRun& run = *run_ptr;
    const storage::RunInfo& info = run.data.info;
    ImGui::PushID(static_cast<int>(info.id));
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    const bool selected = std::find(app.runs.selected.begin(), app.runs.selected.end(), info.id) !=
                          app.runs.selected.end();
    if (ImGui::Selectable(run_label(info).c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) {
      click_run(app.runs, session, info.id);
      // Two runs picked together are the pair to compare.
      if (app.runs.selected.size() == 2) {
        app.comparison.a = app.runs.selected[0];
        app.comparison.b = app.runs.selected[1];
      }
    }
    probe_item(app, "runs.row." + std::to_string(info.id));
    draw_run_context_menu(app, info);
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::Text("Run #%lld, created %s", static_cast<long long>(info.id),
                  info.created_utc.c_str());
      ImGui::Text("%s kernels, %s launches, %s API calls, %s ranges",
                  analysis::format_count(run.summary.kernels).c_str(),
                  analysis::format_count(run.summary.launches).c_str(),
                  analysis::format_count(run.summary.api_calls).c_str(),
                  analysis::format_count(run.summary.ranges).c_str());
      ImGui::Text(
          "GPU kernel time %s in all, wall %s%s",
          analysis::format_duration(static_cast<double>(run.summary.kernel_time_ns)).c_str(),
          analysis::format_duration(static_cast<double>(run.summary.wall_ns)).c_str(),
          run.summary.wall_is_span ? " (trace span)" : "");
      if (!info.error.empty()) ImGui::TextColored(app.theme.bad, "%s", info.error.c_str());
      if (!run.error.empty())
        ImGui::TextColored(app.theme.bad, "Could not load: %s", run.error.c_str());
      if (!info.trace_status.empty()) ImGui::TextDisabled("%s", info.trace_status.c_str());
      if (info.dropped_records > 0)
        ImGui::TextColored(app.theme.bad, "%s records dropped by the tracer",
                           analysis::format_count(info.dropped_records).c_str());
      ImGui::EndTooltip();
    }
    ImGui::TableSetColumnIndex(1);
    ImGui::TextUnformatted(info.kind.c_str());
    ImGui::TableSetColumnIndex(2);
    ImGui::TextUnformatted(info.variant.c_str());
    ImGui::TableSetColumnIndex(3);
    ImGui::TextUnformatted(info.dtype.c_str());
    ImGui::TableSetColumnIndex(4);
    if (info.iterations > 0)
      ImGui::Text("%d + %d warmup", info.iterations, info.warmup);
    else
      ImGui::TextDisabled("-");
    ImGui::TableSetColumnIndex(5);
    const std::string status =
        run.error.empty() ? std::string(storage::to_string(info.status)) : "unreadable";
    ImGui::TextColored(status_color(run, app.theme), "%s", status.c_str());
    ImGui::TableSetColumnIndex(6);
    if (run.summary.kernels > 0)
      ImGui::TextUnformatted(analysis::format_count(run.summary.kernels).c_str());
    else
      ImGui::TextDisabled("-");
    ImGui::TableSetColumnIndex(7);
    if (run.summary.kernels > 0)
      ImGui::TextUnformatted(
          analysis::format_duration(run.summary.kernel_time_per_iteration_ns()).c_str());
    else
      ImGui::TextDisabled("-");
    ImGui::PopID();
  }
  ImGui::EndTable();
}

}  // namespace fusionscope::ui
