#include "ui/gui_main.h"

#include <cmath>
#include <cstdio>

#include <GL/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include "app.h"
#include "fonts.h"
#include "gl_capture.h"
#include "platform.h"
#include "ui_probe.h"

namespace fusionscope::ui {

namespace {

void init_app(AppState& app, const Platform& p) {
  app.theme = make_theme(p.scale, app.settings.light);
  apply_style(p.scale, app.settings.light);
  app.font_file = p.font_file;
  app.gpu = query_gpus();
  app.recent = load_recent_files(default_recent_files_path());
  init_ui_probe(app);  // $FUSIONSCOPE_UI_STATE, for tests that drive the window
}

// Writes the frame just rendered (still in the back buffer) to app.pending_screenshot: the whole
// window, or the current view's panel when screenshot_view_only is set.
void save_window_screenshot(AppState& app, GLFWwindow* window) {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window, &w, &h);
  glReadBuffer(GL_BACK);
  const ImVec2 scale = ImGui::GetIO().DisplayFramebufferScale;  // points to pixels (high DPI)
  const bool crop = app.screenshot_view_only && app.view_rect[2] > 0 && app.view_rect[3] > 0;
  const Image image = crop ? read_pixels(static_cast<int>(app.view_rect[0] * scale.x),
                                         static_cast<int>(app.view_rect[1] * scale.y),
                                         static_cast<int>(app.view_rect[2] * scale.x),
                                         static_cast<int>(app.view_rect[3] * scale.y), w, h)
                           : read_pixels(0, 0, w, h, w, h);
  std::string error;
  if (write_png(app.pending_screenshot, image, &error))
    app.status = (crop ? "Saved the view to " : "Saved the window to ") + app.pending_screenshot;
  else
    show_error(app, "Cannot save the screenshot", error);
  app.pending_screenshot.clear();
  app.screenshot_view_only = false;
}

// Whether the user is doing something that needs frames at full rate.
bool busy() {
  const ImGuiIO& io = ImGui::GetIO();
  for (bool down : io.MouseDown)
    if (down) return true;
  for (bool down : io.KeysDown)
    if (down) return true;
  return io.MouseWheel != 0.0f;
}

// Ctrl+O, Ctrl+F and Ctrl+Q from the key callback: ImGui 1.86 samples key state once a frame and
// would miss a press and release that both happen between two frames. Everything else goes on to
// ImGui's own handler.
void on_key(GLFWwindow* window, int key, int scancode, int action, int mods) {
  ImGui_ImplGlfw_KeyCallback(window, key, scancode, action, mods);
  auto* app = static_cast<AppState*>(glfwGetWindowUserPointer(window));
  if (!app || action != GLFW_PRESS || (mods & GLFW_MOD_CONTROL) == 0) return;
  if (key == GLFW_KEY_Q) app->quit = true;
  if (key == GLFW_KEY_O) app->open_requested = true;
  if (key == GLFW_KEY_F) app->find_requested = true;
}

// A new UI scale: the font rebuilt at its size, the style and the theme's sizes scaled.
void rescale(AppState& app, float scale) {
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui::GetIO().Fonts->Clear();
  app.font_file = load_ui_font(std::round(15.0f * scale));
  ImGui_ImplOpenGL3_CreateFontsTexture();
  apply_style(scale, app.settings.light);
  app.theme = make_theme(scale, app.settings.light);
}

// Files dropped on the window: opened (sessions) or imported (traces) on the next frame.
void on_drop(GLFWwindow* window, int count, const char** paths) {
  auto* app = static_cast<AppState*>(glfwGetWindowUserPointer(window));
  if (!app) return;
  for (int i = 0; i < count; ++i) app->dropped.emplace_back(paths[i]);
}

}  // namespace

int run_gui(const GuiOptions& options) {
  Platform p;
  std::string error;
  // The theme and scale chosen last time.
  const Settings settings = load_settings(default_settings_path());
  WindowSpec spec;
  spec.scale = settings.scale;
  if (!open_platform(p, spec, &error)) {
    std::fprintf(stderr, "fusionscope: %s\n", error.c_str());
    return 1;
  }
  {
    int w = 0, h = 0;  // the window was created at 1440x900 before the scale was known
    glfwGetWindowSize(p.window, &w, &h);
    if (p.scale > 1.01f && !glfwGetWindowAttrib(p.window, GLFW_MAXIMIZED))
      glfwSetWindowSize(p.window, static_cast<int>(1440 * p.scale),
                        static_cast<int>(900 * p.scale));
  }
  AppState app;
  app.settings = settings;
  init_app(app, p);
  glfwSetWindowUserPointer(p.window, &app);
  glfwSetKeyCallback(p.window, on_key);
  glfwSetDropCallback(p.window, on_drop);
  // Loaded on a worker: the first frame comes at once, the session when it has loaded.
  if (!options.session_path.empty())
    begin_open_session(app, options.session_path);
  else if (!app.gpu.available())
    begin_open_sample_session(app);

  while (!glfwWindowShouldClose(p.window) && !app.quit) {
    // Idle: wait for input (at most 20 frames a second); busy: poll and draw every frame.
    if (busy())
      glfwPollEvents();
    else
      glfwWaitEventsTimeout(0.05);
    if (app.rescale_to > 0) {
      rescale(app, app.rescale_to);
      app.rescale_to = 0;
    }
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    draw_app(app);
    ImGui::Render();
    int w = 0, h = 0;
    glfwGetFramebufferSize(p.window, &w, &h);
    glViewport(0, 0, w, h);
    const ImVec4 bg = clear_colour(app.theme.light);
    glClearColor(bg.x, bg.y, bg.z, bg.w);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (!app.pending_screenshot.empty() && app.screenshot_wait_frames-- <= 0)
      save_window_screenshot(app, p.window);
    glfwSwapBuffers(p.window);
  }
  glfwSetKeyCallback(p.window, ImGui_ImplGlfw_KeyCallback);
  glfwSetDropCallback(p.window, nullptr);
  glfwSetWindowUserPointer(p.window, nullptr);
  close_platform(p);
  return 0;
}

}  // namespace fusionscope::ui
