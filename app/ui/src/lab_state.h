// What the Lab panel, the Sweep view and the session editing popups remember between frames.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fusionscope/analysis/prediction.h"
#include "fusionscope/lab/lab_controller.h"
#include "fusionscope/lab/lab_form.h"
#include "fusionscope/lab/refusal.h"
#include "fusionscope/lab/sweep.h"

namespace fusionscope::ui {

// Per variant, what the panel shows: the guess, and the latest matching run measured against it.
struct LabVariantRow {
  kernels::Variant variant = kernels::Variant::kEager;
  bool chosen = false;
  bool supported = false;
  std::string why_not;  // kernels::supports()'s reason when !supported
  std::optional<analysis::VariantPrediction> prediction;
  std::optional<analysis::VariantOutcome> outcome;  // empty: no run of it in the session yet
  std::string run_name;
};

// The form checked once per edit (lab_form_check.h).
struct LabFormCheck {
  // The configuration the form makes, named after the preset it equals, when its shape is valid.
  std::optional<kernels::MlpConfig> config;
  std::optional<lab::LabRequest> request;  // what Run would start, when it can be built
  std::vector<lab::Refusal> refusals;      // why Run is disabled; empty: it can run
  std::vector<int64_t> sweep_points;       // the sweep's sizes, when it is on and valid
  size_t sweep_runs = 0;                   // runs the sweep makes in the chosen variants
};

struct LabPanelState {
  lab::LabForm form = lab::form_of(*kernels::find_preset("geglu-post"));
  std::string preset = "geglu-post";  // the preset the form came from; "" once edited
  // By kernels::Variant: fusionscope's five, then PyTorch's two (off until ticked: they start
  // Python and compile).
  std::array<bool, 7> variants = {true, true, true, true, true, false, false};
  // Whether python3 can run the PyTorch variants ("" when it can), asked once in the background.
  std::shared_future<std::string> torch_check;
  int warmup = 5;
  int iterations = 20;
  bool graph = false;
  bool verify = true;  // check each output against the fp32 reference
  bool sweep_on = false;
  lab::SweepSpec sweep;

  // Made when the panel is first drawn: it probes the GPU in the background.
  std::shared_ptr<lab::LabController> controller;
  std::vector<int64_t> job_runs;  // the runs of the last job started from this app
  bool job_seen_done = true;      // the end of the last job has been taken into the views
  std::string start_error;        // why the last Run did not start

  // Derived when their inputs change, shown and dumped for tests.
  LabFormCheck check;
  std::string check_key;  // lab_form_key() of the form `check` was made from
  std::vector<LabVariantRow> rows;
  analysis::PredictionPeaks peaks;
  std::string cache_key;
  bool run_enabled = false;
  std::string run_disabled_reason;
};

struct SweepViewState {
  std::string key;  // the sweep shown ("lab.sweep.N"); "" = the latest
  bool show_bounds = true;
};

// A Run waiting for a writable session: the sample and read-only files are never written, so
// the lab offers a new session or a copy first.
struct PendingRun {
  bool offer_requested = false;
  std::string why_read_only;
  std::optional<lab::LabRequest> request;
};

struct SessionEditState {
  bool rename_requested = false;
  int64_t rename_run = -1;
  char rename_text[256] = {};
  bool delete_requested = false;
  std::vector<int64_t> delete_runs;
  bool notes_requested = false;
  std::vector<char> notes_buffer;  // the notes being edited (ImGui edits a fixed buffer)
  PendingRun pending;
};

// Widget rectangles and state for tests that drive the window ($FUSIONSCOPE_UI_STATE).
struct UiProbe {
  std::string path;                                                 // where to write; "" = off
  std::vector<std::pair<std::string, std::array<float, 4>>> items;  // name, x, y, w, h
  std::string last_written;
  std::string open_popup;
};

}  // namespace fusionscope::ui
