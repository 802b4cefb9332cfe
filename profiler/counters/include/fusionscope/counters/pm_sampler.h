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
// DRAM read and write bytes per second alone. Their samples decode about 3x faster than the
// default set's on an H100, so a 10 us series keeps up (docs/counters.md, "PM sampling").
const std::vector<std::string>& dram_sample_metrics();

enum class PmBufferMode : uint8_t {
  kKeepOldest,  // a full hardware buffer drops new samples (CUPTI reports an overflow)
  kKeepLatest,  // a full hardware buffer overwrites its oldest samples
};

struct PmSamplingOptions {
  std::vector<std::string> metrics = default_sample_metrics();
  int device = 0;
  uint64_t interval_ns = 5000;  // one sample every 5 us
  // GPU memory the samples are written to before the decode thread drains them (docs/counters.md
  // gives what it holds on the H100).
  size_t hardware_buffer_bytes = size_t{2} << 30;
  PmBufferMode buffer_mode = PmBufferMode::kKeepOldest;
  // Samples per host counter-data image (~15 KB each on the H100). A drained image more than half
  // full goes to evaluation, so that one decode rarely fills an image: CUPTI drops what did not
  // fit. Large enough for the backlog of a short run (at 5 us the default metrics decode ~5x
  // slower than they are sampled; 2000-sample images lost all but the first 10 ms of a 25 ms run).
  uint32_t samples_per_decode = 10000;
  uint32_t decode_period_ms = 1;  // how often the decode thread drains the buffer
  // stop() decodes what the hardware still holds within this long from its call (a decode starts
  // only when expected to end within it); the rest is reported lost.
  uint32_t stop_decode_budget_ms = 400;
  // Threads that turn decoded samples into values while sampling runs, so that stop() has only
  // the last images left. 0 = evaluate everything in stop(), on the caller's thread.
  uint32_t evaluate_threads = 4;
  size_t max_samples = 4'000'000;  // samples kept in all; later ones are dropped
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

// A stretch of time the series has no samples for although sampling ran: between two samples
// that do not follow each other, or from the last sample to the stop when samples were lost at the
// end. On the CUPTI clock, like the samples.
struct PmGap {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// Where the time of a sampling session went, for the docs and the benchmark.
struct PmSamplingTimes {
  double decode_s = 0;         // in cuptiPmSamplingDecodeData, on the decode thread
  double evaluate_s = 0;       // turning samples into values, summed over threads
  double stop_s = 0;           // the caller's wait in stop(), of which:
  double stop_join_s = 0;      //   the decode thread's decode in progress
  double stop_decode_s = 0;    //   what the hardware still held (within the budget)
  double stop_evaluate_s = 0;  //   the images still waiting for evaluation
  double stop_release_s = 0;   //   stopping and releasing CUPTI's sampler
  size_t images = 0;           // host images filled
  size_t decode_calls = 0;
  double decode_longest_s = 0;  // the longest one cuptiPmSamplingDecodeData call
};

struct PmSamplingResult {
  CounterStatus status;
  std::string chip;
  std::vector<std::string> metrics;
  std::vector<std::string> units;
  std::vector<std::string> skipped_metrics;  // asked for but not available on this chip
  std::vector<PmSample> samples;             // in time order
  // CUPTI reported that the GPU buffer filled before it was drained: samples were lost (`gaps`
  // says when; status stays ok).
  bool hardware_overflow = false;
  std::vector<PmGap> gaps;     // time without samples while sampling ran
  size_t dropped_samples = 0;  // beyond max_samples
  // How sample times were put on the CUPTI clock: the first sample is checked against host reads
  // of the CUPTI clock around the start of sampling. "CUPTI clock" (nothing added), "GPU global
  // timer + offset" (clock_offset_ns added), or "CUPTI clock (unverified...)".
  std::string clock_mapping;
  int64_t clock_offset_ns = 0;  // as applied to every sample
  uint64_t interval_ns = 0;
  int64_t started_ns = 0;  // CUPTI clock when sampling started and stopped
  int64_t stopped_ns = 0;
  PmSamplingTimes times;

  // Index of `metric` in metrics, or -1.
  int metric_index(std::string_view metric) const;
  // Sum of the gaps' lengths.
  int64_t lost_ns() const;
};

// The gaps of a series in time order: between samples that do not follow each other (each
// sample starts where the one before it ended, within half an interval), and from the last one
// to `stopped_ns` when that is more than a few intervals.
std::vector<PmGap> sample_gaps(const std::vector<PmSample>& samples, uint64_t interval_ns,
                               int64_t stopped_ns);

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
