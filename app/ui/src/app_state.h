// Everything the app shows and remembers between frames, in one place: the open session, the
// state of each view, popups. Passed explicitly to every panel function; there are no globals.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "area_summary.h"
#include "capture_dialog.h"
#include "file_browser.h"
#include "find.h"
#include "fusionscope/analysis/compare.h"
#include "fusionscope/analysis/stats.h"
#include "gpu_info.h"
#include "lab_state.h"
#include "recent_files.h"
#include "session.h"
#include "session_loader.h"
#include "settings.h"
#include "theme.h"
#include "timeline.h"

namespace fusionscope::ui {

struct RunsPanelState {
  std::vector<int64_t> selected;  // run ids shown on the timeline, in table order
  int64_t current = -1;           // the last one clicked
};

// A kernel to select and bring into view once its run is on the timeline.
struct FocusRequest {
  bool pending = false;
  int64_t run = -1;
  uint32_t kernel = 0;
};

struct TimelineViewState {
  TimelineState timeline;
  FocusRequest focus;
  analysis::Alignment alignment = analysis::Alignment::kRunStart;
  std::vector<int64_t> shown;  // the runs drawn last frame; a change refits the view
  AreaSummary area_summary;    // of timeline.area, as of area_generation
  uint64_t area_generation = ~uint64_t{0};
  std::string area_key;
  ColorMode area_mode = ColorMode::kByOp;
};

struct StatsViewState {
  int64_t run = -1;
  int64_t followed = -1;       // the runs table's current run when `run` last followed it
  bool timed_only = true;      // leave out warm-up iterations when the run tells them apart
  bool filter_by_find = true;  // only the kernels and ops Find's query matches
  int64_t computed_for = -2;
  bool computed_timed_only = true;
  std::vector<analysis::KernelStat> kernels;
  std::vector<analysis::KernelStat> ops;
  std::vector<bool> mask;  // the kernels counted (timed iterations), empty: all
  // The row whose durations the histogram shows: a kernel name or an op (kNoString: none, the
  // iterations' times instead).
  bool selected_is_op = false;
  storage::StringId selected = storage::kNoString;
  // Derived once per run (and selection), not per frame: a run may have millions of kernels.
  std::vector<storage::StringId> op_of_name;  // by kernel name: the op of its first kernel
  analysis::IterationSpread spread;           // of the timed iterations' GPU time
  std::vector<size_t> timed_iterations;       // positions in the run's iterations
  std::vector<double> histogram_values;       // what the histogram shows
  storage::StringId histogram_of = storage::kNoString - 1;
  bool histogram_of_op = false;
};

struct ComparisonViewState {
  int64_t a = -1, b = -1;
  analysis::Alignment alignment = analysis::Alignment::kIteration;
  int iteration = 0;
  TimelineState timeline;
  std::optional<analysis::RunComparison> result;
  int64_t result_a = -1, result_b = -1;
  analysis::Alignment shown_alignment = analysis::Alignment::kRunStart;
  int shown_iteration = -1;
  std::vector<analysis::OpDiff> op_rows;         // fusion-aware rows of result->ops
  std::vector<double> histogram_a, histogram_b;  // time per iteration of the selected row's ops
  int histogram_of = -2;                         // the row they are of (-1: the runs')
  int selected_op = -1;  // the row whose time per iteration the histogram shows; -1: the runs'
  std::string verdict;   // "B is 1.39x faster: 3 fewer kernels, 2.9x fewer DRAM bytes"
};

struct ErrorPopupState {
  bool open_requested = false;
  bool visible = false;  // drawn in the last frame
  std::string title;
  std::string message;
};

struct AppState {
  Theme theme;
  std::string font_file;  // "" = ImGui's built-in font
  Settings settings;      // theme and scale, remembered (settings.h)
  float rescale_to = 0;   // a UI scale asked for in View; the window applies it between frames
  std::unique_ptr<Session> session;
  // A session (or a trace import) loading on a worker; `session` stays usable meanwhile.
  std::unique_ptr<SessionLoader> loading;
  bool loading_sample = false;
  std::string loading_done_status;   // the status line once it has opened
  std::vector<std::string> dropped;  // files dropped on the window, handled on the next frame
  GpuStatus gpu;
  RecentFiles recent;
  FileBrowserState file_browser;
  ErrorPopupState error;
  bool show_keys = false;

  RunsPanelState runs;
  TimelineViewState timeline;
  StatsViewState stats;
  ComparisonViewState comparison;
  LabPanelState lab;                   // the live lab (lab_panel.cpp)
  SweepViewState sweep;                // sweep charts (sweep_chart.cpp)
  SessionEditState edit;               // new, save as, notes, rename, delete (session_menu.cpp)
  CaptureDialogState capture_program;  // File > Capture a program... (capture_dialog.cpp)
  UiProbe probe;                       // state for tests that drive the window (ui_probe.cpp)
  FindState find;               // the timeline's Find bar (find.h); the statistics filter by it too
  bool find_requested = false;  // Ctrl+F: open the Find bar

  std::string view = "timeline";  // the id of the view in front (view_registry.h)
  bool view_requested = false;    // select `view`'s tab on the next frame
  std::string solo;               // a view drawn alone, filling the window; "" = the whole app

  std::string status;                 // last action's message, shown in the status bar
  std::string pending_screenshot;     // the window goes to this PNG once the frames below are drawn
  int screenshot_wait_frames = 0;     // frames left for the file browser to leave the picture
  bool screenshot_view_only = false;  // crop pending_screenshot to the current view's panel
  float view_rect[4] = {0, 0, 0, 0};  // the current view's panel: x, y, width, height (points)
  bool open_requested = false;        // Ctrl+O: show the file browser
  bool quit = false;                  // Ctrl+Q or File > Quit
};

}  // namespace fusionscope::ui
