#include "capture_dialog.h"

#include <imgui.h>

#include <exception>
#include <utility>

#include "app_state.h"
#include "fusionscope/lab/program_capture.h"
#include "fusionscope/storage/session_store.h"
#include "session_edit.h"
#include "ui_probe.h"

namespace fusionscope::ui {
namespace {

using Clock = std::chrono::steady_clock;

// Why a capture cannot start now, or "".
std::string why_not(const AppState& app) {
  if (!app.session) return "Open or create a session first: the run lands in it.";
  std::string why;
  if (!session_writable(*app.session, &why)) return why;
  if (lab_writing_session(app)) return "The Lab is writing to this session.";
  if (app.capture_program.running()) return "A capture is running.";
  return {};
}

// The form as a request, or why it cannot be one.
bool make_request(const CaptureDialogState& s, lab::ProgramCaptureRequest& r, std::string& why) {
  try {
    r.process.command = lab::split_command_line(s.command);
    r.process.environment = lab::parse_environment(s.environment);
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
  if (r.process.command.empty()) {
    why = "Give the command to capture, e.g. python3 train.py --steps 20";
    return false;
  }
  if (s.capture_range[0] != '\0' && (s.delay_s > 0 || s.duration_s > 0)) {
    why = "A capture range does not go with a delay or a duration.";
    return false;
  }
  r.process.working_directory = s.working_directory;
  r.process.iteration_range = s.iteration_range;
  r.process.capture_range = s.capture_range;
  r.process.delay_s = s.delay_s;
  r.process.duration_s = s.duration_s;
  r.run_name = s.run_name;
  r.warmup = s.warmup < 0 ? 0 : s.warmup;
  r.counters = s.counters;
  r.kernel_filter = s.counters ? s.kernel_filter : "";
  r.kernel_limit = s.counters && s.kernel_limit > 0 ? static_cast<std::size_t>(s.kernel_limit) : 0;
  r.pm_sampling = s.pm_sampling;
  return true;
}

const char* stage_name(lab::ProgramCaptureProgress::Stage stage) {
  switch (stage) {
    case lab::ProgramCaptureProgress::Stage::kTracing:
      return "tracing";
    case lab::ProgramCaptureProgress::Stage::kCounters:
      return "counters pass (kernel replay, slow)";
    case lab::ProgramCaptureProgress::Stage::kStoring:
      return "storing";
    case lab::ProgramCaptureProgress::Stage::kDone:
      return "done";
  }
  return "";
}

}  // namespace

bool start_capture_program(AppState& app) {
  CaptureDialogState& s = app.capture_program;
  lab::ProgramCaptureRequest request;
  if (const std::string why = why_not(app); !why.empty()) {
    s.form_error = why;
    return false;
  }
  if (!make_request(s, request, s.form_error)) return false;
  s.form_error.clear();
  if (s.worker.joinable()) s.worker.join();
  auto job = std::make_shared<CaptureDialogState::Job>();
  job->started = Clock::now();
  s.job = job;
  const std::filesystem::path path = app.session->path;
  s.worker = std::thread([job, path, request = std::move(request)] {
    std::string summary;
    try {
      auto store = storage::SessionStore::open(path, storage::OpenMode::kReadWrite);
      const lab::ProgramCaptureOutcome out = lab::capture_program(
          store, request, &job->stop, [&](const lab::ProgramCaptureProgress& p) {
            std::lock_guard lock(job->mu);
            job->stage = stage_name(p.stage);
            job->processes = std::max(job->processes, p.process.processes);
            if (!p.line.empty()) job->line = p.line;
          });
      if (out.run_id == 0) {
        summary = "Did not start: " + out.error;
      } else {
        summary = "Run " + std::to_string(out.run_id) + ": " +
                  std::string(storage::to_string(out.status)) + ", " +
                  std::to_string(out.traced.processes.size()) + " process(es), " +
                  std::to_string(out.traced.trace.kernels) + " kernels, " +
                  std::to_string(out.iterations) + " iterations";
        if (!out.error.empty()) summary += "; " + out.error;
        if (!out.traced.trace.status.empty()) summary += "; trace: " + out.traced.trace.status;
        if (!out.kernel_counters.empty()) summary += "; counters: " + out.kernel_counters;
        if (!out.pm_sampling.empty()) summary += "; PM sampling: " + out.pm_sampling;
      }
      std::lock_guard lock(job->mu);
      job->run_id = out.run_id;
    } catch (const std::exception& e) {
      summary = std::string("The capture failed: ") + e.what();
    }
    {
      std::lock_guard lock(job->mu);
      job->summary = std::move(summary);
    }
    job->done = true;
  });
  app.status = "Capturing " + lab::command_title(lab::split_command_line(s.command));
  return true;
}

void sync_capture_program(AppState& app) {
  CaptureDialogState& s = app.capture_program;
  if (!s.job || !s.job->done.load()) return;
  if (s.worker.joinable()) s.worker.join();
  int64_t run = 0;
  {
    std::lock_guard lock(s.job->mu);
    s.last_summary = s.job->summary;
    run = s.job->run_id;
  }
  s.job.reset();
  app.status = "Capture: " + s.last_summary;
  if (run != 0 && app.session) {
    try {
      load_runs_into(*app.session, {run});
      load_runs_into(*app.session, {});
    } catch (const std::exception& e) {
      app.status = std::string("Capture: cannot read the new run: ") + e.what();
    }
  }
}

CaptureDialogState::~CaptureDialogState() {
  if (job) job->stop = true;
  if (worker.joinable()) worker.join();
}

void open_capture_dialog(AppState& app) {
  app.capture_program.open_requested = true;
}

void draw_capture_menu_item(AppState& app) {
  const std::string why = why_not(app);
  const bool running = app.capture_program.running();
  if (ImGui::MenuItem("Capture a program...", nullptr, false, why.empty() || running))
    open_capture_dialog(app);
  probe_item(app, "menu.file.capture");
  if (!why.empty() && !running && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", why.c_str());
}

void draw_capture_dialog(AppState& app) {
  CaptureDialogState& s = app.capture_program;
  sync_capture_program(app);
  if (s.open_requested) {
    s.open_requested = false;
    s.open = true;
    ImGui::OpenPopup("Capture a program");
  }
  if (!s.open) return;
  const float em = ImGui::GetFontSize();
  ImGui::SetNextWindowSize(ImVec2(44 * em, 0), ImGuiCond_Appearing);
  if (!ImGui::BeginPopupModal("Capture a program", &s.open)) return;
  const bool running = s.running();
  ImGui::TextWrapped(
      "Runs the command with fusionscope's CUPTI library injected into every process of it "
      "that uses CUDA; the run lands in the open session.");
  ImGui::BeginDisabled(running);
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##command", "command line, e.g. python3 train.py --steps 20", s.command,
                           sizeof s.command);
  probe_item(app, "capture.command");
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##cwd", "working directory (default: fusionscope's)",
                           s.working_directory, sizeof s.working_directory);
  ImGui::TextDisabled("Environment, one KEY=VALUE per line");
  ImGui::InputTextMultiline("##env", s.environment, sizeof s.environment,
                            ImVec2(-1, 3.5f * ImGui::GetTextLineHeightWithSpacing()));
  ImGui::SetNextItemWidth(20 * em);
  ImGui::InputTextWithHint("Run name", "default: the command", s.run_name, sizeof s.run_name);
  ImGui::SetNextItemWidth(20 * em);
  ImGui::InputTextWithHint("Iteration ranges", "ProfilerStep#, else iteration", s.iteration_range,
                           sizeof s.iteration_range);
  ImGui::SetNextItemWidth(8 * em);
  ImGui::InputInt("Warm-up iterations", &s.warmup);
  ImGui::SetNextItemWidth(20 * em);
  ImGui::InputTextWithHint("Capture range (NVTX)", "empty: the whole run", s.capture_range,
                           sizeof s.capture_range);
  ImGui::SetNextItemWidth(8 * em);
  ImGui::InputFloat("Delay (s)", &s.delay_s, 0, 0, "%.1f");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(8 * em);
  ImGui::InputFloat("Duration (s)", &s.duration_s, 0, 0, "%.1f");
  ImGui::Checkbox("Counters (runs the command a second time, kernels replayed: slow)", &s.counters);
  if (s.counters) {
    ImGui::Indent();
    ImGui::SetNextItemWidth(16 * em);
    ImGui::InputTextWithHint("Kernel filter", "regex, e.g. gemm|triton", s.kernel_filter,
                             sizeof s.kernel_filter);
    ImGui::SetNextItemWidth(8 * em);
    ImGui::InputInt("Kernel limit (0: none)", &s.kernel_limit);
    ImGui::Unindent();
  }
  ImGui::Checkbox("PM sampling (DRAM and SM activity over time)", &s.pm_sampling);
  ImGui::EndDisabled();
  ImGui::Separator();

