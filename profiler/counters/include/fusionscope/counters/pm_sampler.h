// Counters over time with CUPTI PM sampling: the GPU samples a few counters (DRAM read and write
// throughput, SM and tensor-pipe activity) every `interval_ns` into a hardware buffer, and a
// decode thread drains it while the workload runs. Sampling watches the whole device, not one
// context, and neither replays nor serialises kernels, so it can run during the timing pass.
//
// Sample times come on the CUPTI activity clock (cuptiGetTimestamp(), the clock of kernel
// records): on the H100 busy samples line up with kernel records within a few microseconds
// (docs/counters.md). The sampler checks this on every run with the first sample.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fusionscope/counters/status.h"

namespace fusionscope::counters {

// The metrics sampled by default (metric_names.h, kSample*), one hardware pass on Hopper.
const std::vector<std::string>& default_sample_metrics();

struct PmSamplingOptions {
  std::vector<std::string> metrics = default_sample_metrics();
  int device = 0;
  uint64_t interval_ns = 5000;  // one sample every 5 us
  // GPU memory the samples are written to. On the H100 (CUPTI 13.0) a sample takes ~24 KB of it
  // and draining it does not always keep up at 5 us: 512 MiB lasted ~50-110 ms, 2 GiB ~200 ms
  // before CUPTI reported an overflow (docs/counters.md). Samples before that are complete.
  size_t hardware_buffer_bytes = size_t{2} << 30;
  uint32_t samples_per_decode = 10000;  // samples per host counter-data image
  uint32_t decode_period_ms = 2;        // how often the decode thread drains the buffer
  size_t max_samples = 4'000'000;       // samples kept in all; later ones are dropped
  // CUPTI activity clock minus the GPU global timer (measure_gpu_clock_offset()), in case samples
  // come on the global timer on some driver: used only when the first sample fits it and not the
  // CUPTI clock. Measure it before kernel tracing starts (it launches probe kernels).
  std::optional<int64_t> clock_offset_ns;
};

// CUPTI activity clock minus the GPU global timer, bracketed by host reads of cuptiGetTimestamp()
// around tiny kernels that read %globaltimer. Launches kernels: call it outside a traced region.
struct ClockOffset {
  bool ok = false;
  std::string error;
  int64_t offset_ns = 0;       // middle of the bracket
  int64_t uncertainty_ns = 0;  // half its width
};
ClockOffset measure_gpu_clock_offset(int device = 0, int trials = 32);

struct PmSample {
  int64_t start_ns = 0;  // CUPTI activity clock
  int64_t end_ns = 0;
  std::vector<double> values;  // aligned with PmSamplingResult::metrics
};

struct PmSamplingResult {
  CounterStatus status;
  std::string chip;
  std::vector<std::string> metrics;
  std::vector<std::string> units;
  std::vector<std::string> skipped_metrics;  // asked for but not available on this chip
  std::vector<PmSample> samples;             // in time order
  // The GPU buffer filled before it was drained: sampling stopped there, and the series ends at
  // the last sample (status stays ok; use a longer interval or a larger hardware buffer).
  bool hardware_overflow = false;
  size_t dropped_samples = 0;  // beyond max_samples
  // How sample times were put on the CUPTI clock: the first sample is checked against host reads
  // of the CUPTI clock around the start of sampling. "CUPTI clock" (nothing added), "GPU global
  // timer + offset" (clock_offset_ns added), or "CUPTI clock (unverified...)".
  std::string clock_mapping;
  int64_t clock_offset_ns = 0;  // as applied to every sample
  uint64_t interval_ns = 0;

  // Index of `metric` in metrics, or -1.
  int metric_index(std::string_view metric) const;
};

// Samples from start() to stop(). Call both on threads where the CUDA runtime may be used; the
// workload may run on any thread in between.
class PmSampler {
 public:
  explicit PmSampler(PmSamplingOptions options = {});
  ~PmSampler();  // stops a sampler still running, discarding its data
  PmSampler(const PmSampler&) = delete;
  PmSampler& operator=(const PmSampler&) = delete;

  CounterStatus start();
  bool running() const;
  PmSamplingResult stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// start(), workload(), synchronise the device, stop(). An exception from the workload stops the
// sampler and propagates.
PmSamplingResult sample_during(const std::function<void()>& workload,
                               const PmSamplingOptions& options = {});

}  // namespace fusionscope::counters
