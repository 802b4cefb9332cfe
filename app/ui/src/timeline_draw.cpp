#include "timeline_draw.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "text_fit.h"

namespace fusionscope::ui {

void item_rect(const RowGeometry& row, int64_t start_ns, int64_t end_ns, ImVec2& min, ImVec2& max) {
  // Clamp far-off coordinates so float precision and the draw list stay sane when zoomed in.
  const float lo = row.x0 - 4.0f, hi = row.x1 + 4.0f;
  float a = std::clamp(row.x_of(static_cast<double>(start_ns)), lo, hi);
  float b = std::clamp(row.x_of(static_cast<double>(end_ns)), lo, hi);
  if (b - a < 1.0f) b = a + 1.0f;
  min = ImVec2(a, row.y0 + 1.0f);
  max = ImVec2(b, row.y1 - 1.0f);
}

void draw_density(ImDrawList* draw, const RowGeometry& row, const analysis::LaneIndex& lane,
                  float a, float b, const Theme& theme) {
  const float x0 = std::max(a, row.x0), x1 = std::min(b, row.x1);
  if (x1 <= x0 || row.px_per_ns <= 0) return;
  const float top = row.y0 + 1.0f, bottom = row.y1 - 1.0f;
  draw->AddRectFilled(ImVec2(x0, top), ImVec2(x1, bottom), theme.density_bg);
  // One column per pixel; neighbours of the same height become one rectangle.
  const double ns_per_px = 1.0 / row.px_per_ns;
  float run_x = x0;
  float run_h = -1;
  auto flush = [&](float until) {
    if (run_h > 0)
      draw->AddRectFilled(ImVec2(run_x, bottom - run_h), ImVec2(until, bottom), theme.density_fill);
  };
  for (float x = std::floor(x0); x < x1; x += 1.0f) {
    const double t0 = row.t0_ns + static_cast<double>(x - row.x0) * ns_per_px;
    const double f = lane.busy_fraction(static_cast<int64_t>(std::floor(t0)),
                                        static_cast<int64_t>(std::ceil(t0 + ns_per_px)));
    // At least a pixel where anything runs, so a sparse stretch is not mistaken for idle.
    const float h = f > 0 ? std::max(1.0f, std::round(static_cast<float>(f) * (bottom - top))) : 0;
    if (h != run_h) {
      flush(std::max(x, x0));
      run_x = std::max(x, x0);
      run_h = h;
    }
  }
  flush(x1);
}

int draw_row_boxes(ImDrawList* draw, const RowGeometry& row, const analysis::LaneIndex& lane,
                   std::span<const analysis::LodBox> boxes, ItemLookFn look, const Theme& theme,
                   ImVec2 mouse) {
  int hovered = -1;
  ImFont* font = ImGui::GetFont();
  const float font_size = ImGui::GetFontSize();
  const float pad = 4.0f * theme.scale;
  const float min_label_width = font_size * 1.5f;
  const bool mouse_in_row = mouse.y >= row.y0 && mouse.y < row.y1;
  for (size_t i = 0; i < boxes.size(); ++i) {
    const analysis::LodBox& box = boxes[i];
    ImVec2 a, b;
    item_rect(row, box.start_ns, box.end_ns, a, b);
    const float width = b.x - a.x;
    std::string_view label;
    ImU32 fill;
    bool highlight = false;
    if (box.merged()) {
      // Busy fraction per column rather than a grey block; the count is in the tooltip.
      draw_density(draw, row, lane, a.x, b.x, theme);
      if (mouse_in_row && mouse.x >= a.x && mouse.x < b.x) hovered = static_cast<int>(i);
      continue;
    } else {
      const ItemLook l = look(box.first);
      fill = l.fill;
      label = l.label;
      highlight = l.highlight;
    }
    draw->AddRectFilled(a, b, fill);
    if (highlight)
      draw->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), theme.find_outline, 0.0f, 0,
                    2.0f * theme.scale);
    else if (width >= 4.0f)
      draw->AddRect(a, b, theme.box_outline);
    if (!label.empty() && width >= min_label_width) {
      // A name too long for its box is shortened from the middle, so the kernel family and the
      // tile shape both stay; what is left is clipped to the box, never spilled over.
      const float left = std::max(a.x, row.x0) + pad;
      const float room = std::min(b.x, row.x1) - left - pad * 0.5f;
      const ImVec4 clip(a.x + pad, a.y, b.x - pad * 0.5f, b.y);
      const float text_y = a.y + (b.y - a.y - font_size) * 0.5f;
      const ImU32 text = box.merged() ? theme.gutter_text : theme.box_text;
      std::string elided;
      if (room > 0 && ImGui::CalcTextSize(label.data(), label.data() + label.size()).x > room) {
        elided = elide_middle(label, room);
        label = elided;
      }
      draw->AddText(font, font_size, ImVec2(left, text_y), text, label.data(),
                    label.data() + label.size(), 0.0f, &clip);
    }
    // Hit test with at least 3 px of slack so a 1 px box can still be pointed at.
    if (mouse_in_row && mouse.x >= std::min(a.x, (a.x + b.x) * 0.5f - 1.5f) &&
        mouse.x < std::max(b.x, (a.x + b.x) * 0.5f + 1.5f))
      hovered = static_cast<int>(i);
  }
  return hovered;
}

}  // namespace fusionscope::ui
