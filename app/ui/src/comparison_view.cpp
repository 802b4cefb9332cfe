#include <algorithm>
#include <cmath>

#include "chart.h"
#include "fusionscope/analysis/demangle.h"
#include "fusionscope/analysis/format.h"
#include "fusionscope/analysis/op_fusion.h"
#include "fusionscope/analysis/verdict.h"
#include "histogram_view.h"
#include "metrics_common.h"
#include "ui_probe.h"
#include "views.h"

namespace fusionscope::ui {

namespace {

using analysis::format_count;
using analysis::format_duration;

bool run_combo(const char* id, const Session& session, int64_t& run_id, float width) {
  const LoadedRun* current = session.find_run(run_id);
  bool changed = false;
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo(id, current ? run_label(current->data.info).c_str() : "(pick a run)")) {
    for (const auto& run : session.runs) {
      if (run->summary.kernels == 0) continue;
      const bool is = run->data.info.id == run_id;
      if (ImGui::Selectable(run_label(run->data.info).c_str(), is)) {
        run_id = run->data.info.id;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  return changed;
}

void draw_controls(AppState& app, ComparisonViewState& s) {
  const float w = ImGui::GetFontSize() * 21;
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("A");
  ImGui::SameLine();
  run_combo("##a", *app.session, s.a, w);
  ImGui::SameLine();
  if (ImGui::Button("Swap")) std::swap(s.a, s.b);
  ImGui::SameLine();
  ImGui::TextDisabled("B");
  ImGui::SameLine();
  run_combo("##b", *app.session, s.b, w);
  ImGui::SameLine(0, 24 * app.theme.scale);
  ImGui::TextDisabled("Align at");
  ImGui::SameLine();
  const char* names[] = {"run start", "first kernel", "iteration"};
  int align = static_cast<int>(s.alignment);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  if (ImGui::Combo("##align", &align, names, 3))
    s.alignment = static_cast<analysis::Alignment>(align);
  if (s.alignment == analysis::Alignment::kIteration) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    ImGui::InputInt("##iteration", &s.iteration);
    s.iteration = std::max(s.iteration, 0);
  }
}

std::string speedup_text(const std::optional<double>& x) {
  if (!x) return "-";
  return analysis::format_factor(*x, 2);
}

void speedup_cell(const std::optional<double>& x, const Theme& theme) {
  if (!x) {
    ImGui::TextDisabled("-");
    return;
  }
  const ImVec4 c = *x > 1.005 ? theme.good : (*x < 0.995 ? theme.bad : theme.text_dim);
  ImGui::TextColored(c, "%s", speedup_text(x).c_str());
}

std::optional<double> ratio(double a, double b) {
  if (!(b > 0)) return std::nullopt;
  return a / b;
}

void totals_table(const analysis::RunComparison& c, const Theme& theme) {
  // As tall as its rows; the pane around it scrolls if the window is too short.
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##totals", 4, flags)) return;
  ImGui::TableSetupColumn("Per iteration", ImGuiTableColumnFlags_WidthStretch, 1.6f);
  ImGui::TableSetupColumn("A", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("B", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn("A / B", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  ImGui::TableHeadersRow();
  auto row = [&](const char* name, const std::string& a, const std::string& b,
                 const std::optional<double>& x) {
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::TextUnformatted(name);
    ImGui::TableSetColumnIndex(1);
    ImGui::TextUnformatted(a.c_str());
    ImGui::TableSetColumnIndex(2);
    ImGui::TextUnformatted(b.c_str());
    ImGui::TableSetColumnIndex(3);
    speedup_cell(x, theme);
  };
  auto per_it = [](double v, int it) { return it > 0 ? v / it : v; };
  row("GPU kernel time", format_duration(c.a.kernel_time_per_iteration_ns()),
      format_duration(c.b.kernel_time_per_iteration_ns()), c.kernel_time_speedup);
  row("Wall time", format_duration(c.a.wall_per_iteration_ns()),
      format_duration(c.b.wall_per_iteration_ns()), c.wall_speedup);
  const double ga = per_it(static_cast<double>(c.a.gpu_busy_ns), c.a.iterations);
  const double gb = per_it(static_cast<double>(c.b.gpu_busy_ns), c.b.iterations);
  row("GPU busy", format_duration(ga), format_duration(gb), ratio(ga, gb));
  char ka[32], kb[32];
  std::snprintf(ka, sizeof ka, "%.1f", c.a.kernels_per_iteration());
  std::snprintf(kb, sizeof kb, "%.1f", c.b.kernels_per_iteration());
  row("Kernels", ka, kb, ratio(c.a.kernels_per_iteration(), c.b.kernels_per_iteration()));
  const double la = per_it(static_cast<double>(c.a.timed_launches), c.a.iterations);
  const double lb = per_it(static_cast<double>(c.b.timed_launches), c.b.iterations);
  std::snprintf(ka, sizeof ka, "%.1f", la);
  std::snprintf(kb, sizeof kb, "%.1f", lb);
  row("Launches", ka, kb, ratio(la, lb));
  row("Iterations", std::to_string(c.a.iterations), std::to_string(c.b.iterations), std::nullopt);
  ImGui::EndTable();
}

// Kernels of one side of an op, one per line with count and time per iteration.
void kernel_list(const std::vector<analysis::KernelGroup>& kernels, int iterations) {
  if (kernels.empty()) {
    ImGui::TextDisabled("-");
    return;
  }
  for (const analysis::KernelGroup& k : kernels) {
    const double t = iterations > 0 ? static_cast<double>(k.total_ns) / iterations
                                    : static_cast<double>(k.total_ns);
    const double n =
        iterations > 0 ? static_cast<double>(k.count) / iterations : static_cast<double>(k.count);
    // Time first: long kernel names are cut by the column, their time should not be.
    const std::string count =
        n == 1.0 ? "" : "  x" + std::to_string(static_cast<int>(std::lround(n)));
    ImGui::TextDisabled("%8s%s", format_duration(t).c_str(), count.c_str());
    ImGui::SameLine();
    ImGui::TextUnformatted(analysis::short_name(k.name).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", analysis::demangle(k.name).c_str());
  }
}

// Bytes moved and bandwidth per iteration of each run, from its counters pass, beside the plan's
// fewest bytes; a run without counters says why under the table.
void traffic_table(const Session& session, const LoadedRun& a, const LoadedRun& b,
                   const Theme& theme) {
  const analysis::Ceilings peaks = analysis::ceilings_of(session.info);
  const analysis::MetricsAvailability sa = kernel_metrics_status(session, a);
  const analysis::MetricsAvailability sb = kernel_metrics_status(session, b);
  const analysis::RunTraffic& ta = a.traffic;
  const analysis::RunTraffic& tb = b.traffic;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
  if (ImGui::BeginTable("##traffic", 4, flags)) {
    ImGui::TableSetupColumn("Memory traffic per iteration", ImGuiTableColumnFlags_WidthStretch,
                            1.6f);
    ImGui::TableSetupColumn("A", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("B", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("A / B", ImGuiTableColumnFlags_WidthStretch, 0.8f);
    ImGui::TableHeadersRow();
    auto row = [&](const char* name, const std::string& va, const std::string& vb,
                   const std::optional<double>& x, bool ratio_is_speedup) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(name);
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(va.c_str());
      ImGui::TableSetColumnIndex(2);
      ImGui::TextUnformatted(vb.c_str());
      ImGui::TableSetColumnIndex(3);
      if (!x) {
        ImGui::TextDisabled("-");
      } else if (ratio_is_speedup) {
        speedup_cell(x, theme);
      } else {
        ImGui::TextDisabled("%.2fx", *x);
      }
    };
    const bool ha = sa.available, hb = sb.available;
    auto bytes = [](bool has, double v) -> std::string {
      return has ? analysis::format_bytes(v) : "-";
    };
    row("DRAM bytes (measured)", bytes(ha, ta.dram_bytes), bytes(hb, tb.dram_bytes),
        ha && hb ? ratio(ta.dram_bytes, tb.dram_bytes) : std::nullopt, true);
    const double ma = ta.min_bytes(), mb = tb.min_bytes();
    row("Fewest bytes (plan)", ma > 0 ? analysis::format_bytes(ma) : "-",
        mb > 0 ? analysis::format_bytes(mb) : "-", ma > 0 && mb > 0 ? ratio(ma, mb) : std::nullopt,
        false);
    auto excess = [](bool has, const analysis::RunTraffic& t) -> std::string {
      if (!has || !(t.min_bytes() > 0)) return "-";
      return analysis::format_factor(t.excess_over_min(), 2);
    };
    row("Measured / fewest", excess(ha, ta), excess(hb, tb), std::nullopt, false);
    row("Achieved bandwidth", ha ? format_bandwidth(ta.bandwidth()) : "-",
        hb ? format_bandwidth(tb.bandwidth()) : "-",
        ha && hb ? ratio(ta.bandwidth(), tb.bandwidth()) : std::nullopt, false);
    if (peaks.bandwidth > 0) {
      auto share = [&](bool has, const analysis::RunTraffic& t) -> std::string {
        if (!has) return "-";
        return analysis::format_percent(t.bandwidth() / peaks.bandwidth);
      };
      const std::string name = "of the " + ceiling_source(peaks.bandwidth_calibrated) + " " +
                               format_bandwidth(peaks.bandwidth);
      row(name.c_str(), share(ha, ta), share(hb, tb), std::nullopt, false);
    }
    ImGui::EndTable();
  }
  ImGui::PushTextWrapPos(0.0f);
  if (!sa.available) ImGui::TextDisabled("A: %s", sa.why.c_str());
  if (!sb.available) ImGui::TextDisabled("B: %s", sb.why.c_str());
  if (sa.available || sb.available)
    ImGui::TextDisabled(
        "Measured: the counters pass's DRAM read + write of one forward pass. Bandwidth: those "
        "bytes over the kernels' time in the timing pass.");
  ImGui::PopTextWrapPos();
}

// The session's colour of each op (colours.h): the same swatch the timeline draws.
void op_swatches(const Session& session, const std::vector<std::string>& ops, const Theme& theme) {
  const float h = ImGui::GetTextLineHeight();
  for (const std::string& op : ops) {
    chart::draw_mark(ImGui::GetWindowDrawList(), ImGui::GetCursorScreenPos(), h * 0.8f,
                     {op, session.op_colours.of(op), chart::Mark::kSwatch}, theme.scale);
    ImGui::Dummy(ImVec2(h * 0.9f, h));
    ImGui::SameLine(0, 2 * theme.scale);
  }
}

void ops_table(const Session& session, ComparisonViewState& s, const Theme& theme) {
  const analysis::RunComparison& c = *s.result;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersInnerH |
                                ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##ops", 6, flags)) return;
  ImGui::TableSetupColumn("Op", ImGuiTableColumnFlags_WidthStretch, 1.5f);
  ImGui::TableSetupColumn("In", ImGuiTableColumnFlags_WidthStretch, 0.6f);
  ImGui::TableSetupColumn("Kernels in A", ImGuiTableColumnFlags_WidthStretch, 2.6f);
  ImGui::TableSetupColumn("Kernels in B", ImGuiTableColumnFlags_WidthStretch, 2.6f);
  ImGui::TableSetupColumn("A / iter", ImGuiTableColumnFlags_WidthStretch, 0.9f);
  ImGui::TableSetupColumn("B / iter", ImGuiTableColumnFlags_WidthStretch, 0.9f);
  ImGui::TableHeadersRow();
  auto per_it = [](int64_t v, int it) {
    return it > 0 ? static_cast<double>(v) / it : static_cast<double>(v);
  };
  // Ops that a fused op of the other run covers share one row ("gate, gelu-tanh, up, mul" ->
  // the gated GEMM) rather than several "only A" rows and one "only B".
  for (size_t row = 0; row < s.op_rows.size(); ++row) {
    const analysis::OpDiff& d = s.op_rows[row];
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::PushID(static_cast<int>(row));
    // Clicking a row shows its time per iteration in A and B in the histogram.
    const bool selected = s.selected_op == static_cast<int>(row);
    if (ImGui::Selectable(
            "##op", selected,
            ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowItemOverlap))
      s.selected_op = selected ? -1 : static_cast<int>(row);
    ImGui::SameLine();
    ImGui::BeginGroup();
    const std::vector<std::string> a_ops =
        d.presence == analysis::Presence::kFused ? d.a_ops : std::vector<std::string>{d.op};
    // Each op's swatch in the colour the timeline draws it, then the names.
    op_swatches(session, a_ops, theme);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(d.op.empty() ? "(no op)" : d.op.c_str());
    if (d.presence == analysis::Presence::kFused) {
      ImGui::TextDisabled("->");
      ImGui::SameLine();
      op_swatches(session, d.b_ops, theme);
      std::string as;
      for (const std::string& o : d.b_ops) as += (as.empty() ? "" : ", ") + o;
      ImGui::TextDisabled("%s", as.c_str());
    }
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
    ImGui::PopID();
    ImGui::TableSetColumnIndex(1);
    switch (d.presence) {
      case analysis::Presence::kBoth:
        ImGui::TextDisabled("both");
        break;
      case analysis::Presence::kOnlyA:
        ImGui::TextColored(theme.bad, "only A");
        break;
      case analysis::Presence::kOnlyB:
        ImGui::TextColored(theme.good, "only B");
        break;
      case analysis::Presence::kFused:
        ImGui::TextColored(theme.accent, "fused");
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("These ops of A are done by the differently named, fused op(s) of B");
        break;
    }
    ImGui::TableSetColumnIndex(2);
    kernel_list(d.a, c.a.iterations);
    ImGui::TableSetColumnIndex(3);
    kernel_list(d.b, c.b.iterations);
    ImGui::TableSetColumnIndex(4);
    if (d.a_count)
      ImGui::TextUnformatted(format_duration(per_it(d.a_total_ns, c.a.iterations)).c_str());
    else
      ImGui::TextDisabled("-");
    ImGui::TableSetColumnIndex(5);
    if (d.b_count)
      ImGui::TextUnformatted(format_duration(per_it(d.b_total_ns, c.b.iterations)).c_str());
    else
      ImGui::TextDisabled("-");
  }
  ImGui::EndTable();
}

// Per timed iteration of a run, the time of the kernels of `ops` (all kernels when empty).
std::vector<double> op_time_per_iteration(const LoadedRun& run,
                                          const std::vector<std::string>& ops) {
  const analysis::RunIterations& its = run.iterations;
  std::vector<bool> wanted(run.data.strings.size(), ops.empty());
  for (size_t i = 0; i < run.data.strings.size(); ++i)
    for (const std::string& op : ops)
      if (run.data.strings[i] == op) wanted[i] = true;
  std::vector<double> per(its.iterations.size(), 0.0);
  for (size_t k = 0; k < run.data.kernels.size() && k < its.of_kernel.size(); ++k) {
    const int32_t i = its.of_kernel[k];
    const storage::KernelRecord& kr = run.data.kernels[k];
    if (i < 0 || !its.iterations[static_cast<size_t>(i)].timed) continue;
    if (!ops.empty() && (kr.op >= wanted.size() || !wanted[kr.op])) continue;
    per[static_cast<size_t>(i)] += static_cast<double>(kr.end_ns - kr.start_ns);
  }
  std::vector<double> out;
  for (size_t i = 0; i < per.size(); ++i)
    if (its.iterations[i].timed && its.iterations[i].has_gpu()) out.push_back(per[i]);
  return out;
}

// A and B overlaid (as Tracy's compare window): the selected op's time per iteration, or the
// runs' kernel time per iteration.
void ab_histogram(ComparisonViewState& s, const LoadedRun& a, const LoadedRun& b,
                  const Theme& theme) {
  // The values are gathered again only when the row picked (or the runs) change.
  if (s.histogram_of != s.selected_op) {
    s.histogram_of = s.selected_op;
    std::vector<std::string> a_ops, b_ops;
    if (s.selected_op >= 0 && s.selected_op < static_cast<int>(s.op_rows.size())) {
      const analysis::OpDiff& d = s.op_rows[static_cast<size_t>(s.selected_op)];
      a_ops = d.presence == analysis::Presence::kFused ? d.a_ops : std::vector<std::string>{d.op};
      b_ops = d.presence == analysis::Presence::kFused ? d.b_ops : std::vector<std::string>{d.op};
    }
    s.histogram_a = op_time_per_iteration(a, a_ops);
    s.histogram_b = op_time_per_iteration(b, b_ops);
  }
  std::string what = "kernel time per iteration";
  if (s.selected_op >= 0 && s.selected_op < static_cast<int>(s.op_rows.size())) {
    const analysis::OpDiff& d = s.op_rows[static_cast<size_t>(s.selected_op)];
    what = (d.op.empty() ? std::string("(no op)") : d.op) + ": time per iteration";
  }
  const HistogramSeries series[2] = {{"A " + what, s.histogram_a, run_colour(0)},
                                     {"B", s.histogram_b, run_colour(1)}};
  if (series[0].values_ns.empty() && series[1].values_ns.empty()) {
    ImGui::TextDisabled("No timed iterations told apart: no histogram per iteration.");
    return;
  }
  draw_duration_histogram(
      "##ab", series,
      ImVec2(ImGui::GetContentRegionAvail().x,
             std::clamp(ImGui::GetContentRegionAvail().y - 6, ImGui::GetTextLineHeight() * 6,
                        ImGui::GetTextLineHeight() * 11)),
      theme);
}

}  // namespace

void draw_comparison_view(AppState& app) {
  ComparisonViewState& s = app.comparison;
  const Session& session = *app.session;
  draw_controls(app, s);
  const LoadedRun* a = session.find_run(s.a);
  const LoadedRun* b = session.find_run(s.b);
  if (!a || !b) {
    ImGui::Spacing();
    ImGui::TextDisabled(
        "Pick two runs with kernels, typically the unfused and a fused variant of one "
        "configuration.");
    return;
  }
  if (!s.result || s.result_a != s.a || s.result_b != s.b) {
    s.result = analysis::compare_runs(a->data, b->data);
    s.op_rows = analysis::fusion_aware_ops(s.result->ops);
    s.selected_op = -1;
    s.histogram_of = -2;  // gather again
    s.result_a = s.a;
    s.result_b = s.b;
    s.timeline.fit = FitRequest::kIterations;
    s.timeline.selected = {};
  }
  if (s.shown_alignment != s.alignment || s.shown_iteration != s.iteration) {
    s.timeline.fit = FitRequest::kIterations;
    s.shown_alignment = s.alignment;
    s.shown_iteration = s.iteration;
  }
  const TimelineRun runs[2] = {
      {a, analysis::alignment_origin(a->data, s.alignment, s.iteration),
       "A   " + run_label(a->data.info)},
      {b, analysis::alignment_origin(b->data, s.alignment, s.iteration),
       "B   " + run_label(b->data.info)},
  };
  if (s.timeline.fit == FitRequest::kIterations && s.alignment == analysis::Alignment::kIteration) {
    // Show a few iterations from the aligned one rather than every one.
    const double per_it =
        std::max(a->summary.wall_per_iteration_ns(), b->summary.wall_per_iteration_ns());
    const double first = std::max(a->summary.kernel_time_per_iteration_ns(),
                                  b->summary.kernel_time_per_iteration_ns());
    const double span = std::max(per_it, first) * 3.0;
    if (span > 0) {
      zoom_to(s.timeline, 0, span, 0.03);
      s.timeline.fit = FitRequest::kNone;
    }
  }
  // The answer first, in one line.
  const std::optional<double> dram_a =
      a->traffic.empty() ? std::nullopt : std::optional<double>(a->traffic.dram_bytes);
  const std::optional<double> dram_b =
      b->traffic.empty() ? std::nullopt : std::optional<double>(b->traffic.dram_bytes);
  s.verdict = analysis::comparison_verdict(*s.result, dram_a, dram_b);
  ImGui::TextColored(app.theme.accent, "%s", s.verdict.c_str());
  probe_item(app, "comparison.verdict");

  s.timeline.dram_peak = analysis::ceilings_of(session.info).bandwidth;
  // The timeline takes what the totals and memory tables leave (about 17 table rows), so that
  // both stay in view in a 1440x900 window.
  const float avail_y = ImGui::GetContentRegionAvail().y;
  const float table_row = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y + 1;
  const float tables_h = table_row * 17 + ImGui::GetTextLineHeightWithSpacing() * 3;
  const float timeline_h =
      std::clamp(timeline_height(runs, app.theme, &s.timeline) + app.theme.row_height * 0.5f,
                 app.theme.row_height * 5, std::max(avail_y - tables_h, app.theme.row_height * 5));
  draw_timeline("comparison", s.timeline, runs, app.theme,
                ImVec2(ImGui::GetContentRegionAvail().x, timeline_h));
  const float rest = ImGui::GetContentRegionAvail().y;
  const float w = ImGui::GetContentRegionAvail().x;
  const float totals_w = std::round(w * 0.34f);
  ImGui::BeginChild("##totals_pane", ImVec2(totals_w, rest), false);
  ImGui::TextUnformatted("Totals");
  totals_table(*s.result, app.theme);
  ImGui::Spacing();
  traffic_table(session, *a, *b, app.theme);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##ops_pane", ImVec2(0, rest), false);
  ImGui::TextUnformatted("Which kernels each op became");
  ImGui::SameLine();
  ImGui::TextDisabled("(click a row for its time per iteration below)");
  ops_table(session, s, app.theme);
  ImGui::Spacing();
  ab_histogram(s, *a, *b, app.theme);
  ImGui::EndChild();
}

}  // namespace fusionscope::ui
