// The Roofline tab: every kernel of one forward pass of the shown runs as a point, arithmetic
// intensity (measured FLOPs over measured DRAM bytes) against achieved FLOP/s, on log-log axes
// under the GPU's ceilings: the DRAM bandwidth slope, the bf16 tensor roof and the fp32 roof.
// Calibrated ceilings (`fusionscope calibrate --session`) are drawn solid, theoretical ones
// dashed. Hovering a point names its kernel.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chart.h"
#include "fusionscope/analysis/format.h"
#include "fusionscope/analysis/roofline.h"
#include "metrics_common.h"
#include "views.h"

namespace fusionscope::ui {

namespace {

struct Plot {
  ImVec2 min, max;  // the plotting rectangle
  analysis::LogRange x, y;
  ImVec2 at(double intensity, double rate) const {
    return ImVec2(min.x + static_cast<float>(x.fraction(intensity)) * (max.x - min.x),
                  max.y - static_cast<float>(y.fraction(rate)) * (max.y - min.y));
  }
};

std::string decade_label(int exponent, const char* unit) {
  static const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  char buf[32];
  if (exponent < 0) {
    std::snprintf(buf, sizeof buf, "%g%s", std::pow(10.0, exponent), unit);
    return buf;
  }
  const int group = std::min(exponent / 3, 5);
  std::snprintf(buf, sizeof buf, "%g %s%s", std::pow(10.0, exponent - 3 * group), prefixes[group],
                unit);
  return buf;
}

// The slope up to its roof, then the roof; clipped to the plot. `roof` 0 = slope alone.
void ceiling(ImDrawList* draw, const Plot& p, double bandwidth, double roof, ImU32 colour,
             bool solid, float thickness) {
  if (!(bandwidth > 0)) return;
  const double x0 = p.x.min(), x1 = p.x.max();
  const double ridge = roof > 0 ? roof / bandwidth : x1;
  auto line = [&](double ax, double ay, double bx, double by) {
    const ImVec2 a = p.at(ax, ay), b = p.at(bx, by);
    if (solid)
      draw->AddLine(a, b, colour, thickness);
    else
      chart::dashed_line(draw, a, b, colour, thickness, 6.0f);
  };
  // Keep the slope inside the y range: start where it enters the plot.
  const double sx0 = std::max(x0, p.y.min() / bandwidth);
  if (ridge > sx0) line(sx0, bandwidth * sx0, std::min(ridge, x1), bandwidth * std::min(ridge, x1));
  if (roof > 0 && ridge < x1) line(std::max(ridge, x0), roof, x1, roof);
}

struct Point {
  const LoadedRun* run;
  size_t run_index;
  const analysis::KernelTraffic* kernel;
  analysis::RooflinePoint point;
};

}  // namespace

void draw_roofline_view(AppState& app) {
  const Session& session = *app.session;
  const analysis::Ceilings c = analysis::ceilings_of(session.info);
  const std::vector<const LoadedRun*> runs = runs_with_variants(app);
  ImGui::TextDisabled(
      "Each kernel of one forward pass: measured FLOPs / DRAM bytes against FLOP/s (kernel time "
      "of the timing pass). Runs: those selected above, or the variants of the one selected.");
  if (runs.empty()) {
    ImGui::TextDisabled("Select a run in the table above.");
    return;
  }
  std::vector<Point> points;
  std::vector<std::string> notes;
  size_t left_out = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const LoadedRun& r = *runs[i];
    const analysis::MetricsAvailability status = kernel_metrics_status(session, r);
    if (!status.available) {
      notes.push_back(run_label(r.data.info) + ": " + status.why);
      continue;
    }
    size_t skipped = 0;
    for (const analysis::RooflinePoint& p : analysis::roofline_points(r.traffic, c, &skipped))
      points.push_back({&r, i, &r.traffic.kernels[p.traffic], p});
    left_out += skipped;
  }

