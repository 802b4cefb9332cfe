// Hardware counters for the lab's runs (docs/bandwidth.md). Two optional passes per run:
//  - a counters pass after the timed pass: the CUPTI range profiler over the forward pass, run
//    once per hardware pass (user replay, its own run of the configuration, not timed) with the
//    L2 swept before each kernel so DRAM bytes are counted as Nsight Compute counts them; its
//    metrics are stored keyed by the correlation ids of the kernels of the run's first timed
//    iteration, matched by launch order. Tracing is paused then (the tracer's run has ended).
//  - PM sampling during the run itself, from the first warm-up iteration to the end of the timed
//    ones: DRAM read/write throughput and SM/tensor activity on the CUPTI clock.
// The program uses CUPTI; tests use stand-ins.
#pragma once

#include <cstdint>
#include <memory>

#include "fusionscope/counters/kernel_counters.h"
#include "fusionscope/counters/pm_sampler.h"
#include "fusionscope/lab/lab.h"

namespace fusionscope::lab {

class HardwareCounters {
 public:
  virtual ~HardwareCounters() = default;
  // Runs the forward pass of `config` in `variant` through `executor` with the range profiler
  // on, once per hardware pass. `options` are those of the timing pass (device, seed, cancel);
  // the pass sets its own iterations, one input copy, no graph and no check. Failures come back
  // in the result's status.
  virtual counters::CounterPassResult kernel_pass(Executor& executor,
                                                  const kernels::MlpConfig& config,
                                                  kernels::Variant variant,
                                                  const kernels::RunOptions& options) = 0;
  // PM sampling of the whole device until stop_sampling().
  virtual counters::CounterStatus start_sampling(int device, uint64_t interval_ns) = 0;
  virtual counters::PmSamplingResult stop_sampling() = 0;
};

std::unique_ptr<HardwareCounters> make_cupti_hardware_counters();

}  // namespace fusionscope::lab
