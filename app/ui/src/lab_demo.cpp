#include "lab_demo.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "fusionscope/lab/job_file.h"
#include "lab_form_check.h"
#include "lab_panel.h"
#include "view_registry.h"

namespace fusionscope::ui {

namespace {

// A whole number in plain digits, said in the sweep's words when it is not one.
int64_t sweep_number(const std::string& text, const char* what) {
  const bool digits =
      !text.empty() && text.size() <= 9 &&
      std::all_of(text.begin(), text.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
  if (!digits)
    throw kernels::ConfigError(std::string(what) +
                               " must be a whole number up to 999999999, not \"" +
                               text.substr(0, 20) + "\"");
  return std::stoll(text);
}

// SIZE:FROM:TO[:POINTS]
bool parse_sweep(const std::string& text, lab::SweepSpec& spec, std::string* error) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  try {
    if (parts.size() < 3 || parts.size() > 4)
      throw kernels::ConfigError("expected SIZE:FROM:TO[:POINTS]");
    spec.size = lab::parse_sweep_size(parts[0]);
    spec.from = sweep_number(parts[1], "FROM");
    spec.to = sweep_number(parts[2], "TO");
    spec.steps = parts.size() == 4 ? static_cast<int>(sweep_number(parts[3], "POINTS")) : 0;
    lab::sweep_points(spec);
  } catch (const std::exception& e) {
    if (error) *error = "--lab-sweep " + text + ": " + e.what();
    return false;
  }
  return true;
}

}  // namespace

bool apply_lab_options(AppState& app, const ScreenshotOptions& o, std::string* error) {
  LabPanelState& s = app.lab;
  const std::optional<kernels::MlpConfig> preset = kernels::find_preset(o.lab_preset);
  if (!preset) {
    std::string names;
    for (const auto& p : kernels::presets()) names += (names.empty() ? "" : ", ") + p.name;
    if (error) *error = "no preset named \"" + o.lab_preset + "\" (presets: " + names + ")";
    return false;
  }
  s.form = lab::form_of(*preset);
  s.preset = o.lab_preset;
  try {
    const std::vector<kernels::Variant> chosen = lab::parse_variant_list(o.lab_variants);
    for (kernels::Variant v : kernels::all_variants())
      s.variants[static_cast<size_t>(v)] =
          std::find(chosen.begin(), chosen.end(), v) != chosen.end();
  } catch (const kernels::ConfigError& e) {
    if (error) *error = std::string("--lab-variants: ") + e.what();
    return false;
  }
  s.warmup = o.lab_warmup;
  s.iterations = o.lab_iterations;
  s.verify = o.lab_verify;
  s.sweep_on = !o.lab_sweep.empty();
  if (s.sweep_on && !parse_sweep(o.lab_sweep, s.sweep, error)) return false;
  show_view(app, "lab");
  return true;
}

int run_lab_frames(AppState& app, const ScreenshotOptions& o, const std::function<void()>& frame,
                   const std::function<bool(const std::string&)>& capture) {
  ensure_lab_controller(app);
  const std::shared_ptr<lab::LabController> controller = app.lab.controller;
  const lab::DeviceFacts device = controller->wait_for_device();
  const LabFormCheck check = check_lab_form(app.lab, device);
  if (!check.refusals.empty() || !check.request) {
    // The picture shows the refusal as the panel does.
    for (int i = 0; i < std::max(o.frames, 3); ++i) frame();
    capture(o.out_path);
    for (const lab::Refusal& r : check.refusals)
      std::fprintf(stderr, "fusionscope screenshot: the lab refuses: %s\n", r.message.c_str());
    return 1;
  }
  const std::optional<lab::LabRequest>& request = check.request;

  // Half-way, the worker waits at the start of a run (between runs, so no timing is touched)
  // until the picture of the job in progress is taken.
  struct Hold {
    std::mutex m;
    std::condition_variable cv;
    size_t at = 0;
    bool waiting = false;
    bool released = false;
  };
  auto hold = std::make_shared<Hold>();
  const size_t runs = request->job.runs.size();
  hold->at = runs / 2;
  const bool want_during = !o.lab_during.empty() && runs >= 2;
  if (want_during)
    controller->set_progress_hook([hold](const lab::Progress& p) {
      if (p.stage != lab::Progress::Stage::kStarting || p.run_index != hold->at) return;
      std::unique_lock lock(hold->m);
      hold->waiting = true;
      hold->cv.notify_all();
      hold->cv.wait(lock, [&] { return hold->released; });
    });
  auto release = [&] {
    std::lock_guard lock(hold->m);
    hold->released = true;
    hold->cv.notify_all();
  };

  start_lab_run(app, *request);
  if (!app.lab.start_error.empty() || !controller->busy()) {
    release();
    std::fprintf(stderr, "fusionscope screenshot: the lab did not start: %s\n",
                 app.lab.start_error.empty() ? "the session cannot be written"
                                             : app.lab.start_error.c_str());
    controller->set_progress_hook({});
    return 1;
  }
  bool during_done = !want_during;
  size_t reported = 0;
  while (controller->busy() || !app.lab.job_seen_done) {
    frame();
    if (!during_done) {
      bool waiting = false;
      {
        std::lock_guard lock(hold->m);
        waiting = hold->waiting;
      }
      if (waiting) {
        for (int i = 0; i < 3; ++i) frame();
        if (!capture(o.lab_during))
          std::fprintf(stderr, "fusionscope screenshot: cannot write %s\n", o.lab_during.c_str());
        during_done = true;
        release();
      }
    }
    const lab::LabStatus st = controller->status();
    for (; reported < st.finished.size(); ++reported) {
      const lab::FinishedRun& r = st.finished[reported];
      std::fprintf(stderr, "[%2zu/%zu] %s ... %s", reported + 1, runs, r.name.c_str(),
                   std::string(storage::to_string(r.status)).c_str());
      if (r.status == storage::RunStatus::kOk)
        std::fprintf(stderr, "  %.1f us/iter, %zu kernels traced\n", r.median_ms * 1e3,
                     r.kernels_traced);
      else
        std::fprintf(stderr, "  %s\n", r.message.c_str());
    }
    // About ten frames a second, as the window draws while a job runs; the GPU is the lab's.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  release();
  controller->set_progress_hook({});
  for (int i = 0; i < std::max(o.frames, 3); ++i) frame();
  if (!capture(o.out_path)) return 1;
  const lab::LabStatus st = controller->status();
  std::fprintf(stderr, "lab: %s\n", st.summary().c_str());
  if (!st.trace_unavailable.empty())
    std::fprintf(stderr, "lab: runs without a trace: %s\n", st.trace_unavailable.c_str());
  bool all_ok = st.error.empty() && !st.cancelled;
  for (const lab::FinishedRun& r : st.finished)
    all_ok = all_ok && r.status == storage::RunStatus::kOk;
  return all_ok ? 0 : 1;
}

}  // namespace fusionscope::ui
