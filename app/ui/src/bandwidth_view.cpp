// The Bandwidth tab: per kernel of one forward pass, the DRAM bandwidth it achieved (measured
// bytes over its time in the timing pass) against the GPU's peak, naming which peak, and the
// bytes it moved (read and write, from the counters pass, counted as Nsight Compute counts them)
// beside the fewest its op must move by the plan, and how few a per-kernel count can show when
// the output may stay in the L2, so the extra traffic of unfused variants shows. One block per
// run selected in the runs panel, on common scales.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chart.h"
#include "fusionscope/analysis/format.h"
#include "metrics_common.h"
#include "views.h"

namespace fusionscope::ui {

namespace {

using analysis::format_bytes;
using analysis::format_duration;

constexpr ImU32 kReadFill = IM_COL32(86, 156, 230, 255);
constexpr ImU32 kWriteFill = IM_COL32(235, 150, 70, 255);
constexpr ImU32 kMinFill = IM_COL32(200, 200, 200, 140);
constexpr ImU32 kMinL2Fill = IM_COL32(200, 200, 200, 60);
constexpr ImU32 kBandwidthFill = IM_COL32(120, 200, 140, 255);
constexpr ImU32 kOverPeakFill = IM_COL32(235, 200, 90, 255);
constexpr ImU32 kPeakLine = IM_COL32(255, 255, 255, 200);

// Column layout shared by the header and every row.
struct Columns {
  float x0 = 0, label_w = 0;  // label column
  float bw_x0 = 0, bw_w = 0;  // bandwidth bars
  float by_x0 = 0, by_w = 0;  // byte bars
  double bw_full = 1;         // byte/s at the bandwidth column's right edge
  double bytes_full = 1;      // bytes at the byte column's right edge
};

// Which ceiling the percentages are of.
std::string peak_name(const analysis::Ceilings& peaks) {
  return peaks.bandwidth_calibrated ? "calibrated device copy" : "theoretical";
}

void axis_header(ImDrawList* draw, const Columns& c, float y, const analysis::Ceilings& peaks,
                 const Theme& theme) {
  const ImU32 text = theme.gutter_text_dim;
  draw->AddText(ImVec2(c.x0, y), text, "op / kernel");
  draw->AddText(ImVec2(c.bw_x0, y), text, "DRAM bandwidth");
  draw->AddText(ImVec2(c.by_x0, y), text, "DRAM bytes");
  // Legend of the byte column after its title.
  const chart::LegendEntry keys[] = {
      {"read", kReadFill, chart::Mark::kSwatch},
      {"write", kWriteFill, chart::Mark::kSwatch},
      {"plan's fewest", kMinFill, chart::Mark::kSwatch},
      {"of it, output the L2 may hold", kMinL2Fill, chart::Mark::kSwatch}};
  chart::legend_at(draw,
                   ImVec2(c.by_x0 + ImGui::CalcTextSize("DRAM bytes").x + 14 * theme.scale, y),
                   keys, theme);
  if (peaks.bandwidth > 0) {
    const std::string peak =
        "| peak " + format_bandwidth(peaks.bandwidth) + " (" + peak_name(peaks) + ")";
    draw->AddText(ImVec2(c.bw_x0 + ImGui::CalcTextSize("DRAM bandwidth").x + 10 * theme.scale, y),
                  text, peak.c_str());
  }
}

// One bar row: the bandwidth bar and the stacked byte bar with the plan's minimum under it.
// `min_counted` is the fewest a per-kernel count can show (analysis::fewest_counted), drawn as
// the lighter start of the plan's fewest.
void bar_row(ImDrawList* draw, const Columns& c, float y, float h, const std::string& label,
             const std::string& sublabel, double read, double write, double seconds,
             double min_bytes, double min_counted, const analysis::Ceilings& peaks,
             const Theme& theme) {
  const float line = ImGui::GetTextLineHeight();
  const ImVec4 clip(c.x0, y, c.x0 + c.label_w - 6 * theme.scale, y + h);
  draw->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(c.x0, y + 1), theme.gutter_text,
                label.c_str(), nullptr, 0.0f, &clip);
  draw->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(c.x0, y + 1 + line),
                theme.gutter_text_dim, sublabel.c_str(), nullptr, 0.0f, &clip);

