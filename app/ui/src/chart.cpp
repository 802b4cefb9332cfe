#include "chart.h"

#include <algorithm>
#include <cmath>

namespace fusionscope::ui::chart {

double LogScale::fraction(double v) const {
  if (!(v > 0) || !(hi > lo) || !(lo > 0)) return 0.0;
  return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
}

std::vector<double> LogScale::ticks_125() const {
  std::vector<double> out;
  if (!(lo > 0) || !(hi > lo)) return out;
  for (double decade = std::pow(10, std::floor(std::log10(lo))); decade <= hi * 10; decade *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (m * decade >= lo * 0.999 && m * decade <= hi * 1.001) out.push_back(m * decade);
  return out;
}

std::vector<double> LogScale::decades() const {
  std::vector<double> out;
  if (!(lo > 0) || !(hi > lo)) return out;
  for (int e = static_cast<int>(std::ceil(std::log10(lo) - 1e-9));
       e <= static_cast<int>(std::floor(std::log10(hi) + 1e-9)); ++e)
    out.push_back(std::pow(10.0, e));
  return out;
}

std::vector<double> LinearScale::ticks(double step) const {
  std::vector<double> out;
  if (!(step > 0) || !(hi > lo)) return out;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push_back(t);
  return out;
}

void y_grid(ImDrawList* draw, const PlotArea& area, std::span<const double> ticks,
            const std::function<double(double)>& fraction,
            const std::function<std::string(double)>& label, const Theme& theme, double emphasise) {
  for (double t : ticks) {
    const float y = area.y(fraction(t));
    const bool strong = std::abs(t - emphasise) < 1e-9;
    draw->AddLine(ImVec2(area.min.x, y), ImVec2(area.max.x, y),
                  strong ? theme.axis_emphasis : theme.grid_line, strong ? 1.5f : 1.0f);
    if (!label) continue;
    const std::string l = label(t);
    const ImVec2 sz = ImGui::CalcTextSize(l.c_str());
    draw->AddText(ImVec2(area.min.x - sz.x - 5 * theme.scale, y - sz.y * 0.5f), theme.ruler_text,
                  l.c_str());
  }
}

void x_grid(ImDrawList* draw, const PlotArea& area, std::span<const double> ticks,
            const std::function<double(double)>& fraction,
            const std::function<std::string(double)>& label, const Theme& theme) {
  for (double t : ticks) {
    const float x = area.x(fraction(t));
    draw->AddLine(ImVec2(x, area.min.y), ImVec2(x, area.max.y), theme.grid_line);
    if (!label) continue;
    const std::string l = label(t);
    const ImVec2 sz = ImGui::CalcTextSize(l.c_str());
    draw->AddText(ImVec2(x - sz.x * 0.5f, area.max.y + 3 * theme.scale), theme.ruler_text,
                  l.c_str());
  }
}

void dashed_line(ImDrawList* draw, ImVec2 a, ImVec2 b, ImU32 colour, float thickness, float dash) {
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float len = std::sqrt(dx * dx + dy * dy);
  if (len <= 0 || dash <= 0) return;
  for (float t = 0; t < len; t += dash * 2) {
    const float e = std::min(t + dash, len);
    draw->AddLine(ImVec2(a.x + dx * t / len, a.y + dy * t / len),
                  ImVec2(a.x + dx * e / len, a.y + dy * e / len), colour, thickness);
  }
}

void draw_mark(ImDrawList* draw, ImVec2 at, float size, const LegendEntry& e, float scale) {
  const float mid = at.y + size * 0.5f;
  switch (e.mark) {
    case Mark::kSwatch:
      draw->AddRectFilled(ImVec2(at.x, at.y + size * 0.2f), ImVec2(at.x + size, at.y + size * 0.8f),
                          e.colour, 2.0f * scale);
      break;
    case Mark::kLine:
      draw->AddLine(ImVec2(at.x, mid), ImVec2(at.x + size * 1.2f, mid), e.colour, 2.2f * scale);
      break;
    case Mark::kDashed:
      dashed_line(draw, ImVec2(at.x, mid), ImVec2(at.x + size * 1.2f, mid), e.colour, 1.5f * scale,
                  3.0f * scale);
      break;
    case Mark::kDot:
      draw->AddCircleFilled(ImVec2(at.x + size * 0.5f, mid), size * 0.3f, e.colour);
      break;
  }
}

void legend(std::span<const LegendEntry> entries, const Theme& theme) {
  const float h = ImGui::GetTextLineHeight();
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  for (size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    const float w = h * 1.5f + ImGui::CalcTextSize(e.label.c_str()).x;
    if (i > 0) {
      ImGui::SameLine(0, 18 * theme.scale);
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    }
    const ImVec2 p = ImGui::GetCursorScreenPos();
    draw_mark(ImGui::GetWindowDrawList(), p, h, e, theme.scale);
    ImGui::Dummy(ImVec2(h * 1.3f, h));
    ImGui::SameLine();
    ImGui::TextUnformatted(e.label.c_str());
  }
}

float legend_at(ImDrawList* draw, ImVec2 at, std::span<const LegendEntry> entries,
                const Theme& theme) {
  const float h = ImGui::GetTextLineHeight();
  float x = at.x;
  for (const LegendEntry& e : entries) {
    draw_mark(draw, ImVec2(x, at.y), h * 0.8f, e, theme.scale);
    x += h * 1.2f;
    draw->AddText(ImVec2(x, at.y), theme.gutter_text_dim, e.label.c_str());
    x += ImGui::CalcTextSize(e.label.c_str()).x + 10 * theme.scale;
  }
  return x;
}

}  // namespace fusionscope::ui::chart
