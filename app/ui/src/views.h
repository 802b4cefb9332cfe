// The panels of the main window, one function each, drawn into the current ImGui window.
#pragma once

#include "app_state.h"

namespace fusionscope::ui {

// The session's runs: name, kind, variant, dtype, iterations, status, kernels, GPU time.
// Clicking picks the runs the timeline shows (ctrl-click adds, shift-click extends).
void draw_runs_panel(AppState& app, float height);

// The runs table alone with the session's header and notes (`screenshot --view runs`).
void draw_runs_view(AppState& app);

// The session's name, GPU, run count and notes, on one line.
void draw_session_header(AppState& app);

// The runs the Timeline tab shows (those selected that have a trace), each with its origin.
std::vector<TimelineRun> shown_timeline_runs(const AppState& app);

// The Timeline tab: a toolbar, the runs selected in the runs panel, the selection's details.
void draw_timeline_view(AppState& app);

// The Statistics tab: per-kernel and per-op tables of one run, sortable.
void draw_stats_view(AppState& app);

// The Comparison tab: two runs on one time scale, their totals, and which kernels each op became.
void draw_comparison_view(AppState& app);

// The Bandwidth tab: per kernel of one forward pass of the selected runs, achieved DRAM bandwidth
// against the GPU's peak and the bytes moved beside the plan's fewest (bandwidth_view.cpp).
void draw_bandwidth_view(AppState& app);

// The Roofline tab: the kernels of the selected runs (or of the variants of the one selected)
// under the GPU's ceilings, log-log (roofline_view.cpp).
void draw_roofline_view(AppState& app);

// The Advice tab: the fusion advisor's rules on one run, with the numbers and links to the
// kernels (advice_view.cpp).
void draw_advice_view(AppState& app);

// Label for a run in pickers and headers: "name" or "#id" when unnamed.
std::string run_label(const storage::RunInfo& info);

}  // namespace fusionscope::ui
