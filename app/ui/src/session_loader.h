// Opening a session on a worker thread: the window keeps drawing (and the session already open
// stays usable) while a large file loads, with its progress and a Cancel. A load that fails or is
// cancelled changes nothing. (Importing a trace is trace_import.h; it opens its session here.)
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
  ~SessionLoader();
  SessionLoader(const SessionLoader&) = delete;
  SessionLoader& operator=(const SessionLoader&) = delete;

  const std::filesystem::path& path() const { return path_; }  // the session's
  LoadProgress progress() const;
  bool done() const { return done_; }
  void cancel() { cancel_ = true; }
  bool cancelled() const { return cancel_; }
  // Once done(): the session, or null with *error saying why (a cancelled load says so).
  std::unique_ptr<Session> take(std::string* error);

 private:
  SessionLoader() = default;
  void run_open();
  void set_progress(std::string stage, double fraction);
  std::unique_ptr<Session> load(double from, double to);  // the session at path_

  std::filesystem::path path_;
  std::thread worker_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> done_{false};
  mutable std::mutex mutex_;
  LoadProgress progress_;
  std::unique_ptr<Session> result_;
  std::string error_;
};

// Whether a dropped file is a trace to import (.json, .json.gz) rather than a session.
bool is_trace_file(const std::filesystem::path& file);

}  // namespace fusionscope::ui
