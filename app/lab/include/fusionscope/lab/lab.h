// The lab: runs a capture job's configurations x variants through the kernels' runner, each
// under capture, into a session (one run row per configuration x variant, its trace and timing).
// The command line's `capture` and the app's live lab both drive it.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "fusionscope/lab/capture_job.h"
#include "fusionscope/profiler/trace_sink.h"
#include "fusionscope/profiler/tracer.h"

namespace fusionscope::lab {

// Executes one run. The program uses the kernels' runner; tests use stand-ins.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual kernels::RunResult execute(const kernels::MlpConfig& config, kernels::Variant variant,
                                     const kernels::RunOptions& options) = 0;
};
std::unique_ptr<Executor> make_runner_executor();

// Captures one run into a sink. The program uses the CUPTI tracer; tests use stand-ins.
class Capture {
 public:
  virtual ~Capture() = default;
  virtual bool available() const = 0;
  virtual std::string unavailable_reason() const = 0;
  virtual void begin_run(profiler::TraceSink& sink) = 0;
  virtual profiler::TraceOutcome end_run() = 0;
};
std::unique_ptr<Capture> make_cupti_capture(const profiler::TracerOptions& options = {});
// Runs without tracing; each run's trace_status says `reason`.
std::unique_ptr<Capture> make_no_capture(std::string reason);

class HardwareCounters;  // hardware_counters.h

class Lab {
 public:
  Lab(std::unique_ptr<Executor> executor, std::unique_ptr<Capture> capture);
  ~Lab();

  // What runs a job's counters pass and PM sampling (CaptureJob::counters, ::pm_sampling);
  // CUPTI's unless set (tests set stand-ins).
  void set_hardware_counters(std::unique_ptr<HardwareCounters> counters);

  bool tracing() const;
  std::string tracing_unavailable_reason() const;

  // Runs `job` into `store` (open read-write), one run after another, on the calling thread.
  // Fills the session's machine and GPU fields when they are empty. `progress` is called on the
  // calling thread; `cancel`, when it becomes true, stops the current run at its next iteration
  // (stored as cancelled) and skips the rest. Errors of a run are stored in that run; only store
  // errors (StoreError) are thrown.
  JobResult run(storage::SessionStore& store, const CaptureJob& job,
                const ProgressCallback& progress = {}, const std::atomic<bool>* cancel = nullptr);

 private:
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<Capture> capture_;
  std::unique_ptr<HardwareCounters> counters_;
};

}  // namespace fusionscope::lab
