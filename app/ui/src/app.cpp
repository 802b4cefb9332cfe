#include "app.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <stdexcept>

#include "fusionscope/analysis/configuration_key.h"
#include "fusionscope/analysis/format.h"
#include "lab_panel.h"
#include "sample_locator.h"
#include "session_edit.h"
#include "session_menu.h"
#include "sweep_chart.h"
#include "trace_import.h"
#include "ui_probe.h"
#include "view_registry.h"
#include "views.h"

namespace fusionscope::ui {

namespace fs = std::filesystem;

void show_error(AppState& app, std::string title, std::string message) {
  app.error.title = std::move(title);
  app.error.message = std::move(message);
  app.error.open_requested = true;
}

namespace {

// Makes `session` the open one: the views start over on it.
void install_session(AppState& app, std::unique_ptr<Session> session, const fs::path& path,
                     bool is_sample) {
  // The built-in sample is never written, however it was opened.
  session->is_sample = is_sample || same_file(path, find_sample_session());
  app.session = std::move(session);
  app.runs = {};
  app.timeline = {};
  app.stats = {};
  app.comparison = {};
  app.find.key.clear();
  choose_default_runs(app);
  if (!app.session->is_sample) remember(app.recent, fs::absolute(path).string());
  app.status = "Opened " + path.string();
  app.session->integrity_check = start_integrity_check(path);
}

}  // namespace

// Says so once the background check of the open session finds damage.
void poll_integrity(AppState& app) {
  if (!app.session || !app.session->integrity_check.valid()) return;
  if (app.session->integrity_check.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    return;
  app.session->damage = app.session->integrity_check.get();
  if (app.session->damage.empty()) return;
  std::string message = app.session->path.string() +
                        " is damaged: what fails its checks is not shown, and nothing is written "
                        "into it. Found:";
  for (size_t i = 0; i < app.session->damage.size() && i < 5; ++i)
    message += "\n  " + app.session->damage[i];
  show_error(app, "The session file is damaged", message);
  app.status = "The session file is damaged";
}

bool open_session_file(AppState& app, const fs::path& path, bool is_sample) {
  std::unique_ptr<Session> session;
  try {
    session = open_session(path);
  } catch (const storage::StoreError& e) {
    show_error(app, "Cannot open session", e.what());
    return false;
  }
  install_session(app, std::move(session), path, is_sample);
  return true;
}

void begin_open_session(AppState& app, const fs::path& path, bool is_sample,
                        std::string done_status) {
  app.loading = SessionLoader::open(path);
  app.loading_sample = is_sample;
  app.loading_done_status = std::move(done_status);
  app.status = "Opening " + path.string();
}

void begin_open_sample_session(AppState& app) {
  const fs::path sample = find_sample_session();
  if (sample.empty()) {
    open_sample_session(app);  // says where it was looked for
    return;
  }
  begin_open_session(app, sample, true);
}

void open_dropped_files(AppState& app, const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    const fs::path path(p);
    if (path.extension() == ".fsdb")
      begin_open_session(app, path);
    else if (is_trace_file(path))
      start_trace_import(app, path);
    else
      show_error(app, "Cannot open " + path.filename().string(),
                 p + " is neither a session (.fsdb) nor a PyTorch profiler trace (.json, "
                     ".json.gz).");
  }
}

// Takes a finished load: its session replaces the open one, or an error says why.
bool poll_loading(AppState& app) {
  if (!app.loading) return false;
  if (!app.loading->done()) return true;
  std::string error;
  std::unique_ptr<Session> session = app.loading->take(&error);
  const fs::path path = app.loading->path();
  const bool cancelled = app.loading->cancelled();
  const bool sample = app.loading_sample;
  app.loading.reset();
  if (session) {
    install_session(app, std::move(session), path, sample);
    if (!app.loading_done_status.empty()) app.status = app.loading_done_status;
  } else if (cancelled)
    app.status = "Cancelled opening " + path.string();
  else
    show_error(app, "Cannot open session", error);
  return false;
}

namespace {

// The load in progress: what it is doing, how far it is, and Cancel.
void draw_loading(AppState& app) {
  if (!app.loading) return;
  const LoadProgress p = app.loading->progress();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float em = ImGui::GetFontSize();
  ImGui::SetNextWindowPos(
      ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y - em * 3),
      ImGuiCond_Always, ImVec2(0.5f, 1.0f));
  ImGui::SetNextWindowSize(ImVec2(em * 34, 0));
  ImGui::Begin("##loading", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_AlwaysAutoResize);
  ImGui::Text("Opening %s", app.loading->path().filename().c_str());
  ImGui::TextDisabled("%s", p.stage.c_str());
  ImGui::ProgressBar(static_cast<float>(p.fraction), ImVec2(-em * 6, 0));
  ImGui::SameLine();
  if (ImGui::Button("Cancel", ImVec2(-1, 0))) app.loading->cancel();
  probe_item(app, "loading.cancel");
  ImGui::End();
}

}  // namespace

