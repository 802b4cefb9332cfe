#include "text_fit.h"

namespace fusionscope::ui {

namespace {

float text_width(std::string_view s) {
  return ImGui::CalcTextSize(s.data(), s.data() + s.size()).x;
}

}  // namespace

std::string elide_middle(std::string_view text, float width) {
  if (text_width(text) <= width) return std::string(text);
  // U+2026 where the font has it (the UI's TTF fonts do), else three dots.
  const std::string_view kEllipsis = ImGui::GetFont()->FindGlyphNoFallback(0x2026)
                                         ? std::string_view("\xE2\x80\xA6")
                                         : std::string_view("...");
  const float room = width - text_width(kEllipsis);
  if (room <= 0) return {};
  // The longest kept length whose head and tail fit (a binary search over the count kept).
  size_t lo = 0, hi = text.size();
  while (lo < hi) {
    const size_t keep = (lo + hi + 1) / 2;
    const size_t head = (keep + 1) / 2, tail = keep / 2;
    if (text_width(text.substr(0, head)) + text_width(text.substr(text.size() - tail)) <= room)
      lo = keep;
    else
      hi = keep - 1;
  }
  const size_t head = (lo + 1) / 2, tail = lo / 2;
  return std::string(text.substr(0, head)) + std::string(kEllipsis) +
         std::string(text.substr(text.size() - tail));
}

bool text_elided(std::string_view text) {
  const float width = ImGui::GetContentRegionAvail().x;
  const std::string shown = elide_middle(text, width);
  ImGui::TextUnformatted(shown.c_str());
  const bool elided = shown.size() != text.size();
  if (elided && ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
    ImGui::TextUnformatted(text.data(), text.data() + text.size());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  return elided;
}

}  // namespace fusionscope::ui
