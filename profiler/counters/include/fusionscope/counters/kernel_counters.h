// Hardware counters per kernel with the CUPTI range profiler: auto ranges (one range per kernel
// launch, in launch order) and kernel replay (CUPTI saves device memory, replays each kernel once
// per counter pass and restores it), so a workload runs once from the caller's point of view.
//
// It is a separate pass from the timing pass: kernels are serialised and replayed, so their
// durations here are not the timed ones. Match the two by launch order (match.h).
// Run it with no CUPTI activity tracing in flight and without CUDA graphs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fusionscope/counters/status.h"

namespace fusionscope::counters {

// The per-kernel metrics collected by default (metric_names.h), in this order. On a chip that
// lacks some of them they are left out and listed in CounterPassResult::skipped_metrics.
const std::vector<std::string>& default_kernel_metrics();

struct CounterPassOptions {
  std::vector<std::string> metrics = default_kernel_metrics();
  int device = 0;
  // Kernels profiled at most; later launches are not profiled (CUPTI does not count them, so a
  // result that reaches the limit says so: CounterPassResult::limit_reached).
  size_t max_kernels = 1024;
};

// One kernel launch profiled: its range (auto ranges are numbered from 0 by CUPTI) and values.
struct KernelCounters {
  size_t index = 0;            // launch order within the pass, from 0
  std::string range_name;      // CUPTI's name of the range
  std::vector<double> values;  // aligned with CounterPassResult::metrics
};

struct CounterPassResult {
  CounterStatus status;
  std::string chip;                          // e.g. "GH100"
  std::vector<std::string> metrics;          // the metrics collected, in value order
  std::vector<std::string> units;            // CUPTI's unit of each metric ("byte", "percent"...)
  std::vector<std::string> skipped_metrics;  // asked for but not available on this chip
  size_t passes = 0;                         // replays per kernel the metric set needed
  size_t dropped_ranges = 0;                 // ranges CUPTI reports it could not store
  bool limit_reached = false;                // max_kernels were profiled: later ones may be missing
  std::vector<KernelCounters> kernels;       // in launch order

  // The value of `metric` for kernel i; NaN when the metric was not collected.
  double value(size_t kernel, std::string_view metric) const;
};

// Counters over the kernels the workload launches on the current thread's device. begin() and
// end() bracket the launches; both must be called on a thread whose current CUDA context is the
// workload's (the runner's progress callback is such a place).
class KernelCounterSession {
 public:
  explicit KernelCounterSession(CounterPassOptions options = {});
  ~KernelCounterSession();  // ends a session still open, discarding its data
  KernelCounterSession(const KernelCounterSession&) = delete;
  KernelCounterSession& operator=(const KernelCounterSession&) = delete;

  // Creates the context if needed, checks support and privileges, configures and starts the
  // range profiler. On failure nothing stays enabled and the status says why.
  CounterStatus begin();
  bool active() const;
  // Stops, decodes and evaluates. Returns the begin() status when begin() failed.
  CounterPassResult end();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Host-only, no GPU needed: which of `metrics` the chip (CUPTI's name, e.g. "GH100", "GA100")
// lacks, and how many hardware passes the rest need, for the range profiler or PM sampling.
struct ChipMetricCheck {
  CounterStatus status;
  std::vector<std::string> missing;
  size_t passes = 0;
};
ChipMetricCheck check_metrics_for_chip(const std::string& chip,
                                       const std::vector<std::string>& metrics,
                                       bool pm_sampling = false);

// Appends the derived metrics (metric_names.h, "fusionscope/...") to the result: DRAM bytes,
// tensor and fp32 FLOPs, bandwidth, FLOP rate, arithmetic intensity. end() calls it;
// docs/counters.md gives the formulas. A derived metric whose inputs are missing is left out.
void add_derived_metrics(CounterPassResult& result);

// begin(), workload(), end(). An exception from the workload ends the session and propagates.
CounterPassResult run_counter_pass(const std::function<void()>& workload,
                                   const CounterPassOptions& options = {});

}  // namespace fusionscope::counters