  // Bandwidth.
  const double bytes = read + write;
  const double bw = seconds > 0 ? bytes / seconds : 0.0;
  const float bar_top = y + 3, bar_bottom = y + h * 0.55f;
  auto bw_x = [&](double v) {
    return c.bw_x0 + static_cast<float>(std::clamp(v / c.bw_full, 0.0, 1.0)) * c.bw_w;
  };
  draw->AddRectFilled(ImVec2(c.bw_x0, bar_top), ImVec2(bw_x(bw), bar_bottom),
                      peaks.bandwidth > 0 && bw > peaks.bandwidth ? kOverPeakFill : kBandwidthFill);
  if (peaks.bandwidth > 0) {
    const float px = bw_x(peaks.bandwidth);
    draw->AddLine(ImVec2(px, y), ImVec2(px, y + h), kPeakLine, 1.5f * theme.scale);
  }
  std::string bw_text = format_bandwidth(bw);
  if (peaks.bandwidth > 0) {
    bw_text += "  " + analysis::format_percent(bw / peaks.bandwidth) + " of the " +
               ceiling_source(peaks.bandwidth_calibrated) + " peak";
    if (bw > peaks.bandwidth) bw_text += " (above it)";
  }
  bw_text += "  in " + format_duration(seconds * 1e9);
  draw->AddText(ImVec2(c.bw_x0 + 2, bar_bottom + 1), theme.gutter_text_dim, bw_text.c_str());

  // Bytes: read then write stacked; the plan's fewest as a thin bar below.
  auto by_x = [&](double v) {
    return c.by_x0 + static_cast<float>(std::clamp(v / c.bytes_full, 0.0, 1.0)) * c.by_w;
  };
  draw->AddRectFilled(ImVec2(c.by_x0, bar_top), ImVec2(by_x(read), bar_bottom), kReadFill);
  draw->AddRectFilled(ImVec2(by_x(read), bar_top), ImVec2(by_x(bytes), bar_bottom), kWriteFill);
  std::string by_text = format_bytes(bytes);
  if (min_bytes > 0) {
    const bool l2 = min_counted >= 0 && min_counted < min_bytes;
    const float split = by_x(l2 ? min_counted : min_bytes);
    draw->AddRectFilled(ImVec2(c.by_x0, bar_bottom + 1), ImVec2(split, bar_bottom + 4), kMinFill);
    if (l2)
      draw->AddRectFilled(ImVec2(split, bar_bottom + 1), ImVec2(by_x(min_bytes), bar_bottom + 4),
                          kMinL2Fill);
    char extra[96];
    std::snprintf(extra, sizeof extra, "  fewest %s (%+.0f%%)", format_bytes(min_bytes).c_str(),
                  100.0 * (bytes / min_bytes - 1.0));
    by_text += extra;
    if (l2) by_text += ", " + format_bytes(min_counted) + " if its output stays in the L2";
  }
  draw->AddText(ImVec2(c.by_x0 + 2, bar_bottom + 4), theme.gutter_text_dim, by_text.c_str());
}

std::string run_summary(const analysis::RunTraffic& t, const analysis::Ceilings& peaks,
                        double l2_bytes) {
  std::string s = format_bytes(t.dram_bytes) + " per forward pass";
  if (t.min_bytes() > 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, " (plan's fewest %s: %.2fx", format_bytes(t.min_bytes()).c_str(),
                  t.excess_over_min());
    s += buf;
    if (l2_bytes > 0)
      s += "; " + format_bytes(t.min_bytes_counted(l2_bytes)) + " if outputs stay in the " +
           format_bytes(l2_bytes) + " L2";
    s += ")";
  }
  s += ", " + format_bandwidth(t.bandwidth()) + " over " +
       format_duration(static_cast<double>(t.duration_ns)) + " of kernel time";
  if (peaks.bandwidth > 0)
    s += " = " + analysis::format_percent(t.bandwidth() / peaks.bandwidth) + " of the " +
         ceiling_source(peaks.bandwidth_calibrated) + " peak " + format_bandwidth(peaks.bandwidth);
  if (t.iteration >= 0) s += "; counters of iteration " + std::to_string(t.iteration);
  return s;
}

}  // namespace

