// Opening a session, or importing a PyTorch trace into a new one, on a worker thread: the window
// keeps drawing (and the session already open stays usable) while a large file loads, with its
// progress and a Cancel. A load that fails or is cancelled changes nothing.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "session.h"

namespace fusionscope::ui {

struct LoadProgress {
  std::string stage;    // "reading run 2 of 7 (geglu-post / eager)", "indexing", ...
  double fraction = 0;  // of the whole job, 0 to 1
};

class SessionLoader {
 public:
  // Loads the session file at `path`.
  static std::unique_ptr<SessionLoader> open(std::filesystem::path path);
  // Reads a PyTorch profiler trace (.json, .json.gz) and writes it as a run into a new session
  // at `session_path`, then loads that session.
  static std::unique_ptr<SessionLoader> import_trace(std::filesystem::path trace,
                                                     std::filesystem::path session_path);
  ~SessionLoader();
  SessionLoader(const SessionLoader&) = delete;
  SessionLoader& operator=(const SessionLoader&) = delete;

  const std::filesystem::path& path() const { return path_; }      // the session's
  const std::filesystem::path& source() const { return source_; }  // the trace, when importing
  LoadProgress progress() const;
  bool done() const { return done_; }
  void cancel() { cancel_ = true; }
  bool cancelled() const { return cancel_; }
  // Once done(): the session, or null with *error saying why (a cancelled load says so).
  std::unique_ptr<Session> take(std::string* error);

 private:
  SessionLoader() = default;
  void run_open();
  void run_import();
  void set_progress(std::string stage, double fraction);
  std::unique_ptr<Session> load(double from, double to);  // the session at path_

  std::filesystem::path path_, source_;
  std::thread worker_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> done_{false};
  mutable std::mutex mutex_;
  LoadProgress progress_;
  std::unique_ptr<Session> result_;
  std::string error_;
};

// Where an imported trace goes: beside it as <stem>.fsdb (or <stem>-2.fsdb, ... when taken),
// else in the temporary directory.
std::filesystem::path import_destination(const std::filesystem::path& trace);

// Whether a dropped or chosen file is a session (.fsdb) or a trace to import (.json, .json.gz).
bool is_trace_file(const std::filesystem::path& file);

}  // namespace fusionscope::ui
