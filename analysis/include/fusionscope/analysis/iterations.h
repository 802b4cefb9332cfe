// A run's iterations, one by one: the runner's ranges "iteration N" (warm-up ones told apart by
// RunInfo::warmup), or for traces without them the top-level range that repeats most
// ("ProfilerStep#N"), as iteration_starts() (compare.h) picks them. Each iteration gets the
// kernels launched from inside it (their API call lies in the range, on its thread) and the span
// of its work on the GPU, so that views can open on the timed iterations and statistics can give
// per-iteration figures (time per iteration, its spread, the outliers).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

struct Iteration {
  long number = 0;                     // the runner's N, or the position among the repeated ranges
  bool timed = true;                   // false for the runner's warm-up iterations
  int64_t cpu_begin = 0, cpu_end = 0;  // the range
  int64_t gpu_begin = 0, gpu_end = 0;  // its kernels' first start and last end (0, 0: none)
  uint32_t kernels = 0;
  int64_t kernel_ns = 0;  // the sum of its kernels' durations
  bool has_gpu() const { return kernels > 0; }
  int64_t begin() const { return has_gpu() ? std::min(cpu_begin, gpu_begin) : cpu_begin; }
  int64_t end() const { return has_gpu() ? std::max(cpu_end, gpu_end) : cpu_end; }
  // First kernel start to last kernel end: the time the GPU took for the iteration.
  int64_t gpu_span() const { return gpu_end - gpu_begin; }
};

struct RunIterations {
  std::vector<Iteration> iterations;  // in order of start
  std::vector<int32_t> of_kernel;     // per kernel: its position in `iterations`, or -1
  bool empty() const { return iterations.empty(); }
};

RunIterations run_iterations(const storage::RunData& run);

struct TimeSpan {
  int64_t begin = 0, end = 0;
};

// From the start of the first timed iteration to the end of the last one, CPU and GPU work
// alike; empty without timed iterations.
std::optional<TimeSpan> timed_span(const RunIterations& iterations);

// Spread of one figure over the timed iterations: mean, median, min, max, standard deviation,
// and the iterations far from the median (more than 3 median absolute deviations, and more than
// 5% away), by position in RunIterations::iterations.
struct IterationSpread {
  size_t count = 0;
  double mean = 0, median = 0, min = 0, max = 0, stddev = 0;
  std::vector<size_t> outliers;
};

enum class IterationFigure { kGpuSpan, kKernelTime };
IterationSpread iteration_spread(const RunIterations& iterations, IterationFigure figure);

double figure_of(const Iteration& it, IterationFigure figure);

}  // namespace fusionscope::analysis
