#include "run_counters.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "fusionscope/analysis/iteration_kernels.h"
#include "fusionscope/analysis/metrics_status.h"
#include "fusionscope/counters/store_records.h"

namespace fusionscope::lab::detail {

namespace {

using counters::CounterAvailability;

// Refusals that hold for every later run of the job.
bool lasting(const counters::CounterStatus& s) {
  return s.availability == CounterAvailability::kInsufficientPrivileges ||
         s.availability == CounterAvailability::kNotSupported ||
         s.availability == CounterAvailability::kNoDevice;
}

std::string micros(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g us", static_cast<double>(ns) / 1e3);
  return buf;
}

}  // namespace

RunCounters::RunCounters(HardwareCounters* hardware, const CaptureJob& job,
                         CounterRefusals& refusals)
    : hardware_(hardware), job_(job), refusals_(refusals) {}

void RunCounters::hook(kernels::RunOptions& options) {
  if (!job_.pm_sampling || hardware_ == nullptr) return;
  auto previous = std::move(options.on_progress);
  const int warmup = options.warmup_iterations;
  options.on_progress = [this, previous, warmup](const kernels::RunProgress& p) {
    using Phase = kernels::RunProgress::Phase;
    if ((p.phase == Phase::kWarmup && p.iteration == 0) ||
        (p.phase == Phase::kSetup && warmup == 0))
      start_sampling();
    if (previous) previous(p);
  };
}

void RunCounters::start_sampling() {
  if (sampling_ || sampling_done_) return;
  if (refusals_.sampling) {
    sampling_start_ = refusals_.sampling;
    sampling_done_ = true;
    return;
  }
  const counters::CounterStatus s = hardware_->start_sampling(job_.device, job_.pm_interval_ns);
  sampling_start_ = s;
  if (!s.ok()) {
    if (lasting(s)) refusals_.sampling = s;
    sampling_done_ = true;
    return;
  }
  sampling_ = true;
}

void RunCounters::stop_sampling() {
  if (!sampling_) return;
  samples_ = hardware_->stop_sampling();
  sampling_ = false;
  sampling_done_ = true;
}

namespace {

// The run's iterations on the CUPTI clock: from the first "iteration N" range's start to the end
// of the last kernel launched in one. Empty when the run has no trace of them.
std::optional<std::pair<int64_t, int64_t>> iterations_extent(const storage::RunData& run) {
  std::optional<std::pair<int64_t, int64_t>> out;
  const std::vector<long> of = analysis::kernel_iterations(run);
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    if (of[i] < 0) continue;
    const auto& k = run.kernels[i];
    if (!out) out = {k.start_ns, k.end_ns};
    out->first = std::min(out->first, k.start_ns);
    out->second = std::max(out->second, k.end_ns);
  }
  if (!out) return out;
  for (const auto& r : run.ranges)
    if (run.str(r.name).starts_with("iteration ")) out->first = std::min(out->first, r.start_ns);
  return out;
}

}  // namespace

std::string RunCounters::store_samples(storage::RunWriter& writer, const storage::RunData* run,
                                       size_t& stored) {
  if (!sampling_start_) return "skipped: the run ended before its first iteration";
  if (!sampling_start_->ok()) return sampling_start_->describe();
  if (!samples_) return "counters: failed: sampling did not stop";
  counters::PmSamplingResult& r = *samples_;
  if (!r.status.ok()) return r.status.describe();
  // Sampling starts before the first warm-up iteration, but the sampler's own start takes long
  // (about a second on an H100 with CUPTI 13.0, docs/bandwidth.md) while the GPU idles: keep the
  // samples of the iterations, a few intervals either side.
  const size_t taken = r.samples.size();
  std::string kept = "from the first warm-up iteration to the end of the timed ones";
  std::string lost;
  const auto extent = run ? iterations_extent(*run) : std::nullopt;
  if (extent) {
    // Time within the iterations that no sample covers (samples CUPTI lost), said exactly.
    int64_t lost_ns = 0, first_ns = -1;
    size_t gaps = 0;
    for (const counters::PmGap& g : r.gaps) {
      const int64_t from = std::max(g.start_ns, extent->first);
      const int64_t to = std::min(g.end_ns, extent->second);
      if (to <= from) continue;
      ++gaps;
      lost_ns += to - from;
      if (first_ns < 0) first_ns = from - extent->first;
    }
    if (gaps > 0)
      lost = "; no samples for " + micros(static_cast<uint64_t>(lost_ns)) + " of the iterations " +
             "in " + std::to_string(gaps) + " gap(s), the first " +
             micros(static_cast<uint64_t>(first_ns)) + " after they began (CUPTI's decoding " +
             "fell behind)";
  }
  if (extent) {
    const int64_t margin = 2 * static_cast<int64_t>(r.interval_ns);
    std::erase_if(r.samples, [&](const counters::PmSample& x) {
      const int64_t t = x.start_ns + (x.end_ns - x.start_ns) / 2;
      return t < extent->first - margin || t > extent->second + margin;
    });
    kept = "within the warm-up and timed iterations (" + std::to_string(taken - r.samples.size()) +
           " taken before or after them dropped)";
  }
  if (r.samples.empty())
    return "counters: failed: no PM sample fell within the iterations" +
           std::string(r.hardware_overflow
                           ? " (the sampler's hardware buffer filled before they began; a "
                             "longer --pm-interval-us lasts longer)"
                           : "");
  const auto records =
      counters::to_sample_records(r, [&](std::string_view s) { return writer.intern(s); });
  writer.add_samples(records);
  stored = r.samples.size();
  std::string text = std::string(analysis::kMetricsOk) + ": " + std::to_string(r.samples.size()) +
                     " samples every " + micros(r.interval_ns) + " " + kept + " (" +
                     r.clock_mapping + ")";
  text += lost;
  if (r.hardware_overflow && lost.empty())
    text +=
        "; the sampler's hardware buffer filled, but no sample within the iterations is missing";
  if (r.dropped_samples > 0) text += "; " + std::to_string(r.dropped_samples) + " samples dropped";
  return text;
}

