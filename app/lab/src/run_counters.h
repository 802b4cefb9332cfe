// The lab's hardware-counter work around one run (hardware_counters.h): PM sampling hooked into
// the runner's progress, then, once the run's trace has ended, the counters pass, its metrics
// matched to the first timed iteration's kernels, and both outcomes stored with the run as
// session properties (analysis/metrics_status.h) for the views to explain missing data.
#pragma once

#include <optional>
#include <string>

#include "fusionscope/counters/status.h"
#include "fusionscope/lab/capture_job.h"
#include "fusionscope/lab/hardware_counters.h"
#include "fusionscope/storage/run_writer.h"

namespace fusionscope::lab::detail {

// A refusal that will not change within a job (no permission, no support): later runs are not
// asked again and carry the same reason.
struct CounterRefusals {
  std::optional<counters::CounterStatus> kernels;
  std::optional<counters::CounterStatus> sampling;
};

class RunCounters {
 public:
  RunCounters(HardwareCounters* hardware, const CaptureJob& job, CounterRefusals& refusals);
  bool wanted() const { return job_.counters || job_.pm_sampling; }

  // Chains onto options.on_progress: sampling starts before the first warm-up iteration (at
  // setup when there is none), outside the timed loop; finish() stops it after the trace ends.
  void hook(kernels::RunOptions& options);

  // After the trace has ended and the run's row is written, before the run is committed. Stores
  // the samples, runs the
  // counters pass and stores its metrics, and records both outcomes in `outcome` and as session
  // properties. Returns a few words for the run's progress line ("" when nothing was asked).
  std::string finish(storage::RunWriter& writer, const storage::RunInfo& info, const RunSpec& spec,
                     Executor& executor, const kernels::RunOptions& timing, bool traced,
                     RunOutcome& outcome);

 private:
  void start_sampling();
  void stop_sampling();
  std::string store_samples(storage::RunWriter& writer, const storage::RunData* run,
                            size_t& stored);
  std::string counters_pass(storage::RunWriter& writer, const storage::RunInfo& info,
                            const storage::RunData& run, const RunSpec& spec, Executor& executor,
                            const kernels::RunOptions& timing, bool traced, size_t& stored);

  HardwareCounters* hardware_;
  const CaptureJob& job_;
  CounterRefusals& refusals_;
  bool sampling_ = false;
  bool sampling_done_ = false;
  std::optional<counters::CounterStatus> sampling_start_;
  std::optional<counters::PmSamplingResult> samples_;
};

}  // namespace fusionscope::lab::detail
