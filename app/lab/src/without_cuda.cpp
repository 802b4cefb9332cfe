// The lab in a build without CUDA (FUSIONSCOPE_CUDA=OFF): no device, nothing to run or trace, no
// counters, no program capture, no PyTorch variants. Every entry point says why
// (fusionscope::kBuiltWithoutCuda), so the Lab panel refuses to run with that reason, Capture a
// program fails with it, and a job that runs anyway fails each run with it.
#include "device_description.h"
#include "fusionscope/build_config.h"
#include "fusionscope/lab/hardware_counters.h"
#include "fusionscope/lab/lab.h"
#include "fusionscope/lab/lab_controller.h"
#include "fusionscope/lab/program_capture.h"
#include "fusionscope/lab/torch_variants.h"

static_assert(!FUSIONSCOPE_HAS_CUDA, "without_cuda.cpp belongs to builds without CUDA");

namespace fusionscope::lab {
namespace {

class NoExecutor final : public Executor {
 public:
  kernels::RunResult execute(const kernels::MlpConfig& config, kernels::Variant variant,
                             const kernels::RunOptions&) override {
    kernels::RunResult r;
    r.config = config;
    r.variant = variant;
    r.error = kBuiltWithoutCuda;
    return r;
  }
};

counters::CounterStatus no_counters() {
  return {counters::CounterAvailability::kNotSupported, kBuiltWithoutCuda};
}

class NoHardwareCounters final : public HardwareCounters {
 public:
  counters::CounterPassResult kernel_pass(Executor&, const kernels::MlpConfig&, kernels::Variant,
                                          const kernels::RunOptions&) override {
    counters::CounterPassResult r;
    r.status = no_counters();
    return r;
  }
  counters::CounterStatus start_sampling(int, uint64_t) override { return no_counters(); }
  counters::PmSamplingResult stop_sampling() override {
    counters::PmSamplingResult r;
    r.status = no_counters();
    return r;
  }
};

}  // namespace

std::unique_ptr<Executor> make_runner_executor() {
  return std::make_unique<NoExecutor>();
}

std::unique_ptr<Capture> make_cupti_capture(const profiler::TracerOptions&) {
  return make_no_capture(kBuiltWithoutCuda);
}

std::unique_ptr<HardwareCounters> make_cupti_hardware_counters() {
  return std::make_unique<NoHardwareCounters>();
}

DeviceFacts probe_device(int) {
  DeviceFacts f;
  f.reason = kBuiltWithoutCuda;
  return f;
}

bool describe_device(int, storage::SessionInfo&) {
  return false;
}

ProgramCaptureOutcome capture_program(storage::SessionStore&, const ProgramCaptureRequest&,
                                      const std::atomic<bool>*, const ProgramProgressCallback&) {
  ProgramCaptureOutcome out;
  out.error = kBuiltWithoutCuda;
  return out;
}

std::string torch_unavailable_reason() {
  return kBuiltWithoutCuda;
}

RunOutcome run_torch_variant(storage::SessionStore&, const RunSpec& spec, const CaptureJob&,
                             const Progress&, const ProgressCallback&, const std::atomic<bool>*) {
  RunOutcome outcome;  // nothing stored: the run could not start
  outcome.status = storage::RunStatus::kFailed;
  outcome.result.config = spec.config;
  outcome.result.variant = spec.variant;
  outcome.result.error = std::string(kernels::to_string(spec.variant)) + ": " + kBuiltWithoutCuda;
  return outcome;
}

}  // namespace fusionscope::lab