void choose_default_runs(AppState& app) {
  const Session& session = *app.session;
  for (const auto& run : session.runs) {
    if (run->summary.kernels == 0) continue;
    app.runs.selected = {run->data.info.id};
    app.runs.current = run->data.info.id;
    break;
  }
  app.stats.run = app.runs.current;
  // Comparison: the eager run with the most GPU time per iteration that has other variants,
  // where fusion has the most to win, against its fastest variant.
  double best = -1;
  for (const auto& a : session.runs) {
    if (a->summary.kernels == 0 || a->data.info.variant != "eager") continue;
    const LoadedRun* fastest = nullptr;
    for (const auto& b : session.runs) {
      if (b.get() == a.get() || b->summary.kernels == 0) continue;
      if (analysis::configuration_key(b->data.info) != analysis::configuration_key(a->data.info))
        continue;
      if (!fastest || b->summary.kernel_time_per_iteration_ns() <
                          fastest->summary.kernel_time_per_iteration_ns())
        fastest = b.get();
    }
    if (fastest && a->summary.kernel_time_per_iteration_ns() > best) {
      best = a->summary.kernel_time_per_iteration_ns();
      app.comparison.a = a->data.info.id;
      app.comparison.b = fastest->data.info.id;
    }
  }
  if (app.comparison.a < 0) {  // no such pair: the first two runs with kernels
    for (const auto& run : session.runs) {
      if (run->summary.kernels == 0) continue;
      if (app.comparison.a < 0)
        app.comparison.a = run->data.info.id;
      else if (app.comparison.b < 0)
        app.comparison.b = run->data.info.id;
    }
  }
}

std::vector<int64_t> resolve_runs(const Session& session, const std::vector<std::string>& names) {
  std::vector<int64_t> ids;
  for (const std::string& name : names) {
    if (name.empty()) continue;
    int64_t found = -1;
    // An id is plain digits (18 at most: beyond any id, and beyond what a number holds).
    if (!name.empty() && name.size() <= 18 &&
        std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); })) {
      const int64_t id = std::stoll(name);
      if (session.find_run(id)) found = id;
    }
    for (const auto& run : session.runs)
      if (found < 0 && run->data.info.name == name) found = run->data.info.id;
    if (found < 0) {
      std::vector<int64_t> partial;
      for (const auto& run : session.runs)
        if (run->data.info.name.find(name) != std::string::npos)
          partial.push_back(run->data.info.id);
      if (partial.size() > 1)
        throw std::invalid_argument("run \"" + name +
                                    "\" matches several runs; give its id or full name");
      if (partial.size() == 1) found = partial.front();
    }
    if (found < 0)
      throw std::invalid_argument("no run \"" + name + "\" in " + session.path.string());
    ids.push_back(found);
  }
  return ids;
}

void open_sample_session(AppState& app) {
  const fs::path sample = find_sample_session();
  if (sample.empty()) {
    std::string where;
    for (const fs::path& p : sample_session_candidates()) where += "\n  " + p.string();
    show_error(app, "No sample session",
               "The built-in sample session was not found. Looked in:" + where);
    return;
  }
  open_session_file(app, sample, true);
}

