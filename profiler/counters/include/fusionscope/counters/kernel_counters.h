// Hardware counters per kernel with the CUPTI range profiler: auto ranges (one range per kernel
// launch, in launch order), replayed once per hardware pass the metrics need, either by CUPTI
// (kernel replay: it saves device memory and restores it between passes) or by the caller (user
// replay: the workload runs once per pass).
//
// DRAM bytes as Nsight Compute counts them (`--cache-control all`) need an L2 without others'
// dirty lines at each kernel's start: with `flush_l2` the session sweeps the L2 before each
// kernel (before_kernel()) and drops the sweeps' own ranges. That holds in user replay, and in
// kernel replay only for a one-pass metric set (dram_kernel_metrics()): with several passes
// CUPTI's save and restore dirty the L2 again (docs/counters.md).
//
// It is a separate pass from the timing pass: kernels are serialised and replayed, so their
// durations here are not the timed ones. Match the two by launch order (store_records.h).
// Run it with no CUPTI activity tracing in flight and without CUDA graphs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fusionscope/counters/l2_flush.h"
#include "fusionscope/counters/status.h"

namespace fusionscope::counters {

// The per-kernel metrics collected by default (metric_names.h), in this order. On a chip that
// lacks some of them they are left out and listed in CounterPassResult::skipped_metrics.
const std::vector<std::string>& default_kernel_metrics();
// DRAM read and write bytes, L2 traffic, DRAM throughput and duration: one hardware pass on GH100,
// so kernel replay needs no memory save and restore (for programs that run only once).
const std::vector<std::string>& dram_kernel_metrics();

// Who replays the workload once per hardware pass the metric set needs.
enum class ReplayMode : uint8_t {
  // CUPTI replays each kernel, saving device memory before and restoring it between passes, so
  // the workload runs once. The save and restore leave dirty lines in the L2 that the kernel
  // then writes back, so DRAM writes read high (docs/counters.md); for programs that cannot be
  // run again.
  kKernel,
  // The caller runs the workload once per pass between begin_pass() and end_pass(): it must
  // launch the same kernels each time and give them the same inputs.
  kUser,
};

struct CounterPassOptions {
  std::vector<std::string> metrics = default_kernel_metrics();
  int device = 0;
  ReplayMode replay = ReplayMode::kKernel;
  // Sweep the L2 before each kernel the caller announces with before_kernel() (l2_flush.h), so
  // each kernel's DRAM traffic is its own, as under Nsight Compute's cache control.
  bool flush_l2 = false;
  // What each sweep leaves in the L2: its clean lines, or nothing (kEmpty, as after Nsight
  // Compute's invalidation; the same bytes on an H100, docs/counters.md).
  L2SweepEnd l2_sweep_end = L2SweepEnd::kCleanLines;
  // The sweep buffer's size in L2 sizes.
  double l2_sweep_multiple = 3.0;
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
  ReplayMode replay = ReplayMode::kKernel;
  size_t l2_sweeps = 0;                 // L2 sweeps per pass whose ranges were dropped (flush_l2)
  size_t l2_bytes = 0;                  // the device's L2 size (0 when not read)
  std::vector<KernelCounters> kernels;  // in launch order

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

  // Creates the context if needed, checks support and privileges, configures the range profiler
  // and, in kernel replay, starts it. On failure nothing stays enabled and the status says why.
  CounterStatus begin();
  bool active() const;
  // Hardware passes the metric set needs (after a successful begin()).
  size_t passes() const;

  // User replay: begin_pass() before one run of the workload, end_pass() after it (it waits for
  // the device). begin_pass() returns false once every pass has run.
  bool begin_pass();
  void end_pass();
  bool all_passes_done() const;

  // Call just before each kernel launch of the workload (e.g. from the runner's before_launch
  // hook), on the thread that launches it, with its stream (a cudaStream_t). With flush_l2 it
  // enqueues the L2 sweep there while profiling runs; otherwise it does nothing.
  void before_kernel(void* stream);
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

// Removes the ranges of `sweeps` L2 sweeps (each read a buffer of `buffer_bytes`) from a pass, as
// end() does with flush_l2; for callers that sweep by themselves (e.g. from a launch callback in
// kernel replay). Throws std::runtime_error when they cannot be told from the workload's kernels.
void drop_l2_sweeps(CounterPassResult& result, size_t sweeps, size_t buffer_bytes);

// begin(), workload(), end(); in user replay the workload runs once per pass. An exception from
// the workload ends the session and propagates.
CounterPassResult run_counter_pass(const std::function<void()>& workload,
                                   const CounterPassOptions& options = {});

}  // namespace fusionscope::counters
