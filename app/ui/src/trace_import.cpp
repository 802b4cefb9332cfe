#include "trace_import.h"

#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include <imgui.h>

#include "app.h"
#include "fusionscope/analysis/format.h"
#include "fusionscope/interchange/interchange_error.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::ui {
namespace {

namespace fs = std::filesystem;

// The one import that may run; the worker writes progress and the outcome under the mutex, the
// frame reads them.
struct ImportJob {
  std::thread worker;
  std::atomic<bool> cancel{false};
  std::atomic<bool> finished{false};
  std::mutex mutex;
  interchange::ImportProgress progress;
  std::string error;  // "" when it succeeded or was cancelled
  bool cancelled = false;
  fs::path trace, session;
  bool popup_requested = false;

  // Quitting while an import runs: stop it (it removes what it wrote) and wait.
  ~ImportJob() {
    cancel = true;
    if (worker.joinable()) worker.join();
  }
};

ImportJob& job() {
  static ImportJob j;
  return j;
}

std::string stem_of(const fs::path& trace) {
  fs::path p = trace.filename();
  if (p.extension() == ".gz") p = p.stem();
  if (p.extension() == ".json") p = p.stem();
  return p.string().empty() ? "trace" : p.string();
}

void remove_session_files(const fs::path& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    fs::remove(path.string() + suffix, ec);
}

void run_import(ImportJob& j) {
  interchange::ImportOptions options;
  options.cancel = &j.cancel;
  options.progress = [&j](const interchange::ImportProgress& p) {
    std::lock_guard lock(j.mutex);
    j.progress = p;
  };
  bool created = false;
  try {
    // Read and written at once; the run appears only when complete.
    storage::SessionInfo info;
    info.name = j.session.stem().string();
    auto store = storage::SessionStore::create(j.session, info);
    created = true;
    const interchange::ImportResult result =
        interchange::import_torch_trace(j.trace, store, {}, options);
    info = result.trace.session;
    info.name = j.session.stem().string();
    if (info.created_utc.empty()) info.created_utc = store.session().created_utc;
    store.update_session(info);
  } catch (const interchange::ImportCancelled&) {
    std::lock_guard lock(j.mutex);
    j.cancelled = true;
  } catch (const std::exception& e) {
    std::lock_guard lock(j.mutex);
    j.error = e.what();
  }
  {
    std::lock_guard lock(j.mutex);
    if ((j.cancelled || !j.error.empty()) && created) remove_session_files(j.session);
  }
  j.finished = true;
}

void draw_progress(ImportJob& j) {
  interchange::ImportProgress p;
  {
    std::lock_guard lock(j.mutex);
    p = j.progress;
  }
  ImGui::TextUnformatted(j.trace.filename().string().c_str());
  const double s = p.seconds > 0 ? p.seconds : 1e-9;
  using analysis::format_bytes;
  using analysis::format_count;
  if (p.phase == interchange::ImportProgress::Phase::kReading) {
    const float fraction = p.file_size > 0 ? static_cast<float>(static_cast<double>(p.file_bytes) /
                                                                static_cast<double>(p.file_size))
                                           : 0.0f;
    ImGui::ProgressBar(fraction, ImVec2(-1, 0),
                       (format_bytes(static_cast<double>(p.file_bytes)) + " of " +
                        format_bytes(static_cast<double>(p.file_size)))
                           .c_str());
    ImGui::Text("Reading: %s of JSON, %s events; %s/s, %s events/s",
                format_bytes(static_cast<double>(p.text_bytes)).c_str(),
                format_count(p.events).c_str(),
                format_bytes(static_cast<double>(p.text_bytes) / s).c_str(),
                format_count(static_cast<uint64_t>(static_cast<double>(p.events) / s)).c_str());
  } else {
    const float fraction = p.records_total > 0
                               ? static_cast<float>(static_cast<double>(p.records) /
                                                    static_cast<double>(p.records_total))
                               : 0.0f;
    ImGui::ProgressBar(
        fraction, ImVec2(-1, 0),
        (format_count(p.records) + " of " + format_count(p.records_total) + " records").c_str());
    ImGui::Text("Writing into %s: %s records/s", j.session.filename().string().c_str(),
                format_count(static_cast<uint64_t>(static_cast<double>(p.records) / s)).c_str());
  }
  ImGui::Spacing();
  if (ImGui::Button(j.cancel ? "Cancelling..." : "Cancel")) j.cancel = true;
}

}  // namespace

fs::path import_session_path(const fs::path& trace) {
  fs::path dir = trace.parent_path().empty() ? fs::path(".") : trace.parent_path();
  if (::access(dir.c_str(), W_OK) != 0) dir = fs::temp_directory_path();
  const std::string stem = stem_of(trace);
  std::error_code ec;
  fs::path out = dir / (stem + ".fsdb");
  for (int n = 2; fs::exists(out, ec); ++n) out = dir / (stem + "-" + std::to_string(n) + ".fsdb");
  return out;
}

bool trace_import_running() {
  ImportJob& j = job();
  return j.worker.joinable() && !j.finished;
}

void start_trace_import(AppState& app, const fs::path& trace) {
  ImportJob& j = job();
  if (trace_import_running()) {
    show_error(app, "Import in progress",
               "Another trace is being imported; wait for it or cancel it.");
    return;
  }
  if (j.worker.joinable()) j.worker.join();
  j.cancel = false;
  j.finished = false;
  j.progress = {};
  j.error.clear();
  j.cancelled = false;
  j.trace = trace;
  j.session = import_session_path(trace);
  j.popup_requested = true;
  j.worker = std::thread([&j] { run_import(j); });
  app.status = "importing " + trace.filename().string() + " into " + j.session.string();
}

void draw_trace_import(AppState& app) {
  ImportJob& j = job();
  if (!j.worker.joinable()) return;
  if (j.popup_requested) {
    ImGui::OpenPopup("Importing a trace###trace_import");
    j.popup_requested = false;
  }
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 34, 0), ImGuiCond_Appearing);
  if (ImGui::BeginPopupModal("Importing a trace###trace_import", nullptr,
                             ImGuiWindowFlags_NoSavedSettings)) {
    if (j.finished) {
      ImGui::CloseCurrentPopup();
    } else {
      app.probe.open_popup = "trace import";
      draw_progress(j);
    }
    ImGui::EndPopup();
  }
  if (!j.finished) return;
  j.worker.join();
  std::lock_guard lock(j.mutex);
  if (j.cancelled) {
    app.status = "import cancelled; nothing was written";
  } else if (!j.error.empty()) {
    show_error(app, "Cannot import the trace", j.error);
  } else {
    // Opened on a worker like any session, with its progress.
    begin_open_session(app, j.session, false,
                       "imported " + j.trace.filename().string() + " into " + j.session.string());
  }
}

}  // namespace fusionscope::ui
