// Capturing a user's program into a session (`fusionscope capture -- COMMAND`, the app's
// File > Capture a program..., and the Lab's PyTorch variants): one run per capture, every process
// of the command that used CUDA its own lanes in it (profiler/process_capture.h). With counters,
// the command runs a second time with the counters pass injected instead of the tracer, and the
// metrics are keyed to the traced kernels by launch order within the window; with PM sampling,
// fusionscope samples the device while the traced run executes. No UI here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fusionscope/profiler/process_capture.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::lab {

struct ProgramCaptureRequest {
  profiler::ProcessCaptureOptions process;  // the command and how to trace it (counters: false)
  std::string run_name;                     // empty: the command line, shortened
  // Iteration ranges that are warm-up (the run's `warmup`); the rest count as timed iterations.
  int warmup = 0;
  // Fields of the run row the caller knows (the Lab's configuration and variant); name, status,
  // wall time and trace fields are filled here. Empty kind becomes "program".
  storage::RunInfo info;
  bool counters = false;  // a counters pass: the command a second time (kernel replay)
  // The counters pass's command when it must differ from the traced one (e.g. where it writes
  // its own results); empty: the same command.
  std::vector<std::string> counters_command;
  std::string kernel_filter;     // counters: ECMAScript regex on kernel names
  std::size_t kernel_limit = 0;  // counters: at most this many kernels (0: no limit)
  bool pm_sampling = false;      // sample DRAM and SM activity during the traced run
  uint64_t pm_interval_ns = 10'000;
  int device = 0;  // for the session header and PM sampling
};

struct ProgramCaptureProgress {
  enum class Stage : uint8_t { kTracing, kCounters, kStoring, kDone };
  Stage stage = Stage::kTracing;
  profiler::ProcessCaptureProgress process;
  std::string line;  // what to print, when something happened; may be empty
};
using ProgramProgressCallback = std::function<void(const ProgramCaptureProgress&)>;

struct ProgramCaptureOutcome {
  int64_t run_id = 0;  // 0: nothing was stored (the command did not start)
  storage::RunStatus status = storage::RunStatus::kFailed;
  profiler::ProcessCaptureResult traced;
  std::string error;            // why it failed or did not start
  std::string kernel_counters;  // the counters pass's outcome ("ok: ..." or why not); "" if none
  std::string pm_sampling;      // likewise
  int iterations = 0;           // iteration ranges seen in the first process that had any
  // The exit status `fusionscope capture` returns: the command's own, 128 + signal when it was
  // killed, 130 when stopped, 1 when it could not start.
  int exit_status() const;
};

// Runs the request into `store` (open read-write). `stop` stops the command (the run is stored as
// cancelled with what was traced). Store errors (StoreError) propagate.
ProgramCaptureOutcome capture_program(storage::SessionStore& store,
                                      const ProgramCaptureRequest& request,
                                      const std::atomic<bool>* stop = nullptr,
                                      const ProgramProgressCallback& progress = {});

// A command line as a shell splits words: spaces separate, '...' and "..." quote, \ escapes
// (no variables, globs or redirections). Throws std::invalid_argument on an unclosed quote.
std::vector<std::string> split_command_line(const std::string& line);
// KEY=VALUE lines (blank lines and lines starting with # are skipped). Throws
// std::invalid_argument naming a line without '=' or with an empty key.
std::vector<std::pair<std::string, std::string>> parse_environment(const std::string& text);

// "python3 train.py --steps 3": a command line for a run's name, shortened to `max_chars`.
std::string command_title(const std::vector<std::string>& command, std::size_t max_chars = 60);

}  // namespace fusionscope::lab
