#include "histogram_view.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "chart.h"
#include "fusionscope/analysis/format.h"
#include "fusionscope/analysis/histogram.h"

namespace fusionscope::ui {

void draw_duration_histogram(const char* id, std::span<const HistogramSeries> series, ImVec2 size,
                             const Theme& theme) {
  ImGui::PushID(id);
  std::vector<chart::LegendEntry> legend;
  for (const HistogramSeries& s : series)
    legend.push_back({s.label + " (" + analysis::format_count(s.values_ns.size()) + ")", s.colour,
                      chart::Mark::kSwatch});
  const float top = ImGui::GetCursorScreenPos().y;
  chart::legend(legend, theme);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float line = ImGui::GetTextLineHeight();
  // What the legend took, then room for the axis labels under the bars.
  const float h = std::max(size.y - (origin.y - top) - line * 1.6f, line * 3);
  ImGui::InvisibleButton("##histogram", ImVec2(size.x, h + line * 1.4f));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const chart::PlotArea area{ImVec2(origin.x + 4 * theme.scale, origin.y),
                             ImVec2(origin.x + size.x - 4 * theme.scale, origin.y + h)};
  draw->AddRectFilled(area.min, area.max, theme.canvas_bg);

  // Shared bins over every series, counted once per change of the values rather than every frame
  // (a kernel may have run millions of times).
  const size_t bins = static_cast<size_t>(std::clamp(size.x / (7 * theme.scale), 8.0f, 60.0f));
  struct Cached {
    std::vector<std::pair<const double*, size_t>> of;
    size_t bins = 0;
    analysis::HistogramRange range;
    std::vector<analysis::Histogram> hists;
  };
  static std::unordered_map<ImGuiID, Cached> cache;
  Cached& cached = cache[ImGui::GetID("##histogram")];
  std::vector<std::pair<const double*, size_t>> of;
  for (const HistogramSeries& s : series) of.emplace_back(s.values_ns.data(), s.values_ns.size());
  if (cached.of != of || cached.bins != bins) {
    cached.of = of;
    cached.bins = bins;
    cached.range = analysis::histogram_range(
        series.empty() ? std::span<const double>() : series[0].values_ns,
        series.size() > 1 ? series[1].values_ns : std::span<const double>());
    cached.hists.clear();
    for (const HistogramSeries& s : series)
      cached.hists.push_back(analysis::make_histogram(s.values_ns, cached.range, bins));
  }
  const analysis::HistogramRange& range = cached.range;
  const std::vector<analysis::Histogram>& hists = cached.hists;
  uint32_t max_count = 1;
  for (const analysis::Histogram& hist : hists) max_count = std::max(max_count, hist.max_count());
  const float bw = (area.max.x - area.min.x) / static_cast<float>(bins);
  for (size_t si = 0; si < hists.size(); ++si) {
    // Overlaid series are translucent so both show where they overlap.
    const ImU32 fill =
        hists.size() > 1 ? (series[si].colour & 0x00FFFFFF) | 0xA0000000 : series[si].colour;
    for (size_t i = 0; i < bins; ++i) {
      const uint32_t c = hists[si].counts[i];
      if (c == 0) continue;
      const float x0 = area.min.x + bw * static_cast<float>(i);
      const float y = area.y(static_cast<double>(c) / max_count);
      draw->AddRectFilled(ImVec2(x0 + 1, y), ImVec2(x0 + bw - 1, area.max.y), fill);
    }
  }
  // A few edges labelled under the area.
  const size_t step = std::max<size_t>(1, bins / 5);
  for (size_t i = 0; i <= bins; i += step) {
    const float x = area.min.x + bw * static_cast<float>(i);
    draw->AddLine(ImVec2(x, area.max.y), ImVec2(x, area.max.y + 3 * theme.scale), theme.tick);
    const std::string label = analysis::format_duration(range.edge(i, bins));
    const float tw = ImGui::CalcTextSize(label.c_str()).x;
    draw->AddText(ImVec2(std::clamp(x - tw * 0.5f, area.min.x, area.max.x - tw), area.max.y + 3),
                  theme.ruler_text, label.c_str());
  }
  if (range.log)
    draw->AddText(ImVec2(area.min.x + 4, area.min.y + 2), theme.gutter_text_dim, "log bins");
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (hovered && area.contains(mouse)) {
    const size_t i = std::min(bins - 1, static_cast<size_t>((mouse.x - area.min.x) / bw));
    const float x0 = area.min.x + bw * static_cast<float>(i);
    draw->AddRect(ImVec2(x0, area.min.y), ImVec2(x0 + bw, area.max.y), theme.hover_outline);
    ImGui::BeginTooltip();
    ImGui::Text("%s to %s", analysis::format_duration(range.edge(i, bins)).c_str(),
                analysis::format_duration(range.edge(i + 1, bins)).c_str());
    for (size_t si = 0; si < hists.size(); ++si)
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(series[si].colour), "%s: %u",
                         series[si].label.c_str(), hists[si].counts[i]);
    ImGui::EndTooltip();
  }
  ImGui::PopID();
}

}  // namespace fusionscope::ui
