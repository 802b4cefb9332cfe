// The lab's hardware counters in the program: the counters library (CUPTI range profiler and PM
// sampling).
#include <memory>
#include <utility>

#include "fusionscope/lab/hardware_counters.h"

namespace fusionscope::lab {
namespace {

class CuptiHardwareCounters final : public HardwareCounters {
 public:
  counters::CounterPassResult kernel_pass(Executor& executor, const kernels::MlpConfig& config,
                                          kernels::Variant variant,
                                          const kernels::RunOptions& timing) override {
    // User replay: the runner repeats the forward pass once per hardware pass, and the L2 is
    // swept before each kernel, so each kernel's DRAM bytes are its own as Nsight Compute counts
    // them (CUPTI's kernel replay would leave its memory save and restore dirty in the L2).
    counters::CounterPassOptions pass_options;
    pass_options.device = timing.device;
    pass_options.replay = counters::ReplayMode::kUser;
    pass_options.flush_l2 = true;
    counters::KernelCounterSession session(pass_options);
    const counters::CounterStatus begun = session.begin();
    if (!begun.ok()) return session.end();
    counters::CounterPassResult pass;
    kernels::RunOptions o = timing;
    // Warm-up launches run unprofiled (cuBLASLt picks and caches its kernels there); each timed
    // iteration is one pass, launched as the timing pass launched it, on one input set so that
    // every pass gives the kernels the same data.
    o.warmup_iterations = 2;
    o.timed_iterations = static_cast<int>(session.passes());
    o.input_sets = 1;
    o.use_graph = false;
    o.check = false;
    o.nvtx = false;
    o.before_launch = [&session](void* stream) { session.before_kernel(stream); };
    o.on_progress = [&](const kernels::RunProgress& p) {
      if (p.phase == kernels::RunProgress::Phase::kTimed) {
        session.begin_pass();
      } else if (session.active() && (p.phase == kernels::RunProgress::Phase::kCheck ||
                                      p.phase == kernels::RunProgress::Phase::kDone)) {
        pass = session.end();
      }
    };
    kernels::RunResult r;
    try {
      r = executor.execute(config, variant, o);
    } catch (const std::exception& e) {
      r.ok = false;
      r.error = e.what();
    }
    if (session.active()) pass = session.end();
    if (!r.ok || r.cancelled) {
      pass.status = {counters::CounterAvailability::kFailed,
                     "the counters pass's run did not complete: " +
                         (r.error.empty() ? std::string("cancelled") : r.error)};
      pass.kernels.clear();
    }
    return pass;
  }

  counters::CounterStatus start_sampling(int device, uint64_t interval_ns) override {
    counters::PmSamplingOptions o;
    o.device = device;
    o.interval_ns = interval_ns;
    sampler_ = std::make_unique<counters::PmSampler>(std::move(o));
    const counters::CounterStatus s = sampler_->start();
    if (!s.ok()) sampler_.reset();
    return s;
  }

  counters::PmSamplingResult stop_sampling() override {
    counters::PmSamplingResult r;
    if (!sampler_) {
      r.status = {counters::CounterAvailability::kFailed, "sampling was not started"};
      return r;
    }
    r = sampler_->stop();
    sampler_.reset();
    return r;
  }

 private:
  std::unique_ptr<counters::PmSampler> sampler_;
};

}  // namespace

std::unique_ptr<HardwareCounters> make_cupti_hardware_counters() {
  return std::make_unique<CuptiHardwareCounters>();
}

}  // namespace fusionscope::lab