namespace {

void remember_settings(AppState& app) {
  std::string why;
  if (!save_settings(app.settings, &why)) app.status = "Settings not saved: " + why;
}

void set_theme(AppState& app, bool light) {
  app.settings.light = light;
  app.theme = make_theme(app.theme.scale, light);
  apply_style(app.theme.scale, light);
  remember_settings(app);
}

void set_ui_scale(AppState& app, float scale) {
  app.settings.scale = scale;
  app.rescale_to = scale;  // fonts are rebuilt between frames (gui_main.cpp)
  remember_settings(app);
}

void draw_menu_bar(AppState& app) {
  if (!ImGui::BeginMainMenuBar()) return;
  const bool file_open = ImGui::BeginMenu("File");
  probe_item(app, "menu.file");
  if (file_open) {
    draw_file_menu_new_item(app);
    if (ImGui::MenuItem("Open session...", "Ctrl+O"))
      open_file_browser(
          app.file_browser, FileBrowserMode::kOpen, "Open session", ".fsdb", "open",
          app.session && !app.session->is_sample ? app.session->path.parent_path() : fs::path());
    if (ImGui::MenuItem("Open the sample session")) begin_open_sample_session(app);
    const bool import_clicked =
        ImGui::MenuItem("Import PyTorch trace...", nullptr, false, !trace_import_running());
    probe_item(app, "menu.file.import");
    if (import_clicked)
      open_file_browser(app.file_browser, FileBrowserMode::kOpen,
                        "Import a PyTorch profiler trace (.json or .json.gz)", "", "import-trace");
    if (ImGui::BeginMenu("Recent", !app.recent.paths.empty())) {
      std::string chosen;
      for (const std::string& p : app.recent.paths)
        if (ImGui::MenuItem(p.c_str())) chosen = p;
      ImGui::Separator();
      if (ImGui::MenuItem("Clear the list")) clear(app.recent);
      ImGui::EndMenu();
      if (!chosen.empty()) {
        std::error_code ec;
        if (!fs::exists(chosen, ec)) {
          forget(app.recent, chosen);
          show_error(app, "Cannot open session", chosen + " no longer exists.");
        } else {
          begin_open_session(app, chosen);
        }
      }
    }
    draw_file_menu_session_items(app);
    ImGui::Separator();
    draw_capture_menu_item(app);
    ImGui::Separator();
    const bool export_clicked = ImGui::MenuItem("Export screenshot...");
    probe_item(app, "menu.file.screenshot");
    if (export_clicked)
      open_file_browser(app.file_browser, FileBrowserMode::kSave, "Export screenshot", ".png",
                        "screenshot", {}, "fusionscope.png");
    const bool view_clicked =
        ImGui::MenuItem("Export view...", nullptr, false, app.session != nullptr);
    probe_item(app, "menu.file.view");
    if (view_clicked)
      open_file_browser(app.file_browser, FileBrowserMode::kSave, "Export the current view", ".png",
                        "screenshot-view", {}, "fusionscope-view.png");
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) app.quit = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (const ViewInfo& v : views()) {
      if (!v.tab) continue;
      if (ImGui::MenuItem(v.title, nullptr, app.view == v.id)) show_view(app, v.id);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", v.description);
    }
    ImGui::Separator();
    if (ImGui::BeginMenu("Theme")) {
      if (ImGui::MenuItem("Dark", nullptr, !app.theme.light)) set_theme(app, false);
      if (ImGui::MenuItem("Light", nullptr, app.theme.light)) set_theme(app, true);
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("UI scale")) {
      for (float scale : {1.0f, 1.25f, 1.5f, 1.75f, 2.0f}) {
        char label[16];
        std::snprintf(label, sizeof label, "%.0f%%", scale * 100);
        if (ImGui::MenuItem(label, nullptr, std::abs(app.theme.scale - scale) < 0.01f))
          set_ui_scale(app, scale);
      }
      ImGui::EndMenu();
    }
    bool by_kernel = app.timeline.timeline.color_mode == ColorMode::kByKernel;
    if (ImGui::MenuItem("Colour kernels by name", nullptr, &by_kernel)) {
      const ColorMode m = by_kernel ? ColorMode::kByKernel : ColorMode::kByOp;
      app.timeline.timeline.color_mode = m;
      app.comparison.timeline.color_mode = m;
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Timeline keys")) app.show_keys = true;
    ImGui::EndMenu();
  }
  ImGui::EndMainMenuBar();
}

// Shortcuts arrive from the window's key callback (see gui_main.cpp), which sees every press even
// when a press and its release fall between two frames.
void handle_shortcuts(AppState& app) {
  if (app.open_requested) {
    open_file_browser(app.file_browser, FileBrowserMode::kOpen, "Open session", ".fsdb", "open");
    app.open_requested = false;
  }
}

void draw_views(AppState& app) {
  if (!ImGui::BeginTabBar("##views")) return;
  for (const ViewInfo& v : views()) {
    if (!v.tab) continue;
    const ImGuiTabItemFlags flags =
        app.view_requested && app.view == v.id ? ImGuiTabItemFlags_SetSelected : 0;
    const bool open = ImGui::BeginTabItem(v.title, nullptr, flags);
    probe_item(app, std::string("tab.") + v.title);
    if (!open) continue;
    if (!app.view_requested) app.view = v.id;
    ImGui::Spacing();
    // The panel below the tabs, down to the content's bottom: what "Export view" crops to.
    const ImVec2 top_left = ImGui::GetCursorScreenPos();
    const ImVec2 window = ImGui::GetWindowPos(), content_max = ImGui::GetWindowContentRegionMax();
    const ImVec2 bottom_right(window.x + content_max.x, window.y + content_max.y);
    app.view_rect[0] = top_left.x;
    app.view_rect[1] = top_left.y;
    app.view_rect[2] = bottom_right.x - top_left.x;
    app.view_rect[3] = bottom_right.y - top_left.y;
    v.draw(app);
    ImGui::EndTabItem();
  }
  app.view_requested = false;
  ImGui::EndTabBar();
}

void draw_welcome(AppState& app) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  ImGui::SetCursorPos(
      ImVec2(ImGui::GetCursorPosX() + avail.x * 0.35f, ImGui::GetCursorPosY() + avail.y * 0.35f));
  ImGui::BeginGroup();
  ImGui::TextColored(app.theme.accent, "fusionscope");
  ImGui::TextDisabled("Open a session (.fsdb) to see its runs, timelines and comparisons,");
  ImGui::TextDisabled("import a PyTorch profiler trace (.json, .json.gz), or drop either here.");
  ImGui::Spacing();
  if (ImGui::Button("Open session..."))
    open_file_browser(app.file_browser, FileBrowserMode::kOpen, "Open session", ".fsdb", "open");
  ImGui::SameLine();
  if (ImGui::Button("Import PyTorch trace..."))
    open_file_browser(app.file_browser, FileBrowserMode::kOpen,
                      "Import a PyTorch profiler trace (.json or .json.gz)", "", "import-trace");
  ImGui::SameLine();
  if (ImGui::Button("Open the sample session")) begin_open_sample_session(app);
  ImGui::SameLine();
  if (ImGui::Button("New session..."))
    open_file_browser(app.file_browser, FileBrowserMode::kSave, "New session", ".fsdb",
                      "new-session", {}, suggested_session_name());
  ImGui::EndGroup();
}

