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
  // Set instead of `window` when the context came from EGL without a display (egl_platform.cpp).
  void* egl_library = nullptr;
  void* egl_display = nullptr;
  void* egl_context = nullptr;
  void* egl_surface = nullptr;
  float scale = 1.0f;
  std::string font_file;  // "" when ImGui's built-in font is used
  bool input = false;
};

// False with a reason a person can act on (no display, no OpenGL 3) in *error.
bool open_platform(Platform& p, const WindowSpec& spec, std::string* error);
void close_platform(Platform& p);

// Without any X display: an OpenGL context from EGL (the GPU's driver, or Mesa in software) for
// offscreen rendering only; libEGL is loaded at run time. False with a reason in *error.
bool open_headless_platform(Platform& p, const WindowSpec& spec, std::string* error);
void close_headless_platform(Platform& p);  // close_platform() calls it

// The ImGui context, font, style and OpenGL renderer for a current OpenGL context (both
// platforms call it); false with a reason in *error.
bool init_imgui(Platform& p, const WindowSpec& spec, std::string* error);

// GLSL version for ImGui's OpenGL 3 renderer: 130 runs on OpenGL 3.0 and up, Mesa's llvmpipe
// included.
inline constexpr const char* kGlslVersion = "#version 130";

}  // namespace fusionscope::ui
