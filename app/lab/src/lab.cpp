#include "fusionscope/lab/lab.h"

#include <exception>
#include <utility>

#include "device_description.h"
#include "fusionscope/lab/hardware_counters.h"
#include "fusionscope/lab/torch_variants.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/utc_time.h"
#include "run_counters.h"

namespace fusionscope::lab {
namespace {

using storage::RunStatus;

Progress::Stage stage_of(kernels::RunProgress::Phase phase) {
  switch (phase) {
    case kernels::RunProgress::Phase::kSetup:
      return Progress::Stage::kSetup;
    case kernels::RunProgress::Phase::kWarmup:
      return Progress::Stage::kWarmup;
    case kernels::RunProgress::Phase::kTimed:
      return Progress::Stage::kTimed;
    default:
      return Progress::Stage::kFinishing;
  }
}

// Fills the session's machine fields from the device on the first capture into it.
void describe_session(storage::SessionStore& store, int device) {
  storage::SessionInfo info = store.session();
  if (!info.gpu_name.empty()) return;
  if (describe_device(device, info)) store.update_session(info);
}

}  // namespace

Lab::Lab(std::unique_ptr<Executor> executor, std::unique_ptr<Capture> capture)
    : executor_(std::move(executor)), capture_(std::move(capture)) {}
Lab::~Lab() = default;

void Lab::set_hardware_counters(std::unique_ptr<HardwareCounters> counters) {
  counters_ = std::move(counters);
}

bool Lab::tracing() const {
  return capture_->available();
}
std::string Lab::tracing_unavailable_reason() const {
  return capture_->unavailable_reason();
}

JobResult Lab::run(storage::SessionStore& store, const CaptureJob& job,
                   const ProgressCallback& progress, const std::atomic<bool>* cancel) {
  JobResult result;
  if (!capture_->available()) result.trace_unavailable = capture_->unavailable_reason();
  if (!job.runs.empty()) describe_session(store, job.device);
  auto report = [&](const Progress& p) {
    if (progress) progress(p);
  };
  if ((job.counters || job.pm_sampling) && !counters_) counters_ = make_cupti_hardware_counters();
  detail::CounterRefusals refusals;

  for (std::size_t i = 0; i < job.runs.size(); ++i) {
    if (cancel != nullptr && cancel->load()) {
      result.cancelled = true;
      break;
    }
    const RunSpec& spec = job.runs[i];
    if (kernels::is_torch_variant(spec.variant)) {
      // PyTorch in a Python subprocess under injection capture (torch_variants.h).
      Progress p;
      p.run_index = i;
      p.run_count = job.runs.size();
      p.run_name = run_name(spec);
      report(p);
      RunOutcome outcome = run_torch_variant(store, spec, job, p, report, cancel);
      if (outcome.run_id != 0) result.run_ids.push_back(outcome.run_id);
      if (outcome.status == RunStatus::kOk) ++result.ok;
      if (outcome.status == RunStatus::kFailed) ++result.failed;
      if (outcome.status == RunStatus::kCancelled) result.cancelled = true;
      Progress done = p;
      done.run_id = outcome.run_id;
      done.stage = Progress::Stage::kFinished;
      done.status = outcome.status;
      done.message = !outcome.result.error.empty() ? outcome.result.error : outcome.trace.status;
      done.median_ms = outcome.result.median_ms;
      done.kernels_traced = outcome.trace.kernels;
      std::string words;
      if (!outcome.kernel_counters.empty())
        words = outcome.kernel_counters.starts_with("ok")
                    ? "counters stored"
                    : "no counters (" + outcome.kernel_counters + ")";
      if (!outcome.pm_sampling.empty())
        words +=
            (words.empty() ? "" : ", ") +
            std::string(outcome.pm_sampling.starts_with("ok") ? "samples stored" : "no samples");
      done.counters = words;
      result.runs.push_back(std::move(outcome));
      report(done);
      if (result.cancelled) break;
      continue;
    }
    storage::RunInfo info;
    info.name = run_name(spec) + (job.cuda_graph ? " (graph)" : "");
    info.config_json = kernels::to_json(spec.config);
    info.kind = std::string(kernels::to_string(spec.config.kind));
    info.variant = std::string(kernels::to_string(spec.variant));
    info.dtype = std::string(kernels::to_string(spec.config.dtype));
    info.warmup = job.warmup;
    info.iterations = job.iterations;
    info.cuda_graph = job.cuda_graph;
    info.status = RunStatus::kRunning;
    info.created_utc = storage::utc_now();
    // The run is in the session from now on, shown as being written until commit(); if this
    // loop leaves early (a store error) the writer removes it, and if the process dies readers
    // see it interrupted.
    storage::RunWriter writer(store, info);
    info.id = writer.id();
    result.run_ids.push_back(info.id);

    Progress p;
    p.run_index = i;
    p.run_count = job.runs.size();
    p.run_name = info.name;
    p.run_id = info.id;
    report(p);

    kernels::RunOptions options;
    options.device = job.device;
    options.warmup_iterations = job.warmup;
    options.timed_iterations = job.iterations;
    options.use_graph = job.cuda_graph;
    options.check = job.verify;
    options.nvtx = true;
    options.cancel = cancel;
    options.on_progress = [&](const kernels::RunProgress& rp) {
      Progress q = p;
      q.stage = stage_of(rp.phase);
      q.iteration = rp.iteration;
      q.total = rp.total;
      report(q);
    };

    detail::RunCounters hardware(counters_.get(), job, refusals);
    hardware.hook(options);

    RunOutcome outcome;
    outcome.run_id = info.id;
    profiler::StoreTraceSink sink(writer);
    capture_->begin_run(sink);
    try {
      outcome.result = executor_->execute(spec.config, spec.variant, options);
    } catch (const std::exception& e) {
      outcome.result.ok = false;
      outcome.result.error = e.what();
    }
    outcome.trace = capture_->end_run();

    const kernels::RunResult& r = outcome.result;
    if (r.cancelled) {
      info.status = RunStatus::kCancelled;
      result.cancelled = true;
    } else if (!r.ok) {
      info.status = RunStatus::kFailed;
      info.error = r.error.empty() ? "the run failed without saying why" : r.error;
    } else if (r.correctness.checked && !r.correctness.passed) {
      info.status = RunStatus::kFailed;
      info.error = "output differs from the fp32 reference: relative error " +
                   std::to_string(r.correctness.rel_error) + " > tolerance " +
                   std::to_string(r.correctness.tolerance);
    } else {
      info.status = RunStatus::kOk;
    }
    info.wall_ns = static_cast<int64_t>(r.wall_ms * 1e6);
    info.trace_status = outcome.trace.status;
    info.dropped_records = outcome.trace.dropped_records;
    writer.set_info(info);
    std::string counters_words;
    if (hardware.wanted()) {
      Progress c = p;
      c.stage = Progress::Stage::kCounters;
      report(c);
      counters_words = hardware.finish(writer, info, spec, *executor_, options,
                                       outcome.trace.kernels > 0, outcome);
    }
    writer.commit();
    outcome.status = info.status;
    if (info.status == RunStatus::kOk) ++result.ok;
    if (info.status == RunStatus::kFailed) ++result.failed;

    Progress done = p;
    done.stage = Progress::Stage::kFinished;
    done.status = info.status;
    done.message = !info.error.empty() ? info.error : info.trace_status;
    done.median_ms = outcome.result.median_ms;
    done.kernels_traced = outcome.trace.kernels;
    done.counters = counters_words;
    result.runs.push_back(std::move(outcome));
    report(done);
    if (result.cancelled) break;
  }
  return result;
}

}  // namespace fusionscope::lab