std::string RunCounters::counters_pass(storage::RunWriter& writer, const storage::RunInfo& info,
                                       const storage::RunData& run, const RunSpec& spec,
                                       Executor& executor, const kernels::RunOptions& timing,
                                       bool traced, size_t& stored) {
  if (info.status != storage::RunStatus::kOk)
    return "skipped: the timed run did not complete, so there are no kernels to match";
  if (job_.cuda_graph)
    return "skipped: the kernels of a CUDA graph replay share one correlation id, so counters "
           "cannot be keyed to them; capture without --graph for counters";
  if (!traced) return "skipped: the run has no trace whose kernels the counters could be keyed to";
  if (refusals_.kernels) return refusals_.kernels->describe();

  // The timed pass's first timed iteration, which the counters pass repeats launch by launch.
  const std::vector<uint32_t> indexes = analysis::iteration_kernels(run, info.warmup);
  if (indexes.empty())
    return "skipped: no kernels recorded in the first timed iteration (\"iteration " +
           std::to_string(info.warmup) + "\")";
  std::vector<storage::KernelRecord> iteration;
  for (uint32_t i : indexes) iteration.push_back(run.kernels[i]);

  const counters::CounterPassResult pass =
      hardware_->kernel_pass(executor, spec.config, spec.variant, timing);
  if (!pass.status.ok()) {
    if (lasting(pass.status)) refusals_.kernels = pass.status;
    return pass.status.describe();
  }
  std::vector<storage::KernelMetricRecord> records;
  try {
    const std::vector<uint32_t> ids = counters::match_by_launch_order(pass, iteration);
    records = counters::to_kernel_metric_records(
        pass, ids, [&](std::string_view s) { return writer.intern(s); });
  } catch (const counters::MatchError& e) {
    return std::string("counters: failed: ") + e.what();
  }
  writer.add_kernel_metrics(records);
  if (pass.l2_bytes > 0)
    writer.store().set_property(std::string(analysis::kL2BytesProperty),
                                std::to_string(pass.l2_bytes));
  stored = pass.kernels.size();
  std::string text =
      std::string(analysis::kMetricsOk) + ": " + std::to_string(pass.kernels.size()) +
      " kernels of timed iteration " + std::to_string(info.warmup) + " (" +
      std::to_string(pass.passes) +
      (pass.replay == counters::ReplayMode::kUser ? " passes of the forward pass (user replay)"
                                                  : " replay passes per kernel") +
      (pass.l2_sweeps > 0 ? ", the L2 swept before each kernel as Nsight Compute's "
                            "cache control does"
                          : "") +
      ", on " + pass.chip + ")";
  if (!pass.skipped_metrics.empty()) {
    text += "; not on this chip:";
    for (const std::string& m : pass.skipped_metrics) text += " " + m;
  }
  if (pass.limit_reached) text += "; the kernel limit was reached, later kernels are missing";
  return text;
}

std::string RunCounters::finish(storage::RunWriter& writer, const storage::RunInfo& info,
                                const RunSpec& spec, Executor& executor,
                                const kernels::RunOptions& timing, bool traced,
                                RunOutcome& outcome) {
  if (!wanted()) return {};
  if (hardware_ == nullptr) {
    const std::string why = "counters: failed: no hardware counters in this build";
    if (job_.counters) outcome.kernel_counters = why;
    if (job_.pm_sampling) outcome.pm_sampling = why;
  }
  std::string words;
  // The run as traced: its iterations bound the samples kept and give the counters' kernels.
  std::optional<storage::RunData> run;
  if (traced && hardware_ != nullptr) run = writer.store().load_run(writer.id());
  if (job_.pm_sampling && hardware_ != nullptr) {
    // Stopped only now, after the trace has ended: stopping decodes and evaluates every sample
    // (seconds for 10^5 samples on an H100), and the decode thread's CUDA calls would otherwise
    // stretch the run's trace by that long.
    stop_sampling();
    size_t n = 0;
    outcome.pm_sampling = store_samples(writer, run ? &*run : nullptr, n);
    words += outcome.pm_sampling.starts_with(analysis::kMetricsOk)
                 ? std::to_string(n) + " samples"
                 : "no samples (" + outcome.pm_sampling + ")";
  }
  if (job_.counters && hardware_ != nullptr) {
    size_t n = 0;
    try {
      outcome.kernel_counters =
          run ? counters_pass(writer, info, *run, spec, executor, timing, traced, n)
              : "skipped: the run has no trace whose kernels the counters could be keyed to";
    } catch (const storage::StoreError&) {
      throw;
    } catch (const std::exception& e) {
      outcome.kernel_counters = std::string("counters: failed: ") + e.what();
    }
    if (!words.empty()) words += ", ";
    words += outcome.kernel_counters.starts_with(analysis::kMetricsOk)
                 ? "counters for " + std::to_string(n) + " kernels"
                 : "no counters (" + outcome.kernel_counters + ")";
  }
  if (!outcome.pm_sampling.empty())
    writer.store().set_property(analysis::pm_sampling_property(info.id), outcome.pm_sampling);
  if (!outcome.kernel_counters.empty())
    writer.store().set_property(analysis::kernel_counters_property(info.id),
                                outcome.kernel_counters);
  return words;
}

}  // namespace fusionscope::lab::detail
