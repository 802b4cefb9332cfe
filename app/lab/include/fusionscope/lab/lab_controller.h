// The live lab behind the app's Lab panel, without any UI: checks a request before anything runs,
// runs it on a worker thread into a session file (through Lab, so each run is captured like
// `fusionscope capture` does), reports progress, cancels, and hands the finished runs' ids to
// whoever shows them. One job at a time. Every run is committed to the session as it ends, so the
// file is always consistent; a crash loses at most the run in progress, which the next job into
// that session marks as interrupted.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fusionscope/lab/capture_job.h"
#include "fusionscope/lab/lab.h"
#include "fusionscope/lab/refusal.h"
#include "fusionscope/lab/sweep.h"

namespace fusionscope::lab {

// What the lab needs to know of the GPU before it runs anything.
struct DeviceFacts {
  bool available = false;
  std::string reason;  // why not, when !available
  std::string name;
  int cc_major = 0, cc_minor = 0;
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  double bandwidth_bytes_per_s = 0;  // theoretical peaks from the clocks
  double tensor_flops = 0;
  double fp32_flops = 0;
};
// Asks the CUDA device (never throws; without one, available == false and why).
DeviceFacts probe_device(int device = 0);

struct LabRequest {
  CaptureJob job;                  // the runs in order, iterations, graph, check, device
  std::optional<SweepPlan> sweep;  // when the job is a sweep (job.runs == sweep->runs)
};

// Refusals before anything runs, each a sentence for a person; empty when the request may run.
// `device` is what probe_device() said (its free memory bounds the sizes); without a device the
// request is refused with "no CUDA device: viewing only".
std::vector<Refusal> check_request(const LabRequest& request, const DeviceFacts& device);

struct FinishedRun {
  int64_t run_id = 0;
  std::string name;
  storage::RunStatus status = storage::RunStatus::kPending;
  std::string message;  // the run's error, or what its trace lacks
  double median_ms = 0;
  std::size_t kernels_traced = 0;
};

struct LabStatus {
  enum class State : uint8_t { kIdle, kRunning, kCancelling, kDone };
  State state = State::kIdle;
  std::filesystem::path session;  // the file the job writes
  Progress progress;              // the latest progress report
  std::vector<int64_t> run_ids;   // the job's runs so far, the one in progress included
  std::vector<FinishedRun> finished;
  std::string sweep_key;  // the sweep's session property, when the job is a sweep
  std::string error;      // why the job stopped early (a store error), if it did
  bool cancelled = false;
  std::string trace_unavailable;  // why the runs carry no trace, when they do not
  bool busy() const { return state == State::kRunning || state == State::kCancelling; }
  // "run 2 of 4: geglu-post / epilogue, timed iteration 12 of 20"
  std::string describe_progress() const;
  // "4 runs: 3 ok, 1 failed" (and "cancelled", or the error).
  std::string summary() const;
};

class LabController {
 public:
  using LabFactory = std::function<std::unique_ptr<Lab>()>;
  using DeviceProbe = std::function<DeviceFacts()>;
  // The device is probed once, in the background (a CUDA context takes a moment to create).
  LabController(LabFactory make_lab, DeviceProbe probe);
  ~LabController();  // cancels a job in progress and waits for it to store what it has
  LabController(const LabController&) = delete;
  LabController& operator=(const LabController&) = delete;

  // The device, once probed (empty until then).
  std::optional<DeviceFacts> device() const;
  // Waits for the probe (tests and headless runs).
  DeviceFacts wait_for_device();

  // Starts the request into `session`, an existing session file that can be written. False with
  // the reasons in *why when a job is already running, check_request() refuses, or the probe has
  // not answered yet.
  bool start(const std::filesystem::path& session, LabRequest request, std::string* why);
  // Stops the run in progress at its next iteration (stored as cancelled); the rest is skipped.
  void cancel();
  bool busy() const;
  LabStatus status() const;
  // The runs that ended since the last call, in order (the app loads them into its views).
  std::vector<int64_t> take_finished_runs();
  // Blocks until the job in progress (if any) has ended.
  void wait();
  // Called on the worker thread after every progress report, outside the controller's lock; the
  // headless screenshot uses it to hold the job between runs while it draws a frame.
  void set_progress_hook(std::function<void(const Progress&)> hook);

 private:
  void work(std::filesystem::path session, LabRequest request);

  LabFactory make_lab_;
  std::shared_future<DeviceFacts> device_;
  std::unique_ptr<Lab> lab_;  // made on the worker at the first job, kept for the next ones
  std::thread worker_;
  std::atomic<bool> cancel_{false};
  mutable std::mutex mutex_;
  std::condition_variable done_;
  LabStatus status_;
  std::vector<int64_t> finished_queue_;
  std::function<void(const Progress&)> hook_;
};

// The controller the program uses: the kernels' runner, the CUPTI tracer, the real device.
std::unique_ptr<LabController> make_lab_controller(int device = 0);

// Marks runs left "running" by a capture that never finished (the program was closed or crashed;
// the store shows them interrupted) as failed, saying so. Returns how many.
std::size_t mark_interrupted_runs(storage::SessionStore& store);

}  // namespace fusionscope::lab
