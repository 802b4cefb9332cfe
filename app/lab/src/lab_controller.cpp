#include "fusionscope/lab/lab_controller.h"

#include <algorithm>
#include <exception>
#include <utility>

namespace fusionscope::lab {

namespace {

using storage::RunStatus;

}  // namespace

std::vector<Refusal> check_request(const LabRequest& request, const DeviceFacts& device) {
  std::vector<Refusal> refusals;
  const CaptureJob& job = request.job;
  if (job.runs.empty())
    add_refusal(refusals, RefusalCode::kNoVariant,
                "Choose at least one variant that applies to this configuration.");
  if (job.iterations < 1 || job.iterations > 1000000)
    add_refusal(refusals, RefusalCode::kIterations,
                "Timed iterations must be between 1 and 1,000,000 (got " +
                    std::to_string(job.iterations) + ").");
  if (job.warmup < 0 || job.warmup > 100000)
    add_refusal(refusals, RefusalCode::kWarmup,
                "Warm-up iterations must be between 0 and 100,000 (got " +
                    std::to_string(job.warmup) + ").");
  for (const RunSpec& spec : job.runs) {
    // The configuration first; then, on a device, whether it fits in its free memory.
    try {
      kernels::validate(spec.config, spec.variant, std::nullopt);
    } catch (const kernels::ConfigError& e) {
      add_refusal(refusals, RefusalCode::kInvalidConfig, e.what());
      continue;
    }
    if (!device.available) continue;
    try {
      kernels::validate(spec.config, spec.variant, device.free_bytes);
    } catch (const kernels::ConfigError& e) {
      add_refusal(refusals, RefusalCode::kDeviceMemory, e.what());
    }
  }
  if (!device.available)
    add_refusal(refusals, RefusalCode::kNoDevice,
                "no CUDA device: viewing only" +
                    (device.reason.empty() ? std::string() : " (" + device.reason + ")"));
  return refusals;
}

std::string LabStatus::describe_progress() const {
  if (progress.run_count == 0) return {};
  std::string s = "run " + std::to_string(progress.run_index + 1) + " of " +
                  std::to_string(progress.run_count) + ": " + progress.run_name;
  auto of = [&](const char* what) {
    return std::string(", ") + what + " " + std::to_string(progress.iteration + 1) + " of " +
           std::to_string(progress.total);
  };
  switch (progress.stage) {
    case Progress::Stage::kStarting:
      s += ", starting";
      break;
    case Progress::Stage::kSetup:
      s += ", setting up";
      break;
    case Progress::Stage::kWarmup:
      s += of("warm-up iteration");
      break;
    case Progress::Stage::kTimed:
      s += of("timed iteration");
      break;
    case Progress::Stage::kFinishing:
      s += ", checking and storing";
      break;
    case Progress::Stage::kFinished:
      s += ", " + std::string(storage::to_string(progress.status));
      break;
    default:  // stages added later (a counters pass...) read as work in progress
      s += ", working";
      break;
  }
  return s;
}

std::string LabStatus::summary() const {
  size_t ok = 0, failed = 0, cancelled_runs = 0;
  for (const FinishedRun& r : finished) {
    ok += r.status == RunStatus::kOk;
    failed += r.status == RunStatus::kFailed;
    cancelled_runs += r.status == RunStatus::kCancelled;
  }
  std::string s = std::to_string(finished.size()) + (finished.size() == 1 ? " run: " : " runs: ") +
                  std::to_string(ok) + " ok";
  if (failed) s += ", " + std::to_string(failed) + " failed";
  if (cancelled || cancelled_runs) s += ", cancelled";
  if (!error.empty()) s += "; stopped: " + error;
  return s;
}

LabController::LabController(LabFactory make_lab, DeviceProbe probe)
    : make_lab_(std::move(make_lab)),
      device_(std::async(std::launch::async, std::move(probe)).share()) {}

LabController::~LabController() {
  cancel();
  if (worker_.joinable()) worker_.join();
  // The probe may still be asking the driver; its future's destructor waits for it.
}

std::optional<DeviceFacts> LabController::device() const {
  if (device_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return std::nullopt;
  return device_.get();
}

DeviceFacts LabController::wait_for_device() {
  return device_.get();
}

bool LabController::start(const std::filesystem::path& session, LabRequest request,
                          std::string* why) {
  auto refuse = [&](std::string message) {
    if (why) *why = std::move(message);
    return false;
  };
  if (busy()) return refuse("a job is already running; wait for it or cancel it");
  const std::optional<DeviceFacts> dev = device();
  if (!dev) return refuse("the GPU is still being probed; try again in a moment");
  const std::vector<Refusal> refusals = check_request(request, *dev);
  if (!refusals.empty()) return refuse(messages(refusals));
  if (worker_.joinable()) worker_.join();  // the previous job has ended
  {
    std::lock_guard lock(mutex_);
    status_ = LabStatus{};
    status_.state = LabStatus::State::kRunning;
    status_.session = session;
    finished_queue_.clear();
  }
  cancel_ = false;
  worker_ = std::thread(&LabController::work, this, session, std::move(request));
  return true;
}

void LabController::cancel() {
  std::lock_guard lock(mutex_);
  if (status_.state != LabStatus::State::kRunning) return;
  status_.state = LabStatus::State::kCancelling;
  cancel_ = true;
}

bool LabController::busy() const {
  std::lock_guard lock(mutex_);
  return status_.busy();
}

LabStatus LabController::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

std::vector<int64_t> LabController::take_finished_runs() {
  std::lock_guard lock(mutex_);
  return std::exchange(finished_queue_, {});
}

void LabController::wait() {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return !status_.busy(); });
}

