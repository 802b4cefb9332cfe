// Two runs side by side (typically the unfused and a fused variant of one configuration): totals
// and speedups, and which kernels each op became, in the manner of a trace diff: ops in both runs
// with their kernels and times, ops only in A, ops only in B.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fusionscope/analysis/stats.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

struct KernelGroup {
  std::string name;  // as recorded
  uint64_t count = 0;
  int64_t total_ns = 0;
};

// kFused: a row of fusion_aware_ops() (op_fusion.h): ops of A done by differently named ops of B.
enum class Presence { kBoth, kOnlyA, kOnlyB, kFused };

struct OpDiff {
  std::string op;  // "" = kernels outside any op range
  Presence presence = Presence::kBoth;
  std::vector<KernelGroup> a;  // kernels of this op in run A, in order of first appearance
  std::vector<KernelGroup> b;
  int64_t a_total_ns = 0;
  int64_t b_total_ns = 0;
  uint64_t a_count = 0;
  uint64_t b_count = 0;
  // kFused rows only: the ops of each run the row stands for, in order of appearance.
  std::vector<std::string> a_ops;
  std::vector<std::string> b_ops;
};

// Kernel times are those of the timed iterations when a run tells them apart (see stats.h).
struct RunComparison {
  RunSummary a;
  RunSummary b;
  // A's time over B's (> 1: B is faster), per iteration when both runs know their iterations.
  // Empty when B's time is zero.
  std::optional<double> kernel_time_speedup;
  std::optional<double> wall_speedup;
  std::vector<OpDiff> ops;  // in order of first appearance in A, then B's own ops
};

RunComparison compare_runs(const storage::RunData& a, const storage::RunData& b);

// Where a run's timeline starts when runs are drawn on one time scale.
enum class Alignment { kRunStart, kFirstKernel, kIteration };

// Start times of the run's timed iterations: the runner's ranges "iteration N" with N >= warmup,
// in order of N; for runs without them, the depth-0 ranges whose name, without trailing digits
// and '#' ("ProfilerStep#3" -> "ProfilerStep"), repeats most often (at least twice). Empty if none.
std::vector<int64_t> iteration_starts(const storage::RunData& run);

// The time to align at: the run's start, its first kernel's start, or the start of the first
// kernel of timed iteration `iteration` (0-based; falls back to the first kernel when the run has
// no such iteration, and to the run's start when it has no kernels).
int64_t alignment_origin(const storage::RunData& run, Alignment alignment, int iteration = 0);

}  // namespace fusionscope::analysis
