#include "metrics_row.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include "chart.h"
#include "fusionscope/analysis/format.h"

namespace fusionscope::ui {

namespace {

using Samples = std::span<const storage::SampleRecord>;

constexpr ImU32 kReadFill = IM_COL32(86, 156, 230, 235);
constexpr ImU32 kWriteFill = IM_COL32(235, 150, 70, 235);
constexpr ImU32 kSmFill = IM_COL32(120, 200, 140, 120);
constexpr ImU32 kSmLine = IM_COL32(120, 200, 140, 255);
constexpr ImU32 kTensorLine = IM_COL32(220, 110, 220, 255);

// The spacing of a series' samples (they come at a fixed interval).
double spacing(Samples s) {
  if (s.size() < 2) return 0.0;
  return static_cast<double>(s.back().t_ns - s.front().t_ns) / static_cast<double>(s.size() - 1);
}

// Samples in [t0, t1).
Samples window(Samples s, double t0, double t1) {
  auto lo = std::lower_bound(s.begin(), s.end(), t0, [](const storage::SampleRecord& r, double t) {
    return static_cast<double>(r.t_ns) < t;
  });
  auto hi = std::lower_bound(lo, s.end(), t1, [](const storage::SampleRecord& r, double t) {
    return static_cast<double>(r.t_ns) < t;
  });
  return {lo, hi};
}

// Calls fn(x_left, x_right, value) for each drawn step of a series: one per sample when samples
// are wider than a column, else the mean of each pixel column that holds samples.
template <class Fn>
void for_each_step(const RowGeometry& geo, Samples s, Fn fn) {
  if (s.empty() || geo.px_per_ns <= 0) return;
  const double dt = std::max(spacing(s), 1.0);
  const double t0 = geo.t0_ns, t1 = geo.t0_ns + (geo.x1 - geo.x0) / geo.px_per_ns;
  const Samples in_view = window(s, t0 - dt, t1 + dt);
  const int columns = std::max(1, static_cast<int>(geo.x1 - geo.x0));
  if (dt * geo.px_per_ns >= 1.0 || static_cast<int>(in_view.size()) <= columns) {
    for (const storage::SampleRecord& r : in_view) {
      const double t = static_cast<double>(r.t_ns);
      const float a = std::max(geo.x_of(t - dt * 0.5), geo.x0);
      const float b = std::min(geo.x_of(t + dt * 0.5), geo.x1);
      if (b > a && std::isfinite(r.value)) fn(a, std::max(b, a + 1.0f), r.value);
    }
    return;
  }
  static thread_local std::vector<analysis::SeriesBin> bins;
  analysis::bin_series(in_view, t0, t1, columns, bins);
  for (int c = 0; c < columns; ++c) {
    const analysis::SeriesBin& bin = bins[static_cast<size_t>(c)];
    if (bin.count == 0) continue;
    const float a = geo.x0 + static_cast<float>(c);
    fn(a, a + 1.0f, bin.mean);
  }
}

float y_of(const RowGeometry& geo, double value, double full_scale) {
  const float top = geo.y0 + 3.0f, bottom = geo.y1 - 2.0f;
  const double f = full_scale > 0 ? std::clamp(value / full_scale, 0.0, 1.05) : 0.0;
  return bottom - static_cast<float>(f) * (bottom - top);
}

}  // namespace

std::vector<MetricsRow> metrics_rows(const analysis::PmSeries& series) {
  std::vector<MetricsRow> rows;
  if (!series.dram_total.empty()) rows.push_back(MetricsRow::kDramBandwidth);
  if (series.has_activity()) rows.push_back(MetricsRow::kActivity);
  return rows;
}

float metrics_row_height(MetricsRow row, const Theme& theme) {
  return std::round(theme.row_height * (row == MetricsRow::kDramBandwidth ? 3.0f : 2.2f));
}

const char* metrics_row_label(MetricsRow row) {
  return row == MetricsRow::kDramBandwidth ? "DRAM bandwidth" : "SM, tensor active";
}

void draw_metrics_row(ImDrawList* draw, const RowGeometry& geo, MetricsRow row,
                      const analysis::PmSeries& series, double dram_peak, const Theme& theme) {
  // Baseline and full-scale guide.
  draw->AddLine(ImVec2(geo.x0, geo.y1 - 1.5f), ImVec2(geo.x1, geo.y1 - 1.5f), theme.grid_line);
  if (row == MetricsRow::kDramBandwidth) {
    const double scale = dram_peak > 0 ? dram_peak : series.max_dram_total();
    const float top = y_of(geo, scale, scale);
    draw->AddLine(ImVec2(geo.x0, top), ImVec2(geo.x1, top), theme.grid_line);
    // Total first (its visible top is the write share), read over it from the baseline.
    for_each_step(geo, series.dram_total, [&](float a, float b, double v) {
      draw->AddRectFilled(ImVec2(a, y_of(geo, v, scale)), ImVec2(b, geo.y1 - 1.5f), kWriteFill);
    });
    for_each_step(geo, series.dram_read, [&](float a, float b, double v) {
      draw->AddRectFilled(ImVec2(a, y_of(geo, v, scale)), ImVec2(b, geo.y1 - 1.5f), kReadFill);
    });
  } else {
    const float base = geo.y1 - 1.5f;
    for_each_step(geo, series.sm_active, [&](float a, float b, double v) {
      const float y = y_of(geo, v, 100.0);
      draw->AddRectFilled(ImVec2(a, y), ImVec2(b, base), kSmFill);
      draw->AddLine(ImVec2(a, y), ImVec2(b, y), kSmLine);
    });
    for_each_step(geo, series.tensor_active, [&](float a, float b, double v) {
      const float y = y_of(geo, v, 100.0);
      draw->AddRectFilled(ImVec2(a, y - 1.0f), ImVec2(b, y + 1.0f), kTensorLine);
    });
  }
}

void draw_metrics_row_legend(ImDrawList* draw, ImVec2 at, MetricsRow row,
                             const analysis::PmSeries& series, double dram_peak,
                             const Theme& theme) {
  // Under the row's label in the gutter, so that nothing covers the samples.
  std::string scale;
  if (row == MetricsRow::kDramBandwidth) {
    const double full = dram_peak > 0 ? dram_peak : series.max_dram_total();
    scale = "0 - " + analysis::format_bandwidth(full) + (dram_peak > 0 ? " peak" : " max");
  } else {
    scale = "0 - 100 %";
  }
  const float line = ImGui::GetTextLineHeight();
  draw->AddText(at, theme.gutter_text_dim, scale.c_str());
  const chart::LegendEntry dram[] = {{"read", kReadFill, chart::Mark::kSwatch},
                                     {"write", kWriteFill, chart::Mark::kSwatch}};
  const chart::LegendEntry activity[] = {{"SM", kSmLine, chart::Mark::kSwatch},
                                         {"tensor", kTensorLine, chart::Mark::kLine}};
  chart::legend_at(draw, ImVec2(at.x, at.y + line),
                   row == MetricsRow::kDramBandwidth ? dram : activity, theme);
}

void metrics_row_tooltip(MetricsRow row, const analysis::PmSeries& series, double t_ns,
                         double dram_peak) {
  auto value_at = [&](const std::vector<storage::SampleRecord>& s, double& v) {
    const storage::SampleRecord* r = analysis::nearest_sample(s, t_ns);
    if (r) v = r->value;
    return r != nullptr;
  };
  if (row == MetricsRow::kDramBandwidth) {
    double total = 0, read = 0, write = 0;
    if (!value_at(series.dram_total, total)) return;
    ImGui::Text("DRAM %s", analysis::format_bandwidth(total).c_str());
    if (value_at(series.dram_read, read) && value_at(series.dram_write, write)) {
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kReadFill), "read  %s",
                         analysis::format_bandwidth(read).c_str());
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kWriteFill), "write %s",
                         analysis::format_bandwidth(write).c_str());
    }
    if (dram_peak > 0)
      ImGui::TextDisabled("%.0f%% of the peak %s", 100.0 * total / dram_peak,
                          analysis::format_bandwidth(dram_peak).c_str());
  } else {
    double sm = 0, tensor = 0;
    if (value_at(series.sm_active, sm))
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kSmLine), "SM active   %5.1f %%", sm);
    if (value_at(series.tensor_active, tensor))
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kTensorLine), "tensor pipe %5.1f %%",
                         tensor);
  }
  const double dt = spacing(series.dram_total.empty() ? series.sm_active : series.dram_total);
  if (dt > 0) ImGui::TextDisabled("PM sample of %s", analysis::format_duration(dt).c_str());
}

}  // namespace fusionscope::ui
