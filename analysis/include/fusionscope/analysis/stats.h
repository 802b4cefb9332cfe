// Per-run figures: totals, and kernel time grouped by kernel name and by op.
//
// Runs captured by the lab hold warm-up and timed iterations alike: the runner wraps each in an
// NVTX range "iteration N", N counting from 0 over both (see kernels/runner.h). Per-iteration
// figures count only the kernels launched from the timed ones (N >= RunInfo::warmup); runs
// without such ranges (imports) count every kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

// Which kernels ran in timed iterations: launched (by their correlation id) from an API call inside
// a range "iteration N" with N >= warmup on the same thread. Empty when the run has no such
// ranges, meaning every kernel counts.
std::vector<bool> timed_kernel_mask(const storage::RunData& run);

struct RunSummary {
  uint64_t kernels = 0;
  uint64_t memops = 0;
  uint64_t api_calls = 0;
  uint64_t ranges = 0;
  uint64_t launches = 0;       // distinct correlation ids among kernels: one per launch call
  int64_t kernel_time_ns = 0;  // sum of kernel durations (overlap counted twice)
  int64_t memop_time_ns = 0;
  int64_t gpu_busy_ns = 0;  // time at least one kernel or memop ran, on any stream; with a
                            // timed split, at least one timed kernel
  int64_t span_ns = 0;      // end_ns - begin_ns of the run
  int64_t wall_ns = 0;      // the run's host wall time; the span when none was recorded
  bool wall_is_span = false;
  int iterations = 0;          // RunInfo::iterations; 0 = unknown
  bool timed_split = false;    // warm-up kernels were told apart (see timed_kernel_mask)
  uint64_t timed_kernels = 0;  // kernels of the timed iterations (all when !timed_split)
  uint64_t timed_launches = 0;
  int64_t timed_kernel_time_ns = 0;
  // Per timed iteration (timed kernels over iterations) when iterations are known, else totals.
  double kernel_time_per_iteration_ns() const;
  double wall_per_iteration_ns() const;
  double kernels_per_iteration() const;
};

RunSummary summarize(const storage::RunData& run);

// Kernel time grouped by kernel name (KernelStat::key is the name) or by op (the op).
struct KernelStat {
  storage::StringId key = storage::kNoString;
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double mean_ns = 0;
  double percent = 0;     // of the run's kernel time
  uint32_t distinct = 0;  // by op: how many different kernels; by name: how many ops
};

// Both come back sorted by total time, largest first. With a mask (timed_kernel_mask), only the
// kernels it marks count; an empty mask counts every kernel.
std::vector<KernelStat> kernel_stats(const storage::RunData& run,
                                     const std::vector<bool>& mask = {});
std::vector<KernelStat> op_stats(const storage::RunData& run, const std::vector<bool>& mask = {});

enum class StatColumn { kKey, kCount, kTotal, kMean, kMin, kMax, kPercent };
// Stable sort; kKey compares the strings the keys name in `run`.
void sort_stats(std::vector<KernelStat>& stats, StatColumn column, bool ascending,
                const storage::RunData& run);

}  // namespace fusionscope::analysis
