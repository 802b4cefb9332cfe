#include "platform.h"

#include <cmath>
#include <cstdlib>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include "fonts.h"
#include "theme.h"

namespace fusionscope::ui {

namespace {

std::string glfw_error() {
  const char* description = nullptr;
  glfwGetError(&description);
  return description ? description : "unknown error";
}

float ui_scale(GLFWwindow* window, float requested) {
  if (requested > 0.0f) return requested;
  if (const char* env = std::getenv("FUSIONSCOPE_UI_SCALE")) {
    const float s = std::strtof(env, nullptr);
    if (s >= 0.5f && s <= 4.0f) return s;
  }
  float x = 1.0f, y = 1.0f;
  if (!window) return 1.0f;
  glfwGetWindowContentScale(window, &x, &y);
  const float s = x > y ? x : y;
  return s >= 0.5f && s <= 4.0f ? s : 1.0f;
}

}  // namespace

bool open_platform(Platform& p, const WindowSpec& spec, std::string* error) {
  if (!glfwInit()) {
    if (error)
      *error = "cannot open a window: " + glfw_error() +
               ". Set DISPLAY to an X server, or use xvfb-run for headless commands.";
    return false;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  glfwWindowHint(GLFW_VISIBLE, spec.visible ? GLFW_TRUE : GLFW_FALSE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  p.window = glfwCreateWindow(spec.width, spec.height, spec.title.c_str(), nullptr, nullptr);
  if (!p.window) {
    if (error) *error = "cannot create an OpenGL 3.0 window: " + glfw_error();
    glfwTerminate();
    return false;
  }
  glfwMakeContextCurrent(p.window);
  glfwSwapInterval(1);
  p.scale = ui_scale(p.window, spec.scale);
  p.input = spec.input;
  return init_imgui(p, spec, error);
}

bool init_imgui(Platform& p, const WindowSpec& spec, std::string* error) {
  if (!p.window) p.scale = ui_scale(nullptr, spec.scale);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed; nothing worth a file in the working directory
  p.font_file = load_ui_font(std::round(15.0f * p.scale));
  apply_style(p.scale);
  if (p.input && p.window) ImGui_ImplGlfw_InitForOpenGL(p.window, true);
  if (!ImGui_ImplOpenGL3_Init(kGlslVersion)) {
    if (error) *error = "the OpenGL driver cannot run ImGui's renderer (GLSL 1.30 is needed)";
    close_platform(p);
    return false;
  }
  return true;
}

void close_platform(Platform& p) {
  if (ImGui::GetCurrentContext()) {
    ImGui_ImplOpenGL3_Shutdown();
    if (p.input && p.window) ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
  if (p.egl_library) {
    close_headless_platform(p);
    return;
  }
  if (p.window) glfwDestroyWindow(p.window);
  p.window = nullptr;
  glfwTerminate();
}

}  // namespace fusionscope::ui