  if (running) {
    std::string line, stage;
    std::size_t processes = 0;
    {
      std::lock_guard lock(s.job->mu);
      line = s.job->line;
      stage = s.job->stage;
      processes = s.job->processes;
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - s.job->started).count();
    ImGui::Text("%s, %.1f s, %zu CUDA process%s", stage.c_str(), elapsed, processes,
                processes == 1 ? "" : "es");
    if (!line.empty()) ImGui::TextWrapped("%s", line.c_str());
    const bool stopping = s.job->stop.load();
    ImGui::BeginDisabled(stopping);
    if (ImGui::Button(stopping ? "Stopping..." : "Stop")) s.job->stop = true;
    probe_item(app, "capture.stop");
    ImGui::EndDisabled();
  } else {
    const std::string why = why_not(app);
    ImGui::BeginDisabled(!why.empty());
    if (ImGui::Button("Capture")) start_capture_program(app);
    probe_item(app, "capture.start");
    ImGui::EndDisabled();
    if (!why.empty()) {
      ImGui::SameLine();
      ImGui::TextDisabled("%s", why.c_str());
    }
    ImGui::SameLine();
    if (ImGui::Button("Close")) {
      s.open = false;
      ImGui::CloseCurrentPopup();
    }
    if (!s.form_error.empty()) ImGui::TextColored(app.theme.bad, "%s", s.form_error.c_str());
    if (!s.last_summary.empty()) ImGui::TextWrapped("Last capture: %s", s.last_summary.c_str());
  }
  ImGui::EndPopup();
}

}  // namespace fusionscope::ui