  // Axes: the points and the ceilings' corners.
  std::vector<double> xs, ys;
  for (const Point& p : points) {
    xs.push_back(p.point.intensity);
    ys.push_back(p.point.flop_rate);
  }
  if (c.ridge() > 0) xs.push_back(c.ridge() * 4);
  if (c.bandwidth > 0 && c.fp32_flops > 0) xs.push_back(c.fp32_flops / c.bandwidth);
  for (double roof : {c.tensor_flops, c.theoretical_tensor_flops, c.fp32_flops})
    if (roof > 0) ys.push_back(roof * 1.5);
  Plot plot;
  plot.x = analysis::log_range(xs, 4);
  plot.y = analysis::log_range(ys, 4);

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float scale = app.theme.scale;
  const float legend_w = std::min(340.0f * scale, avail.x * 0.3f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float line = ImGui::GetTextLineHeight();
  plot.min = ImVec2(origin.x + 90 * scale, origin.y + line);
  plot.max = ImVec2(origin.x + avail.x - legend_w - 16 * scale,
                    origin.y + std::max(avail.y - line * 2.6f, line * 8));
  ImGui::InvisibleButton("##roofline", ImVec2(avail.x - legend_w, avail.y));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(plot.min, plot.max, app.theme.canvas_bg);

  // Decade grid and labels.
  {
    const chart::PlotArea area{plot.min, plot.max};
    const chart::LogScale xs_scale{plot.x.min(), plot.x.max()},
        ys_scale{plot.y.min(), plot.y.max()};
    const std::vector<double> x_ticks = xs_scale.decades(), y_ticks = ys_scale.decades();
    auto exponent = [](double v) { return static_cast<int>(std::lround(std::log10(v))); };
    chart::x_grid(
        draw, area, x_ticks, [&](double v) { return plot.x.fraction(v); },
        [&](double v) { return decade_label(exponent(v), ""); }, app.theme);
    chart::y_grid(
        draw, area, y_ticks, [&](double v) { return plot.y.fraction(v); },
        [&](double v) { return decade_label(exponent(v), "FLOP/s"); }, app.theme);
  }
  {
    const char* xl = "arithmetic intensity (FLOP per DRAM byte)";
    draw->AddText(ImVec2((plot.min.x + plot.max.x - ImGui::CalcTextSize(xl).x) * 0.5f,
                         plot.max.y + line * 1.3f),
                  app.theme.gutter_text_dim, xl);
  }

  // Ceilings: tensor roof over the bandwidth slope, then fp32; theoretical ones dashed.
  draw->PushClipRect(plot.min, plot.max, true);
  const ImU32 roof_colour = IM_COL32(230, 230, 230, 230);
  const ImU32 theory_colour = IM_COL32(170, 170, 170, 170);
  const ImU32 fp32_colour = IM_COL32(150, 190, 240, 200);
  if (c.bandwidth_calibrated || c.tensor_calibrated)
    ceiling(draw, plot, c.theoretical_bandwidth, c.theoretical_tensor_flops, theory_colour, false,
            1.2f * scale);
  ceiling(draw, plot, c.bandwidth, c.tensor_flops, roof_colour, c.bandwidth_calibrated,
          2.0f * scale);
  if (c.fp32_flops > 0)
    ceiling(draw, plot, c.bandwidth, c.fp32_flops, fp32_colour, false, 1.4f * scale);
  auto roof_label = [&](double roof, const std::string& text, ImU32 colour) {
    if (!(roof > 0)) return;
    const ImVec2 p = plot.at(plot.x.max(), roof);
    draw->AddText(ImVec2(p.x - ImGui::CalcTextSize(text.c_str()).x - 6 * scale, p.y - line - 2),
                  colour, text.c_str());
  };
  roof_label(c.tensor_flops,
             "bf16 tensor " + format_flop_rate(c.tensor_flops) + " (" +
                 ceiling_source(c.tensor_calibrated) + ")",
             roof_colour);
  roof_label(c.fp32_flops, "fp32 " + format_flop_rate(c.fp32_flops) + " (theoretical)",
             fp32_colour);
  if (c.bandwidth > 0) {
    // On the slope, a decade into the plot.
    const double x = std::max(plot.x.min() * 3, plot.y.min() * 30 / c.bandwidth);
    const ImVec2 p = plot.at(x, c.bandwidth * x);
    const std::string text = "DRAM " + format_bandwidth(c.bandwidth) + " (" +
                             ceiling_source(c.bandwidth_calibrated) + ")";
    draw->AddText(ImVec2(p.x + 8 * scale, p.y + 2), roof_colour, text.c_str());
  }

  // Points, labelled with their op; the one under the mouse is outlined.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int hot = -1;
  float best = 12.0f * scale;
  for (size_t i = 0; i < points.size(); ++i) {
    const ImVec2 q = plot.at(points[i].point.intensity, points[i].point.flop_rate);
    const float d = std::hypot(q.x - mouse.x, q.y - mouse.y);
    if (hovered && d < best) {
      best = d;
      hot = static_cast<int>(i);
    }
  }
  std::vector<ImVec4> labels;  // placed so far: a label that would overlap one is left out
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    const ImVec2 q = plot.at(p.point.intensity, p.point.flop_rate);
    draw->AddCircleFilled(q, 5.5f * scale, run_colour(p.run_index));
    draw->AddCircle(q, 5.5f * scale, IM_COL32(0, 0, 0, 160), 0, 1.0f);
    const std::string& op = p.run->data.str(p.kernel->op);
    const ImVec2 size = ImGui::CalcTextSize(op.c_str());
    const ImVec4 box(q.x + 8 * scale, q.y - line * 0.5f, q.x + 8 * scale + size.x,
                     q.y + line * 0.5f);
    const bool overlaps = std::any_of(labels.begin(), labels.end(), [&](const ImVec4& o) {
      return box.x < o.z && o.x < box.z && box.y < o.w && o.y < box.w;
    });
    if (overlaps) continue;
    labels.push_back(box);
    draw->AddText(ImVec2(box.x, box.y), app.theme.gutter_text_dim, op.c_str());
  }
  if (hot >= 0) {
    const ImVec2 q = plot.at(points[hot].point.intensity, points[hot].point.flop_rate);
    draw->AddCircle(q, 9.0f * scale, app.theme.selected_outline, 0, 2.0f * scale);
  }
  draw->PopClipRect();
  draw->AddRect(plot.min, plot.max, app.theme.tick);

