#include "timeline_draw.h"

#include <algorithm>
#include <cstdio>

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

int draw_row_boxes(ImDrawList* draw, const RowGeometry& row,
                   std::span<const analysis::LodBox> boxes, ItemLookFn look, const Theme& theme,
                   ImVec2 mouse) {
  int hovered = -1;
  ImFont* font = ImGui::GetFont();
  const float font_size = ImGui::GetFontSize();
  const float pad = 4.0f * theme.scale;
  const float min_label_width = font_size * 1.5f;
  const bool mouse_in_row = mouse.y >= row.y0 && mouse.y < row.y1;
  char count_label[32];
  for (size_t i = 0; i < boxes.size(); ++i) {
    const analysis::LodBox& box = boxes[i];
    ImVec2 a, b;
    item_rect(row, box.start_ns, box.end_ns, a, b);
    const float width = b.x - a.x;
    std::string_view label;
    ImU32 fill;
    if (box.merged()) {
      fill = theme.merged_fill;
      if (width >= min_label_width) {
        std::snprintf(count_label, sizeof count_label, "%u items", box.count);
        label = count_label;
      }
    } else {
      const ItemLook l = look(box.first);
      fill = l.fill;
      label = l.label;
    }
    draw->AddRectFilled(a, b, fill);
    if (width >= 4.0f) draw->AddRect(a, b, theme.box_outline);
    if (!label.empty() && width >= min_label_width) {
      // Clip the name to the box: a long kernel name is cut, never spilled over its neighbour.
      const ImVec4 clip(a.x + pad, a.y, b.x - pad * 0.5f, b.y);
      const float text_y = a.y + (b.y - a.y - font_size) * 0.5f;
      const ImU32 text = box.merged() ? theme.gutter_text : theme.box_text;
      draw->AddText(font, font_size, ImVec2(std::max(a.x, row.x0) + pad, text_y), text,
                    label.data(), label.data() + label.size(), 0.0f, &clip);
    }
    // Hit test with at least 3 px of slack so a 1 px box can still be pointed at.
    if (mouse_in_row && mouse.x >= std::min(a.x, (a.x + b.x) * 0.5f - 1.5f) &&
        mouse.x < std::max(b.x, (a.x + b.x) * 0.5f + 1.5f))
      hovered = static_cast<int>(i);
  }
  return hovered;
}

}  // namespace fusionscope::ui
