// The GUI entry points: the interactive app, and headless screenshots of it.
#pragma once

#include <string>
#include <vector>

namespace fusionscope::ui {

struct GuiOptions {
  std::string session_path;  // empty: the built-in sample session when there is no GPU
};

// Opens the window and runs until it closes; returns the process exit code.
int run_gui(const GuiOptions& options);

struct ScreenshotOptions {
  std::string session_path;  // empty: the built-in sample session
  std::string out_path;      // the PNG to write
  bool force = false;        // an existing PNG (never a session or an input) may be replaced
  int width = 1600;          // size of the PNG
  int height = 1000;
  // "" = the whole window; a view's id (screenshot_views()) = that view alone, filling the image.
  std::string view;
  std::string tab;                // the view in front when the whole window is drawn (a view's id)
  std::vector<std::string> runs;  // run ids or names: the timeline's runs, comparison's A and B
  // Selects the first timed kernel of the timeline's first run whose short name contains this,
  // and zooms to it: the details panel and the launch's flow line show in the image.
  std::string select;
  // Opens the timeline's Find bar with this query (its matches highlighted and counted).
  std::string find;
  // An area selection across every row of the timeline: FROM:TO in microseconds from the
  // ruler's 0 (the first timed iteration), e.g. 0:250.
  std::string area;
  float scale = 1.0f;  // UI scale (fonts and spacing)
  bool light = false;  // the light theme
  int frames = 5;      // frames rendered before capture (tables settle their layout)

  // The live lab, headless (docs/lab.md): runs `lab_preset` in `lab_variants` (or a sweep) into
  // session_path (created when missing; the sample is refused) while rendering the app, writes
  // `lab_during` (when given) half-way through the job and `out_path` once it has ended.
  std::string lab_preset;
  std::string lab_variants = "all";
  std::string lab_sweep;  // SIZE:FROM:TO[:POINTS], e.g. hidden:256:8192 (doubling)
  int lab_warmup = 5;
  int lab_iterations = 20;
  bool lab_verify = true;
  std::string lab_during;
};

// Renders the app offscreen under the current X display (Xvfb is fine), or through EGL when
// there is no display ($DISPLAY unset, or FUSIONSCOPE_RENDER=egl), and writes the PNG.
// Returns the process exit code; errors are printed for a person.
int run_screenshot(const ScreenshotOptions& options);

// The views `--view` accepts, by their ids (the app's view registry), and each one's line of
// description.
std::vector<std::string> screenshot_views();
std::string screenshot_views_help();

}  // namespace fusionscope::ui
