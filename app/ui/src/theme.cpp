#include "theme.h"

#include <algorithm>
#include <cmath>

namespace fusionscope::ui {

Theme make_theme(float scale, bool light) {
  Theme t;
  t.scale = scale;
  t.light = light;
  if (light) {
    // Light: dark text on pale rows; item fills keep their colours (dark text reads on them).
    t.canvas_bg = IM_COL32(248, 249, 251, 255);
    t.row_alt_bg = IM_COL32(238, 240, 244, 255);
    t.run_header_bg = IM_COL32(214, 222, 236, 255);
    t.gutter_text = IM_COL32(36, 40, 48, 255);
    t.gutter_text_dim = IM_COL32(96, 102, 114, 255);
    t.ruler_bg = IM_COL32(228, 231, 237, 255);
    t.ruler_text = IM_COL32(44, 48, 56, 255);
    t.grid_line = IM_COL32(0, 0, 0, 24);
    t.axis_emphasis = IM_COL32(0, 0, 0, 110);
    t.tick = IM_COL32(110, 116, 128, 255);
    t.box_outline = IM_COL32(0, 0, 0, 60);
    t.merged_fill = IM_COL32(150, 156, 170, 255);
    t.density_fill = IM_COL32(70, 110, 180, 255);
    t.density_bg = IM_COL32(70, 110, 180, 36);
    t.hover_outline = IM_COL32(20, 20, 24, 230);
    t.selected_outline = IM_COL32(214, 120, 0, 255);
    t.flow_line = IM_COL32(214, 120, 0, 220);
    t.find_outline = IM_COL32(0, 0, 0, 255);
    t.range_fill = IM_COL32(40, 110, 230, 36);
    t.range_edge = IM_COL32(40, 110, 230, 210);
    t.text_dim = ImVec4(0.36f, 0.38f, 0.43f, 1.0f);
    t.good = ImVec4(0.10f, 0.52f, 0.22f, 1.0f);
    t.bad = ImVec4(0.78f, 0.18f, 0.14f, 1.0f);
    t.accent = ImVec4(0.72f, 0.42f, 0.0f, 1.0f);
  }
  // The font is added but not built before the first frame: its configured size is what counts.
  const ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  const float font = atlas->ConfigData.empty() ? 13.0f * scale : atlas->ConfigData[0].SizePixels;
  t.row_height = std::round(font + 7.0f * scale);
  t.lane_gutter = std::round(170.0f * scale);
  t.details_width = std::round(390.0f * scale);
  return t;
}

ImVec4 clear_colour(bool light) {
  return light ? ImVec4(0.94f, 0.95f, 0.96f, 1.0f) : ImVec4(0.105f, 0.113f, 0.129f, 1.0f);
}

void apply_style(float scale, bool light) {
  ImGuiStyle& s = ImGui::GetStyle();
  s = ImGuiStyle();  // sizes from scratch: the scale may have changed
  if (light)
    ImGui::StyleColorsLight();
  else
    ImGui::StyleColorsDark();
  s.WindowPadding = ImVec2(10, 8);
  s.FramePadding = ImVec2(8, 4);
  s.CellPadding = ImVec2(6, 3);
  s.ItemSpacing = ImVec2(8, 6);
  s.ItemInnerSpacing = ImVec2(6, 4);
  s.ScrollbarSize = 13;
  s.GrabMinSize = 10;
  s.WindowRounding = 4;
  s.ChildRounding = 4;
  s.FrameRounding = 3;
  s.PopupRounding = 4;
  s.ScrollbarRounding = 6;
  s.GrabRounding = 3;
  s.TabRounding = 4;
  s.WindowBorderSize = 0;
  s.ChildBorderSize = 1;
  s.PopupBorderSize = 1;
  s.FrameBorderSize = 0;
  s.ScaleAllSizes(scale);

  ImVec4* c = s.Colors;
  if (light) {
    const ImVec4 blue(0.20f, 0.42f, 0.78f, 1.0f);
    c[ImGuiCol_WindowBg] = clear_colour(true);
    c[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
    c[ImGuiCol_Header] = ImVec4(0.20f, 0.42f, 0.78f, 0.30f);
    // Hover is a grey wash, never the selection's blue.
    c[ImGuiCol_HeaderHovered] = ImVec4(0, 0, 0, 0.06f);
    c[ImGuiCol_HeaderActive] = ImVec4(0.20f, 0.42f, 0.78f, 0.45f);
    c[ImGuiCol_ButtonActive] = blue;
    c[ImGuiCol_TabActive] = ImVec4(0.72f, 0.80f, 0.93f, 1.0f);
    c[ImGuiCol_TableRowBgAlt] = ImVec4(0, 0, 0, 0.03f);
    c[ImGuiCol_PlotHistogram] = blue;
    return;
  }
  const ImVec4 bg(0.105f, 0.113f, 0.129f, 1.0f);
  const ImVec4 panel(0.135f, 0.145f, 0.165f, 1.0f);
  const ImVec4 blue(0.26f, 0.46f, 0.78f, 1.0f);
  c[ImGuiCol_WindowBg] = bg;
  c[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
  c[ImGuiCol_PopupBg] = ImVec4(0.12f, 0.13f, 0.15f, 0.98f);
  c[ImGuiCol_MenuBarBg] = panel;
  c[ImGuiCol_Border] = ImVec4(0.25f, 0.27f, 0.31f, 1.0f);
  c[ImGuiCol_FrameBg] = ImVec4(0.18f, 0.195f, 0.22f, 1.0f);
  c[ImGuiCol_FrameBgHovered] = ImVec4(0.23f, 0.25f, 0.29f, 1.0f);
  c[ImGuiCol_FrameBgActive] = ImVec4(0.26f, 0.29f, 0.34f, 1.0f);
  c[ImGuiCol_TitleBg] = panel;
  c[ImGuiCol_TitleBgActive] = panel;
  c[ImGuiCol_Header] = ImVec4(0.26f, 0.46f, 0.78f, 0.45f);
  // Hover is a grey wash, never the selection's blue.
  c[ImGuiCol_HeaderHovered] = ImVec4(1, 1, 1, 0.07f);
  c[ImGuiCol_HeaderActive] = ImVec4(0.26f, 0.46f, 0.78f, 0.85f);
  c[ImGuiCol_Button] = ImVec4(0.21f, 0.23f, 0.27f, 1.0f);
  c[ImGuiCol_ButtonHovered] = ImVec4(0.28f, 0.36f, 0.50f, 1.0f);
  c[ImGuiCol_ButtonActive] = blue;
  c[ImGuiCol_Tab] = ImVec4(0.16f, 0.17f, 0.20f, 1.0f);
  c[ImGuiCol_TabHovered] = ImVec4(0.28f, 0.36f, 0.50f, 1.0f);
  c[ImGuiCol_TabActive] = ImVec4(0.22f, 0.32f, 0.48f, 1.0f);
  c[ImGuiCol_TabUnfocused] = c[ImGuiCol_Tab];
  c[ImGuiCol_TabUnfocusedActive] = c[ImGuiCol_TabActive];
  c[ImGuiCol_TableHeaderBg] = ImVec4(0.17f, 0.185f, 0.21f, 1.0f);
  c[ImGuiCol_TableBorderStrong] = ImVec4(0.25f, 0.27f, 0.31f, 1.0f);
  c[ImGuiCol_TableBorderLight] = ImVec4(0.20f, 0.215f, 0.245f, 1.0f);
  c[ImGuiCol_TableRowBg] = ImVec4(0, 0, 0, 0);
  c[ImGuiCol_TableRowBgAlt] = ImVec4(1, 1, 1, 0.025f);
  c[ImGuiCol_CheckMark] = ImVec4(0.55f, 0.72f, 1.0f, 1.0f);
  c[ImGuiCol_SliderGrab] = blue;
  c[ImGuiCol_Separator] = ImVec4(0.25f, 0.27f, 0.31f, 1.0f);
  c[ImGuiCol_PlotHistogram] = ImVec4(0.36f, 0.56f, 0.88f, 1.0f);
  c[ImGuiCol_ModalWindowDimBg] = ImVec4(0, 0, 0, 0.45f);
}

ImU32 color_for_name(std::string_view name) {
  // FNV-1a, then a hue from the golden-ratio sequence: neighbouring names get distant hues.
  uint32_t h = 2166136261u;
  for (char ch : name) {
    h ^= static_cast<uint8_t>(ch);
    h *= 16777619u;
  }
  const float hue = std::fmod(static_cast<float>(h % 1024) * 0.618034f, 1.0f);
  const float sat = 0.42f + 0.12f * static_cast<float>((h >> 10) % 3) / 2.0f;
  const float val = 0.86f + 0.08f * static_cast<float>((h >> 12) % 2);
  float r, g, b;
  ImGui::ColorConvertHSVtoRGB(hue, sat, val, r, g, b);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(r, g, b, 1.0f));
}

ImU32 blend(ImU32 color, ImU32 toward, float weight) {
  const ImVec4 a = ImGui::ColorConvertU32ToFloat4(color),
               b = ImGui::ColorConvertU32ToFloat4(toward);
  const float w = std::clamp(weight, 0.0f, 1.0f);
  return ImGui::ColorConvertFloat4ToU32(
      ImVec4(a.x * w + b.x * (1 - w), a.y * w + b.y * (1 - w), a.z * w + b.z * (1 - w), a.w));
}

ImU32 shade(ImU32 color, float factor) {
  ImVec4 c = ImGui::ColorConvertU32ToFloat4(color);
  c.x = std::clamp(c.x * factor, 0.0f, 1.0f);
  c.y = std::clamp(c.y * factor, 0.0f, 1.0f);
  c.z = std::clamp(c.z * factor, 0.0f, 1.0f);
  return ImGui::ColorConvertFloat4ToU32(c);
}

}  // namespace fusionscope::ui