  if (hot >= 0) {
    const Point& p = points[static_cast<size_t>(hot)];
    const analysis::KernelTraffic& k = *p.kernel;
    ImGui::BeginTooltip();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(run_colour(p.run_index)), "%s",
                       p.run->names.short_name(k.name).c_str());
    ImGui::TextDisabled("%s, op %s", run_label(p.run->data.info).c_str(),
                        p.run->data.str(k.op).c_str());
    ImGui::Text("%.1f FLOP/byte: %s FLOP over %s of DRAM traffic", p.point.intensity,
                analysis::format_count(static_cast<uint64_t>(k.flops)).c_str(),
                analysis::format_bytes(k.dram_bytes()).c_str());
    ImGui::Text("%s in %s", format_flop_rate(p.point.flop_rate).c_str(),
                analysis::format_duration(static_cast<double>(k.duration_ns)).c_str());
    if (p.point.attainable > 0)
      ImGui::Text("%.0f%% of the %s attainable there (%s-bound)",
                  100.0 * p.point.flop_rate / p.point.attainable,
                  format_flop_rate(p.point.attainable).c_str(),
                  p.point.memory_bound ? "memory" : "compute");
    ImGui::EndTooltip();
  }

  // Legend: runs and their colours, then why some kernels or runs are missing.
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextUnformatted("Runs");
  for (size_t i = 0; i < runs.size(); ++i) {
    const chart::LegendEntry entry{run_label(runs[i]->data.info), run_colour(i), chart::Mark::kDot};
    chart::legend(std::span(&entry, 1), app.theme);
  }
  ImGui::Spacing();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + legend_w - 8 * scale);
  if (c.ridge() > 0)
    ImGui::TextDisabled("Ridge point %.0f FLOP/byte: left of it a kernel is memory-bound.",
                        c.ridge());
  if (c.bandwidth_calibrated || c.tensor_calibrated)
    ImGui::TextDisabled("Dashed grey: the theoretical %s and %s.",
                        format_bandwidth(c.theoretical_bandwidth).c_str(),
                        format_flop_rate(c.theoretical_tensor_flops).c_str());
  else
    ImGui::TextDisabled(
        "Ceilings from the GPU's clocks; `fusionscope calibrate --session` "
        "measures achievable ones.");
  if (c.bandwidth <= 0) ImGui::TextDisabled("The session does not know the GPU's bandwidth.");
  if (left_out > 0)
    ImGui::TextDisabled("%zu kernel(s) without counted FLOPs are not on the chart.", left_out);
  for (const std::string& n : notes) ImGui::TextDisabled("%s", n.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
}

}  // namespace fusionscope::ui