void draw_bandwidth_view(AppState& app) {
  const Session& session = *app.session;
  const analysis::Ceilings peaks = analysis::ceilings_of(session.info);
  std::vector<const LoadedRun*> runs;
  for (int64_t id : app.runs.selected)
    if (const LoadedRun* r = session.find_run(id)) runs.push_back(r);
  const double l2 = l2_bytes_of(session);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped(
      "DRAM bytes of one forward pass per kernel, counted as Nsight Compute counts them (no "
      "dirty L2 lines at each kernel's start; output still in the L2 at its end is not counted), "
      "and bandwidth over the kernel's time in the timing pass as a share of the %s peak. Runs: "
      "those selected above (ctrl-click adds).",
      ceiling_source(peaks.bandwidth_calibrated).c_str());
  ImGui::PopStyleColor();
  if (runs.empty()) {
    ImGui::TextDisabled("Select a run in the table above.");
    return;
  }

  // Common scales over every run shown.
  Columns c;
  double max_bw = peaks.bandwidth, max_bytes = 0;
  for (const LoadedRun* r : runs) {
    for (const analysis::KernelTraffic& k : r->traffic.kernels) {
      max_bw = std::max(max_bw, k.bandwidth());
      max_bytes = std::max(max_bytes, k.dram_bytes());
    }
    for (const analysis::OpTraffic& o : r->traffic.ops)
      max_bytes =
          std::max({max_bytes, o.dram_bytes, std::isfinite(o.min_bytes) ? o.min_bytes : 0.0});
  }
  c.bw_full = std::max(max_bw * 1.08, 1e9);
  c.bytes_full = std::max(max_bytes * 1.05, 1.0);

  ImGui::BeginChild("##bandwidth", ImVec2(0, 0), false);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  const float row_h = std::round(line * 2.6f);
  const float width = ImGui::GetContentRegionAvail().x;
  c.x0 = ImGui::GetCursorScreenPos().x;
  c.label_w = std::round(width * 0.26f);
  c.bw_x0 = c.x0 + c.label_w;
  c.bw_w = std::round(width * 0.30f);
  c.by_x0 = c.bw_x0 + c.bw_w + 24 * app.theme.scale;
  c.by_w = c.x0 + width - c.by_x0 - 180 * app.theme.scale;

  {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    axis_header(draw, c, p.y, peaks, app.theme);
    ImGui::Dummy(ImVec2(width, line * 1.4f));
  }
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    const LoadedRun& run = *runs[ri];
    const analysis::RunTraffic& t = run.traffic;
    ImGui::Separator();
    ImGui::TextColored(app.theme.accent, "%s", run_label(run.data.info).c_str());
    const analysis::MetricsAvailability status = kernel_metrics_status(session, run);
    if (!status.available) {
      ImGui::SameLine();
      ImGui::TextDisabled("no hardware counters: %s", status.why.c_str());
      continue;
    }
    ImGui::SameLine();
    ImGui::TextDisabled("%s", run_summary(t, peaks, l2).c_str());
    if (!t.plan.ok) ImGui::TextDisabled("no plan's fewest bytes: %s", t.plan.error.c_str());
    for (size_t k = 0; k < t.kernels.size(); ++k) {
      const analysis::KernelTraffic& kt = t.kernels[k];
      const std::string& op = run.data.str(kt.op);
      auto it = std::find_if(t.ops.begin(), t.ops.end(),
                             [&](const analysis::OpTraffic& o) { return o.op == op; });
      const bool single = it != t.ops.end() && it->kernels == 1;
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const bool planned = single && std::isfinite(it->min_bytes);
      bar_row(draw, c, p.y, row_h, op.empty() ? "(no op)" : op, run.names.short_name(kt.name),
              kt.dram_read, kt.dram_write, kt.seconds(), planned ? it->min_bytes : 0.0,
              planned ? analysis::fewest_counted(it->min_bytes, it->min_write_bytes, l2) : -1.0,
              peaks, app.theme);
      ImGui::InvisibleButton(("##k" + std::to_string(ri) + "_" + std::to_string(k)).c_str(),
                             ImVec2(width, row_h));
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::TextUnformatted(run.names.full_name(kt.name).c_str());
        ImGui::TextDisabled("op %s, correlation %u", op.c_str(), kt.correlation_id);
        ImGui::Text("read %s, write %s (DRAM, as Nsight Compute counts them)",
                    format_bytes(kt.dram_read).c_str(), format_bytes(kt.dram_write).c_str());
        ImGui::Text("time %s in the timing pass, %s in the counters pass",
                    format_duration(static_cast<double>(kt.duration_ns)).c_str(),
                    std::isfinite(kt.counted_duration_ns)
                        ? format_duration(kt.counted_duration_ns).c_str()
                        : "-");
        if (kt.flops > 0)
          ImGui::Text("%s FLOP, %s, %.1f FLOP/byte",
                      analysis::format_count(static_cast<uint64_t>(kt.flops)).c_str(),
                      format_flop_rate(kt.flop_rate()).c_str(), kt.intensity());
        ImGui::EndTooltip();
      }
      // An op of several kernels: its total against the plan's fewest, after its last kernel.
      const bool last_of_op = k + 1 == t.kernels.size() || run.data.str(t.kernels[k + 1].op) != op;
      if (!single && last_of_op && it != t.ops.end()) {
        const ImVec2 q = ImGui::GetCursorScreenPos();
        double read = 0, write = 0;
        for (const auto& x : t.kernels)
          if (run.data.str(x.op) == op) read += x.dram_read, write += x.dram_write;
        const bool op_planned = std::isfinite(it->min_bytes);
        bar_row(
            draw, c, q.y, row_h, op + " (op total)", std::to_string(it->kernels) + " kernels", read,
            write, static_cast<double>(it->duration_ns) * 1e-9, op_planned ? it->min_bytes : 0.0,
            op_planned ? analysis::fewest_counted(it->min_bytes, it->min_write_bytes, l2) : -1.0,
            peaks, app.theme);
        ImGui::Dummy(ImVec2(width, row_h));
      }
    }
    ImGui::Spacing();
  }
  ImGui::EndChild();
}

}  // namespace fusionscope::ui
