#include "ui_probe.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <imgui.h>

#include "session_edit.h"
#include "views.h"

namespace fusionscope::ui {

namespace {

// One line per value: newlines inside values would break the format.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

// "RUN_ID KIND INDEX" of a timeline item (the run by its id), or "".
std::string item_text(const AppState& app, const ItemRef& item) {
  if (!item.valid() || item.run >= static_cast<int>(app.timeline.shown.size())) return {};
  return std::to_string(app.timeline.shown[static_cast<size_t>(item.run)]) + " " +
         item_type(item.kind).name + " " + std::to_string(item.index);
}

template <class Line>
void timeline_lines(const AppState& app, Line& line) {
  const TimelineState& t = app.timeline.timeline;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.0f %.0f", t.view_begin, t.view_end);
  line("timeline.view", buf);
  line("timeline.selected", item_text(app, t.selected));
  // The timed iterations on the axis, and each shown run's origin (its time drawn at 0).
  const std::vector<TimelineRun> runs = shown_timeline_runs(app);
  double b = 0, e = 0;
  if (iterations_extent(runs, b, e)) {
    std::snprintf(buf, sizeof buf, "%.0f %.0f", b, e);
    line("timeline.iterations", buf);
  } else {
    line("timeline.iterations", "");
  }
  std::string origins;
  for (const TimelineRun& r : runs)
    origins += (origins.empty() ? "" : " ") + std::to_string(r.origin_ns);
  line("timeline.origins", origins);
  std::snprintf(buf, sizeof buf, "%.0f", time_zero(t, runs));
  line("timeline.zero", buf);
  // Find: the query, and per kind "count total_ns".
  const FindState& f = app.find;
  line("find.query", f.open ? f.searched : "");  // the text the counts below are of
  line("find.error", f.error);
  for (ItemKind k : item_kinds()) {
    const KindTotals& totals = f.results.of(k);
    line(std::string("find.") + item_type(k).name,
         std::to_string(totals.count) + " " + std::to_string(totals.total_ns));
  }
  line("find.current", f.current < 0 ? "" : std::to_string(f.current));
  // The area selection: its range on the axis, the rows it crosses, and its kernels' totals.
  if (t.has_range) {
    std::snprintf(buf, sizeof buf, "%.0f %.0f", std::min(t.range_a, t.range_b),
                  std::max(t.range_a, t.range_b));
    line("area.range", buf);
    line("area.rows", std::to_string(t.area.rows.size()));
    const AreaGroup k = app.timeline.area_summary.total(AreaTable::kKernels);
    line("area.kernels", std::to_string(k.count) + " " + std::to_string(k.total_ns));
  } else {
    line("area.range", "");
  }
  // The rows on screen: their labels, and rectangles as items timeline.row.N.
  std::string labels;
  for (const TimelineState::DrawnRow& r : t.drawn_rows)
    labels += (labels.empty() ? "" : "|") + r.label;
  line("timeline.rows", labels);
  line("timeline.hovered", item_text(app, t.hovered));
}

// What the app sees of the mouse and keyboard, so a test can wait for its input to arrive
// instead of sleeping.
std::string input_text() {
  if (!ImGui::GetCurrentContext()) return {};
  const ImGuiIO& io = ImGui::GetIO();
  std::string keys;
  if (io.KeyCtrl) keys += " ctrl";
  if (io.KeyShift) keys += " shift";
  if (io.KeyAlt) keys += " alt";
  for (int k = 'A'; k <= 'Z'; ++k)
    if (io.KeysDown[k]) keys += std::string(" ") + static_cast<char>(k);
  for (int k = '0'; k <= '9'; ++k)
    if (io.KeysDown[k]) keys += std::string(" ") + static_cast<char>(k);
  // Buttons by their X11 numbers (1 left, 2 middle, 3 right), as xdotool names them.
  const int x11_button[3] = {1, 3, 2};
  for (int b = 0; b < 3; ++b)
    if (io.MouseDown[b]) keys += " mouse" + std::to_string(x11_button[b]);
  if (io.WantTextInput) keys += " typing";  // a text field has the keyboard
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f %.0f", io.MousePos.x, io.MousePos.y);
  return std::string(buf) + keys;
}

}  // namespace

void init_ui_probe(AppState& app) {
  const char* path = std::getenv("FUSIONSCOPE_UI_STATE");
  app.probe.path = path ? path : "";
}

void probe_item(AppState& app, const std::string& name) {
  // Only what is on screen: a row scrolled out of its table cannot be clicked.
  if (app.probe.path.empty() || !ImGui::IsItemVisible()) return;
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  if (b.x <= a.x || b.y <= a.y) return;  // not laid out yet (a tab bar's first frame)
  app.probe.items.push_back({name, {a.x, a.y, b.x - a.x, b.y - a.y}});
}

void probe_rect(AppState& app, const std::string& name, float x, float y, float w, float h) {
  if (app.probe.path.empty() || w <= 0 || h <= 0) return;
  app.probe.items.push_back({name, {x, y, w, h}});
}

std::string ui_probe_text(const AppState& app) {
  std::string t;
  auto line = [&](const std::string& key, const std::string& value) {
    t += key + "=" + one_line(value) + "\n";
  };
  if (app.session) {
    line("session", app.session->path.string());
    line("session_writable", session_writable(*app.session) ? "1" : "0");
    line("runs", std::to_string(app.session->runs.size()));
  } else {
    line("session", "");
  }
  std::string selected;
  for (int64_t id : app.runs.selected)
    selected += (selected.empty() ? "" : ",") + std::to_string(id);
  line("selected", selected);
  line("comparison", std::to_string(app.comparison.a) + "," + std::to_string(app.comparison.b));
  line("comparison.verdict", app.comparison.verdict);
  line("view", app.view);
  line("stats.run", std::to_string(app.stats.run));
  line("solo", app.solo);
  timeline_lines(app, line);
  if (app.lab.controller) {
    const lab::LabStatus s = app.lab.controller->status();
    const char* states[] = {"idle", "running", "cancelling", "done"};
    line("lab.state", states[static_cast<int>(s.state)]);
    line("lab.progress", s.describe_progress());
    line("lab.summary", s.state == lab::LabStatus::State::kDone ? s.summary() : "");
  }
  line("lab.refusals", lab::messages(app.lab.check.refusals, " | "));
  std::string codes;
  for (const lab::Refusal& r : app.lab.check.refusals)
    codes += (codes.empty() ? "" : ",") + std::string(lab::to_string(r.code));
  line("lab.refusal_codes", codes);
  line("lab.run_enabled", app.lab.run_enabled ? "1" : "0");
  line("lab.start_error", app.lab.start_error);
  line("status", app.status);
  line("popup", app.probe.open_popup);
  line("file_browser.name", app.file_browser.visible ? app.file_browser.file_name : "");
  line("last_error", app.error.title.empty() ? "" : app.error.title + ": " + app.error.message);
  line("input", input_text());
  const std::vector<TimelineState::DrawnRow>& drawn = app.timeline.timeline.drawn_rows;
  for (size_t i = 0; i < drawn.size(); ++i) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "item timeline.row.%zu %.0f %.0f %.0f %.0f\n", i, drawn[i].x,
                  drawn[i].y, drawn[i].w, drawn[i].h);
    t += buf;
  }
  for (const auto& [name, r] : app.probe.items) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "item %s %.0f %.0f %.0f %.0f\n", name.c_str(), r[0], r[1], r[2],
                  r[3]);
    t += buf;
  }
  return t;
}

void write_ui_probe(AppState& app) {
  if (app.probe.path.empty()) return;
  std::string text = ui_probe_text(app);
  app.probe.items.clear();
  app.probe.open_popup.clear();
  if (text == app.probe.last_written) return;
  // Written beside and renamed over, so a reader never sees half a file.
  const std::string tmp = app.probe.path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) return;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, app.probe.path, ec);
  if (!ec) app.probe.last_written = std::move(text);
}

}  // namespace fusionscope::ui