void draw_status_bar(AppState& app, float height) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  draw->AddLine(ImVec2(p.x, p.y), ImVec2(p.x + w, p.y), ImGui::GetColorU32(ImGuiCol_Separator));
  ImGui::SetCursorScreenPos(ImVec2(p.x, p.y + (height - ImGui::GetTextLineHeight()) * 0.5f));
  std::string left = app.status;
  if (left.empty() && app.session) left = app.session->path.string();
  ImGui::TextDisabled("%s", left.c_str());
  const std::string gpu = app.gpu.summary();
  const float tw = ImGui::CalcTextSize(gpu.c_str()).x;
  const float dot = ImGui::GetTextLineHeight() * 0.5f;
  ImGui::SameLine(std::max(w - tw - dot * 2.5f, 0.0f));
  const ImVec2 dp = ImGui::GetCursorScreenPos();
  draw->AddCircleFilled(
      ImVec2(dp.x + dot * 0.5f, dp.y + ImGui::GetTextLineHeight() * 0.5f), dot * 0.5f,
      ImGui::ColorConvertFloat4ToU32(app.gpu.available() ? app.theme.good : app.theme.text_dim));
  ImGui::SetCursorScreenPos(ImVec2(dp.x + dot * 1.6f, dp.y));
  ImGui::TextUnformatted(gpu.c_str());
}

