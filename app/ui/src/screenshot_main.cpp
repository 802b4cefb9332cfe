#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>

#include <GL/gl.h>
#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include "app.h"
#include "fusionscope/storage/output_file.h"
#include "fusionscope/storage/printable.h"
#include "fusionscope/storage/session_store.h"
#include "gl_capture.h"
#include "lab_demo.h"
#include "platform.h"
#include "sample_locator.h"
#include "session_edit.h"
#include "ui/gui_main.h"
#include "ui_probe.h"
#include "view_registry.h"
#include "views.h"

namespace fusionscope::ui {

std::vector<std::string> screenshot_views() {
  std::vector<std::string> ids;
  for (const ViewInfo& v : views()) ids.emplace_back(v.id);
  return ids;
}

std::string screenshot_views_help() {
  std::string text = "One view alone (default: the whole window):";
  for (const ViewInfo& v : views()) text += std::string("\n  ") + v.id + ": " + v.description;
  return text;
}

namespace {

// Points the views at the runs named on the command line.
void select_runs(AppState& app, const std::vector<int64_t>& ids) {
  if (ids.empty()) return;
  app.runs.selected = ids;
  app.runs.current = ids.front();
  app.stats.run = ids.front();
  app.comparison.a = ids.front();
  if (ids.size() > 1) app.comparison.b = ids[1];
}

// Asks the timeline to select the first timed kernel of its first run whose short name
// contains `text`.
bool select_kernel(AppState& app, const std::string& text) {
  if (app.runs.selected.empty()) return false;
  const LoadedRun* run = app.session->find_run(app.runs.selected.front());
  if (!run) return false;
  const std::vector<bool> timed = analysis::timed_kernel_mask(run->data);
  int64_t best_start = 0;
  bool found = false;
  for (uint32_t i = 0; i < run->data.kernels.size(); ++i) {
    const storage::KernelRecord& k = run->data.kernels[i];
    if ((!timed.empty() && !timed[i]) ||
        run->names.short_name(k.name).find(text) == std::string::npos)
      continue;
    if (!found || k.start_ns < best_start) {
      app.timeline.focus = {true, run->data.info.id, i};
      best_start = k.start_ns;
      found = true;
    }
  }
  return found;
}

// --area FROM:TO (microseconds from the ruler's 0) as the timeline's area selection.
bool select_area(AppState& app, const std::string& text) {
  double from = 0, to = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%lf:%lf%n", &from, &to, &consumed) != 2 ||
      consumed != static_cast<int>(text.size()) || !(to > from))
    return false;
  TimelineState& t = app.timeline.timeline;
  const double zero = time_zero(t, shown_timeline_runs(app));
  t.has_range = true;
  t.range_a = zero + from * 1e3;
  t.range_b = zero + to * 1e3;
  t.area.all_rows = true;
  return true;
}

void render_frame(AppState& app, const OffscreenTarget& target, int width, int height) {
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
  io.DisplayFramebufferScale = ImVec2(1, 1);
  io.DeltaTime = 1.0f / 60.0f;
  io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);  // no hover effects in a screenshot
  ImGui_ImplOpenGL3_NewFrame();
  ImGui::NewFrame();
  draw_app(app);
  ImGui::Render();
  target.bind();
  glViewport(0, 0, width, height);
  const ImVec4 bg = clear_colour(app.theme.light);
  glClearColor(bg.x, bg.y, bg.z, bg.w);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void remove_if_empty(const std::string& path) {
  try {
    if (!storage::SessionStore::open(path).runs().empty()) return;
  } catch (const storage::StoreError&) {
    return;  // not ours to judge: leave it
  }
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(path + suffix, ec);
}

int screenshot_session(const ScreenshotOptions& o, std::string path,
                       const storage::OutputRules& out_rules) {
  const bool lab_run = !o.lab_preset.empty();
  if (path.empty()) {
    path = find_sample_session().string();
    if (path.empty()) {
      std::fprintf(
          stderr,
          "fusionscope screenshot: no session given and the sample session was not found\n");
      return 1;
    }
  }

  // The session first: a bad file or run name is an error even without a display.
  std::unique_ptr<Session> session;
  std::vector<int64_t> runs;
  try {
    session = open_session(path);
    session->is_sample = same_file(path, find_sample_session());
    runs = resolve_runs(*session, o.runs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusionscope screenshot: %s\n", e.what());
    return 1;
  }
  if (std::string why; lab_run && !session_writable(*session, &why)) {
    std::fprintf(stderr, "fusionscope screenshot: --lab: %s\n", why.c_str());
    return 1;
  }

  Platform p;
  std::string error;
  WindowSpec spec;
  spec.width = 64;  // the image is rendered offscreen at its own size
  spec.height = 64;
  spec.visible = false;
  spec.input = false;
  spec.scale = o.scale;
  // Without an X display (a GPU server), EGL gives a context of its own.
  const char* display = std::getenv("DISPLAY");
  const char* render = std::getenv("FUSIONSCOPE_RENDER");
  const bool egl = (render && std::string(render) == "egl") || !display || !*display;
  if (!(egl ? open_headless_platform(p, spec, &error) : open_platform(p, spec, &error))) {
    std::fprintf(stderr, "fusionscope screenshot: %s\n", error.c_str());
    return 1;
  }
  int code = 0;
  {
    OffscreenTarget target;
    AppState app;
    app.theme = make_theme(p.scale, o.light);
    apply_style(p.scale, o.light);
    app.font_file = p.font_file;
    app.gpu = query_gpus();
    app.solo = o.view;
    init_ui_probe(app);  // $FUSIONSCOPE_UI_STATE: what was drawn, for tests
    app.session = std::move(session);
    choose_default_runs(app);
    select_runs(app, runs);
    if (!o.select.empty() && !select_kernel(app, o.select)) {
      std::fprintf(stderr, "fusionscope screenshot: no kernel named like \"%s\" in the first run\n",
                   o.select.c_str());
      code = 1;
    }
    if (!o.find.empty()) {
      app.find.open = true;
      std::snprintf(app.find.text, sizeof app.find.text, "%s", o.find.c_str());
    }
    if (!o.area.empty() && !select_area(app, o.area)) {
      std::fprintf(stderr,
                   "fusionscope screenshot: --area must be FROM:TO in microseconds, FROM < TO "
                   "(got \"%s\")\n",
                   o.area.c_str());
      code = 2;
    }
    if (code == 0 && !target.create(o.width, o.height, &error)) {
      std::fprintf(stderr, "fusionscope screenshot: %s\n", error.c_str());
      code = 1;
    }
    if (code == 0) {
      if (const ViewInfo* v = find_view(o.view); v && v->tab) app.view = v->id;
      if (const ViewInfo* v = find_view(o.tab); v && v->tab) show_view(app, v->id);
      auto frame = [&] { render_frame(app, target, o.width, o.height); };
      auto capture = [&](const std::string& png) {
        const Image image = read_pixels(0, 0, o.width, o.height, o.width, o.height);
        // Beside the target first, renamed over it once whole: a full disk leaves no half PNG.
        try {
          storage::OutputFile file(png, out_rules);
          if (write_png(file.temp_path().string(), image, &error)) {
            file.commit();
            return true;
          }
          error = file.explain(error);  // the picture's name, not the temporary file's
        } catch (const storage::OutputError& e) {
          error = e.what();
        }
        std::fprintf(stderr, "fusionscope screenshot: %s\n", storage::printable(error).c_str());
        return false;
      };
      if (lab_run) {
        if (!apply_lab_options(app, o, &error)) {
          std::fprintf(stderr, "fusionscope screenshot: %s\n", error.c_str());
          code = 2;
        } else {
          code = run_lab_frames(app, o, frame, capture);
        }
      } else {
        for (int i = 0; i < std::max(o.frames, 2); ++i) frame();
        if (app.error.visible) {
          // An error popup is not the view that was asked for.
          std::fprintf(stderr, "fusionscope screenshot: %s: %s\n", app.error.title.c_str(),
                       app.error.message.c_str());
          code = 1;
        } else if (!capture(o.out_path)) {
          code = 1;
        }
      }
      target.unbind();
    }
  }
  close_platform(p);
  return code;
}

}  // namespace

int run_screenshot(const ScreenshotOptions& o) {
  if (!o.view.empty() && !find_view(o.view)) {
    std::fprintf(stderr, "fusionscope screenshot: unknown view \"%s\" (%s)\n", o.view.c_str(),
                 view_ids_text().c_str());
    return 2;
  }
  if (o.width < 64 || o.height < 64 || o.width > 8192 || o.height > 8192) {
    std::fprintf(stderr, "fusionscope screenshot: size %dx%d is outside 64x64 to 8192x8192\n",
                 o.width, o.height);
    return 2;
  }
  const bool lab_run = !o.lab_preset.empty();
  if (lab_run && o.session_path.empty()) {
    std::fprintf(stderr,
                 "fusionscope screenshot: --lab needs a session file to write the runs into "
                 "(it is created when missing)\n");
    return 2;
  }
  // The pictures are checked before anything runs: never the session, never an input, never
  // one picture over the other, an existing file only with --force.
  storage::OutputRules out_rules;
  out_rules.force = o.force;
  out_rules.inputs = {o.session_path, find_sample_session()};
  try {
    storage::check_output(o.out_path, out_rules);
    if (!o.lab_during.empty()) {
      storage::OutputRules during = out_rules;
      during.others = {o.out_path};
      storage::check_output(o.lab_during, during);
    }
  } catch (const storage::OutputError& e) {
    std::fprintf(stderr, "fusionscope screenshot: %s\n", storage::printable(e.what()).c_str());
    return e.kind() == storage::OutputError::Kind::kArguments ? 2 : 1;
  }

  std::string path = o.session_path;
  // A session --lab creates is removed again if the job stores no run in it (no GPU, say).
  bool created = false;
  if (lab_run && !std::filesystem::exists(std::filesystem::symlink_status(path))) {
    try {
      storage::SessionInfo info;
      info.name = std::filesystem::path(path).stem().string();
      storage::SessionStore::create(path, info);
      created = true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fusionscope screenshot: %s\n", e.what());
      return 1;
    }
  }
  const int code = screenshot_session(o, path, out_rules);
  if (created) remove_if_empty(path);
  return code;
}

}  // namespace fusionscope::ui
