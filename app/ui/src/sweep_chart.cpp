#include "sweep_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chart.h"
#include "fusionscope/analysis/format.h"
#include "theme.h"

namespace fusionscope::ui {

namespace {

using analysis::SweepChart;

// Variants in colours far apart (a hash of the name can give two greens); others by their name.
ImU32 series_color(const std::string& name) {
  if (name == "eager") return IM_COL32(236, 112, 160, 255);
  if (name == "epilogue") return IM_COL32(240, 200, 90, 255);
  if (name == "pointwise-fused") return IM_COL32(110, 200, 240, 255);
  if (name == "gated-gemm") return IM_COL32(120, 220, 130, 255);
  if (name == "fully-fused") return IM_COL32(190, 150, 250, 255);
  return color_for_name(name);
}

using chart::PlotArea;

std::string size_label(double v) {
  char buf[32];
  if (v >= 1048576 && std::fmod(v, 1048576) == 0)
    std::snprintf(buf, sizeof buf, "%.0fM", v / 1048576);
  else if (v >= 1024 && std::fmod(v, 1024) == 0)
    std::snprintf(buf, sizeof buf, "%.0fk", v / 1024);
  else
    std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// Draws one chart; `value(series, i)` is the series' value at size i (NaN = none), `y_of` maps a
// value to [0, 1].
template <class Value, class YOf>
void draw_series(ImDrawList* draw, const PlotArea& area, const SweepChart& chart,
                 const analysis::Log2Axis& x_axis, Value value, YOf y_of, bool dashed,
                 float scale) {
  for (const analysis::SweepSeries& s : chart.series) {
    const ImU32 color = series_color(s.name);
    bool have_prev = false;
    ImVec2 prev;
    for (size_t i = 0; i < chart.sizes.size(); ++i) {
      const double v = value(s, i);
      if (!std::isfinite(v)) {
        have_prev = false;  // a gap where a run failed or is missing
        continue;
      }
      const ImVec2 p(area.x(x_axis.fraction(chart.sizes[i])), area.y(y_of(v)));
      if (have_prev) {
        if (dashed)
          chart::dashed_line(draw, prev, p, shade(color, 0.8f), 1.5f * scale, 4 * scale);
        else
          draw->AddLine(prev, p, color, 2.2f * scale);
      }
      if (!dashed) draw->AddCircleFilled(p, 3.5f * scale, color);
      prev = p;
      have_prev = true;
    }
  }
}

void draw_x_axis(ImDrawList* draw, const PlotArea& area, const analysis::Log2Axis& axis,
                 const Theme& theme) {
  const std::vector<double> ticks = axis.ticks();
  chart::x_grid(
      draw, area, ticks, [&](double v) { return axis.fraction(v); }, size_label, theme);
}

// The chart of one kind (times or speedups) in the rectangle the cursor is at.
void time_chart(const AppState& app, const SweepChart& chart, const analysis::Log2Axis& x_axis,
                ImVec2 size, bool bounds, int hover) {
  const Theme& theme = app.theme;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float left = ImGui::CalcTextSize("000.0 ms").x + 10;
  PlotArea area{ImVec2(origin.x + left, origin.y + 4),
                ImVec2(origin.x + size.x - 8, origin.y + size.y - ImGui::GetTextLineHeight() - 6)};
  draw->AddRectFilled(area.min, area.max, theme.canvas_bg);
  const chart::LogScale scale{chart.min_time_ns / 1.3, chart.max_time_ns * 1.3};
  auto y_of = [&](double v) { return scale.fraction(v); };
  const std::vector<double> ticks = scale.ticks_125();
  chart::y_grid(
      draw, area, ticks, y_of, [](double t) { return analysis::format_duration(t); }, theme);
  draw_x_axis(draw, area, x_axis, theme);
  if (bounds)
    draw_series(
        draw, area, chart, x_axis,
        [](const analysis::SweepSeries& s, size_t i) { return s.bound_ns[i]; }, y_of, true,
        theme.scale);
  draw_series(
      draw, area, chart, x_axis,
      [](const analysis::SweepSeries& s, size_t i) { return s.time_ns[i]; }, y_of, false,
      theme.scale);
  if (hover >= 0) {
    const float x = area.x(x_axis.fraction(chart.sizes[static_cast<size_t>(hover)]));
    draw->AddLine(ImVec2(x, area.min.y), ImVec2(x, area.max.y), theme.range_edge);
  }
  draw->AddText(ImVec2(area.min.x + 6, area.min.y + 4), theme.gutter_text,
                "GPU time per iteration (log)");
  ImGui::Dummy(size);
}

void speedup_chart(const AppState& app, const SweepChart& chart, const analysis::Log2Axis& x_axis,
                   ImVec2 size, int hover, const std::string& size_name) {
  const Theme& theme = app.theme;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float left = ImGui::CalcTextSize("000.0 ms").x + 10;
  const float bottom = ImGui::GetTextLineHeight() * 2 + 8;
  PlotArea area{ImVec2(origin.x + left, origin.y + 4),
                ImVec2(origin.x + size.x - 8, origin.y + size.y - bottom)};
  draw->AddRectFilled(area.min, area.max, theme.canvas_bg);
  const double lo = std::min(0.8, chart.min_speedup * 0.95);
  const double hi = std::max(1.25, chart.max_speedup * 1.08);
  auto y_of = [&](double v) { return (v - lo) / (hi - lo); };
  // Where fusion pays off: from that size to the right edge.
  if (chart.pays_off_from) {
    const float x0 = area.x(x_axis.fraction(*chart.pays_off_from));
    draw->AddRectFilled(ImVec2(x0, area.min.y), area.max, IM_COL32(90, 200, 120, 28));
  }
  const chart::LinearScale scale{lo, hi};
  const std::vector<double> ticks =
      scale.ticks((hi - lo) > 3 ? 1.0 : ((hi - lo) > 1.2 ? 0.5 : 0.25));
  chart::y_grid(
      draw, area, ticks, [&](double v) { return scale.fraction(v); },
      [](double t) { return analysis::format_factor(t, 2); }, theme, 1.0);
  draw_x_axis(draw, area, x_axis, theme);
  draw_series(
      draw, area, chart, x_axis,
      [](const analysis::SweepSeries& s, size_t i) { return s.speedup[i]; }, y_of, false,
      theme.scale);
  if (hover >= 0) {
    const float x = area.x(x_axis.fraction(chart.sizes[static_cast<size_t>(hover)]));
    draw->AddLine(ImVec2(x, area.min.y), ImVec2(x, area.max.y), theme.range_edge);
  }
  draw->AddText(
      ImVec2(area.min.x + 6, area.min.y + 4), theme.gutter_text,
      ("speedup over " + chart.baseline + (chart.pays_off_from ? "   shaded: fusion pays off" : ""))
          .c_str());
  const std::string axis = size_name + " (log2)";
  const ImVec2 sz = ImGui::CalcTextSize(axis.c_str());
  draw->AddText(
      ImVec2((area.min.x + area.max.x - sz.x) * 0.5f, area.max.y + ImGui::GetTextLineHeight() + 5),
      theme.ruler_text, axis.c_str());
  ImGui::Dummy(size);
}

void legend(const AppState& app, const SweepChart& chart, bool bounds) {
  std::vector<chart::LegendEntry> entries;
  for (const analysis::SweepSeries& s : chart.series)
    entries.push_back({s.name, series_color(s.name), chart::Mark::kLine});
  if (bounds)
    entries.push_back({"roofline bound", app.theme.gutter_text_dim, chart::Mark::kDashed});
  chart::legend(entries, app.theme);
}

}  // namespace

analysis::SweepChart sweep_chart_of(const Session& session, const lab::SweepRecord& sweep,
                                    const analysis::PredictionPeaks& peaks) {
  std::vector<analysis::SweepSample> samples;
  for (size_t p = 0; p < sweep.points.size(); ++p) {
    kernels::MlpConfig config;
    try {
      config = lab::with_size(sweep.base, sweep.spec.size, sweep.points[p].value);
    } catch (const kernels::ConfigError&) {
      continue;
    }
    for (kernels::Variant v : sweep.variants) {
      analysis::SweepSample s;
      s.size = static_cast<double>(sweep.points[p].value);
      s.series = std::string(kernels::to_string(v));
      try {
        s.bound_ns = analysis::predict(config, v, peaks).bound_ns;
      } catch (const kernels::ConfigError&) {
        continue;  // the variant does not apply here
      }
      const LoadedRun* run = session.find_run(sweep.run_for(p, v));
      if (run && run->data.info.status == storage::RunStatus::kOk && run->summary.kernels > 0)
        s.time_ns = run->summary.kernel_time_per_iteration_ns();
      samples.push_back(std::move(s));
    }
  }
  return analysis::build_sweep_chart(samples);
}

void draw_sweep_view(AppState& app) {
  const Session& session = *app.session;
  std::vector<std::string> errors;
  const std::vector<lab::SweepRecord> sweeps = lab::load_sweeps(session.properties, &errors);
  for (const std::string& e : errors) ImGui::TextColored(app.theme.bad, "%s", e.c_str());
  if (sweeps.empty()) {
    ImGui::Spacing();
    ImGui::TextDisabled(
        "No sweep in this session. In the Lab tab, tick \"Sweep one size\", pick the size and "
        "its range, and Run: each point runs in every chosen variant, and the chart shows here.");
    return;
  }
  const lab::SweepRecord* shown = &sweeps.back();
  for (const auto& s : sweeps)
    if (s.key == app.sweep.key) shown = &s;
  ImGui::AlignTextToFramePadding();
  ImGui::TextDisabled("Sweep");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 30);
  if (ImGui::BeginCombo("##sweep", shown->title().c_str())) {
    for (const auto& s : sweeps)
      if (ImGui::Selectable(s.title().c_str(), &s == shown)) app.sweep.key = s.key;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::Checkbox("roofline bounds", &app.sweep.show_bounds);
  ImGui::SameLine(0, 18 * app.theme.scale);
  ImGui::TextDisabled("%s", shown->created_utc.c_str());

  const analysis::PredictionPeaks peaks = analysis::choose_peaks(&session.info, nullptr);
  const SweepChart chart = sweep_chart_of(session, *shown, peaks);
  if (chart.empty() || !(chart.max_time_ns > 0)) {
    ImGui::Spacing();
    ImGui::TextDisabled("None of this sweep's runs has been measured yet (or they all failed).");
    return;
  }
  const std::string size_name(lab::to_string(shown->spec.size));
  if (chart.pays_off_from) {
    const std::string where =
        *chart.pays_off_from <= chart.sizes.front()
            ? "at every " + size_name + " swept"
            : "from " + size_name + " = " + size_label(*chart.pays_off_from) + " on";
    ImGui::TextColored(app.theme.good, "Fusion pays off %s: %s is %.2fx %s at %s.", where.c_str(),
                       chart.best_at_largest.c_str(), chart.best_speedup_at_largest,
                       chart.baseline.c_str(), size_label(chart.sizes.back()).c_str());
  } else {
    ImGui::TextColored(app.theme.accent, "No fused variant beats %s for good over this range.",
                       chart.baseline.c_str());
  }
  legend(app, chart, app.sweep.show_bounds);

  const analysis::Log2Axis x_axis = analysis::log2_axis(chart.sizes.front(), chart.sizes.back());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float h_time = std::max(avail.y * 0.55f, 120.0f);
  const float h_speed = std::max(avail.y - h_time - ImGui::GetStyle().ItemSpacing.y, 100.0f);
  // The size under the mouse, for the cursor line and the tooltip.
  int hover = -1;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float left = ImGui::CalcTextSize("000.0 ms").x + 10;
  if (ImGui::IsWindowHovered() && mouse.x >= origin.x + left && mouse.x <= origin.x + avail.x &&
      mouse.y >= origin.y && mouse.y <= origin.y + h_time + h_speed) {
    float best = 1e9f;
    const float w = avail.x - 8 - left;
    for (size_t i = 0; i < chart.sizes.size(); ++i) {
      const float x = origin.x + left + static_cast<float>(x_axis.fraction(chart.sizes[i])) * w;
      if (std::abs(x - mouse.x) < best) {
        best = std::abs(x - mouse.x);
        hover = static_cast<int>(i);
      }
    }
  }
  time_chart(app, chart, x_axis, ImVec2(avail.x, h_time), app.sweep.show_bounds, hover);
  speedup_chart(app, chart, x_axis, ImVec2(avail.x, h_speed), hover, size_name);
  if (hover >= 0) {
    const size_t i = static_cast<size_t>(hover);
    ImGui::BeginTooltip();
    ImGui::Text("%s = %.0f", size_name.c_str(), chart.sizes[i]);
    for (const analysis::SweepSeries& s : chart.series) {
      if (!std::isfinite(s.time_ns[i])) {
        ImGui::TextDisabled("%-16s not measured", s.name.c_str());
        continue;
      }
      ImGui::Text("%-16s %10s  %.2fx", s.name.c_str(),
                  analysis::format_duration(s.time_ns[i]).c_str(),
                  std::isfinite(s.speedup[i]) ? s.speedup[i] : 0.0);
      if (std::isfinite(s.bound_ns[i])) {
        ImGui::SameLine();
        ImGui::TextDisabled("  bound %s", analysis::format_duration(s.bound_ns[i]).c_str());
      }
    }
    ImGui::EndTooltip();
  }
}

}  // namespace fusionscope::ui