void draw_popups(AppState& app) {
  fs::path chosen;
  const bool confirmed = draw_file_browser(app.file_browser, chosen);
  if (app.file_browser.visible) app.probe.open_popup = "file browser";
  if (confirmed) {
    if (app.file_browser.purpose == "open") begin_open_session(app, chosen);
    if (app.file_browser.purpose == "import-trace") start_trace_import(app, chosen);
    if (app.file_browser.purpose == "screenshot" || app.file_browser.purpose == "screenshot-view") {
      app.pending_screenshot = chosen.string();
      app.screenshot_view_only = app.file_browser.purpose == "screenshot-view";
      app.screenshot_wait_frames = 2;  // this frame still shows the popup
    }
    handle_session_file_choice(app, app.file_browser.purpose, chosen);
  }
  draw_session_popups(app);
  draw_capture_dialog(app);
  draw_trace_import(app);
  if (app.error.open_requested) {
    ImGui::OpenPopup("###error");
    app.error.open_requested = false;
  }
  const std::string title = app.error.title + "###error";
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 34, 0), ImGuiCond_Appearing);
  app.error.visible = false;
  if (ImGui::BeginPopupModal(title.c_str(), nullptr, ImGuiWindowFlags_NoSavedSettings)) {
    app.error.visible = true;
    app.probe.open_popup = "error";
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(app.error.message.c_str());
    ImGui::PopTextWrapPos();
    ImGui::Spacing();
    if (ImGui::Button("OK", ImVec2(ImGui::GetFontSize() * 7, 0)) ||
        ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)) ||
        ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
      ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  if (app.show_keys) {
    ImGui::OpenPopup("Timeline keys");
    app.show_keys = false;
  }
  if (ImGui::BeginPopupModal("Timeline keys", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    app.probe.open_popup = "keys";
    const char* rows[][2] = {
        {"Mouse wheel, W / S", "zoom in / out at the cursor"},
        {"Drag, A / D", "pan"},
        {"Ctrl or Shift + wheel", "scroll the rows"},
        {"Click", "select (a merged block zooms in)"},
        {"Double-click", "zoom to the item; on empty space, fit"},
        {"Shift-drag or right-drag", "measure a time range"},
        {"F", "fit the selection, or everything"},
        {"Esc", "clear the selection and the range"},
    };
    if (ImGui::BeginTable("##keys", 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
      for (auto& r : rows) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextColored(app.theme.accent, "%s", r[0]);
        ImGui::TableSetColumnIndex(1);
        ImGui::TextUnformatted(r[1]);
      }
      ImGui::EndTable();
    }
    if (ImGui::Button("Close")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

// One panel alone, filling the window.
void draw_solo(AppState& app) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->Pos);
  ImGui::SetNextWindowSize(vp->Size);
  ImGui::Begin("##solo", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus);
  if (const ViewInfo* view = find_view(app.solo); view && app.session) view->draw(app);
  ImGui::End();
}

}  // namespace

void draw_app(AppState& app) {
  poll_loading(app);
  poll_integrity(app);
  if (!app.dropped.empty()) {
    const std::vector<std::string> dropped = std::move(app.dropped);
    app.dropped.clear();
    open_dropped_files(app, dropped);
  }
  sync_lab(app);
  if (!app.solo.empty()) {
    draw_solo(app);
    draw_popups(app);
    write_ui_probe(app);
    return;
  }
  handle_shortcuts(app);
  draw_menu_bar(app);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("##main", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus |
                   ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const float status_h = ImGui::GetFrameHeight();
  ImGui::BeginChild("##content", ImVec2(0, -status_h - ImGui::GetStyle().ItemSpacing.y), false);
  if (app.session) {
    draw_session_header(app);
    // Up to eight runs without scrolling: rows are a text line plus the cell padding.
    const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
    const size_t rows = std::clamp<size_t>(app.session->runs.size(), 2, 8);
    draw_runs_panel(app, row_h * static_cast<float>(rows + 1) + 4);
    ImGui::Spacing();
    draw_views(app);
  } else {
    draw_welcome(app);
  }
  ImGui::EndChild();
  draw_status_bar(app, status_h);
  ImGui::End();
  draw_loading(app);
  draw_popups(app);
  write_ui_probe(app);
}

}  // namespace fusionscope::ui
