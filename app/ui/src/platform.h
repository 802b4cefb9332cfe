// The window, the OpenGL context and the ImGui context: opened together, closed together.
#pragma once

#include <string>

struct GLFWwindow;

namespace fusionscope::ui {

struct WindowSpec {
  int width = 1440;  // before the high-DPI scale
  int height = 900;
  bool visible = true;
  bool input = true;   // install the GLFW input backend (off for headless rendering)
  float scale = 0.0f;  // UI scale; 0 = the monitor's content scale (or $FUSIONSCOPE_UI_SCALE)
  std::string title = "fusionscope";
};

struct Platform {
  GLFWwindow* window = nullptr;
  float scale = 1.0f;
  std::string font_file;  // "" when ImGui's built-in font is used
  bool input = false;
};

// False with a reason a person can act on (no display, no OpenGL 3) in *error.
bool open_platform(Platform& p, const WindowSpec& spec, std::string* error);
void close_platform(Platform& p);

// GLSL version for ImGui's OpenGL 3 renderer: 130 runs on OpenGL 3.0 and up, Mesa's llvmpipe
// included.
inline constexpr const char* kGlslVersion = "#version 130";

}  // namespace fusionscope::ui