void LabController::set_progress_hook(std::function<void(const Progress&)> hook) {
  std::lock_guard lock(mutex_);
  hook_ = std::move(hook);
}

void LabController::work(std::filesystem::path session, LabRequest request) {
  std::string error;
  JobResult result;
  try {
    storage::SessionStore store =
        storage::SessionStore::open(session, storage::OpenMode::kReadWrite);
    mark_interrupted_runs(store);
    if (!lab_) lab_ = make_lab_();
    std::optional<SweepRecord> sweep;
    if (request.sweep) {
      sweep = request.sweep->record;
      sweep->key = next_sweep_key(store.properties());
      sweep->cuda_graph = request.job.cuda_graph;
      save_sweep(store, *sweep);
      std::lock_guard lock(mutex_);
      status_.sweep_key = sweep->key;
    }
    auto on_progress = [&](const Progress& p) {
      if (sweep && p.stage == Progress::Stage::kStarting &&
          p.run_index < request.sweep->point_of_run.size()) {
        // The record names each run as soon as it exists, so an interrupted sweep still knows
        // which points it reached.
        const size_t point = request.sweep->point_of_run[p.run_index];
        sweep->points[point].runs.emplace_back(request.job.runs[p.run_index].variant, p.run_id);
        save_sweep(store, *sweep);
      }
      std::function<void(const Progress&)> hook;
      {
        std::lock_guard lock(mutex_);
        status_.progress = p;
        if (p.stage == Progress::Stage::kStarting) status_.run_ids.push_back(p.run_id);
        if (p.stage == Progress::Stage::kFinished) {
          status_.finished.push_back(
              {p.run_id, p.run_name, p.status, p.message, p.median_ms, p.kernels_traced});
          finished_queue_.push_back(p.run_id);
        }
        hook = hook_;
      }
      if (hook) hook(p);
    };
    result = lab_->run(store, request.job, on_progress, &cancel_);
  } catch (const std::exception& e) {
    error = e.what();
  }
  {
    std::lock_guard lock(mutex_);
    status_.error = error;
    status_.cancelled = result.cancelled;
    status_.trace_unavailable = result.trace_unavailable;
    status_.state = LabStatus::State::kDone;
  }
  done_.notify_all();
}

std::unique_ptr<LabController> make_lab_controller(int device) {
  return std::make_unique<LabController>(
      [] { return std::make_unique<Lab>(make_runner_executor(), make_cupti_capture()); },
      [device] { return probe_device(device); });
}

std::size_t mark_interrupted_runs(storage::SessionStore& store) {
  std::size_t n = 0;
  for (storage::RunInfo info : store.runs()) {
    // A run still being written belongs to a live writer (another job, another program); a
    // damaged one is left for a person to see.
    if (info.status != RunStatus::kRunning || info.state == storage::RunState::kWriting ||
        info.integrity == storage::Integrity::kDamaged)
      continue;
    info.status = RunStatus::kFailed;
    info.error =
        "interrupted: the capture stopped before this run ended (the program was closed or "
        "crashed); its records up to then are kept";
    store.update_run(info);
    ++n;
  }
  return n;
}

}  // namespace fusionscope::lab
