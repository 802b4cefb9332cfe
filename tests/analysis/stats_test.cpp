#include "fusionscope/analysis/stats.h"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "sample/run_builder.h"

namespace fusionscope::analysis {
namespace {

storage::RunData eager_like() {
  storage::RunInfo info;
  info.iterations = 2;
  info.wall_ns = 1000;
  sample::RunBuilder b(info);
  // Two iterations of gemm (30 ns) + gelu (10/20 ns); a memcpy overlapping a kernel on stream 9.
  b.kernel(0, 30, "gemm", "gate", 7, 1);
  b.kernel(30, 40, "gelu", "act", 7, 2);
  b.kernel(100, 130, "gemm", "gate", 7, 3);
  b.kernel(130, 150, "gelu", "act", 7, 4);
  b.memop(120, 140, storage::MemopKind::kMemcpy, 64, 9, 5);
  b.api_call(0, 5, "cudaLaunchKernel", 1, 1);
  return b.finish();
}

TEST(Summary, TotalsAndPerIteration) {
  const RunSummary s = summarize(eager_like());
  EXPECT_EQ(s.kernels, 4u);
  EXPECT_EQ(s.memops, 1u);
  EXPECT_EQ(s.launches, 4u);
  EXPECT_EQ(s.kernel_time_ns, 30 + 10 + 30 + 20);
  EXPECT_EQ(s.memop_time_ns, 20);
  EXPECT_EQ(s.gpu_busy_ns, 40 + 50);  // [0,40) and [100,150): the memcpy hides under kernels
  EXPECT_EQ(s.span_ns, 150);
  EXPECT_EQ(s.wall_ns, 1000);
  EXPECT_FALSE(s.wall_is_span);
  EXPECT_DOUBLE_EQ(s.kernel_time_per_iteration_ns(), 45.0);
  EXPECT_DOUBLE_EQ(s.kernels_per_iteration(), 2.0);
}

TEST(Summary, GraphLaunchCountsOnceAndWallFallsBackToSpan) {
  sample::RunBuilder b;  // no iterations, no wall time
  b.kernel(0, 10, "a", "", 7, 42);
  b.kernel(10, 20, "b", "", 7, 42);
  b.kernel(20, 30, "c", "", 7, 0);  // unknown correlation: its own launch
  const RunSummary s = summarize(b.finish());
  EXPECT_EQ(s.launches, 2u);
  EXPECT_TRUE(s.wall_is_span);
  EXPECT_EQ(s.wall_ns, 30);
  EXPECT_DOUBLE_EQ(s.kernel_time_per_iteration_ns(), 30.0);  // unknown iterations: totals
}

TEST(Summary, EmptyRun) {
  sample::RunBuilder b;
  const RunSummary s = summarize(b.finish());
  EXPECT_EQ(s.kernels, 0u);
  EXPECT_EQ(s.gpu_busy_ns, 0);
  EXPECT_EQ(s.wall_ns, 0);
  EXPECT_TRUE(kernel_stats(b.finish()).empty());
}

TEST(KernelStats, GroupedByNameLargestFirst) {
  const storage::RunData run = eager_like();
  const auto stats = kernel_stats(run);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(run.str(stats[0].key), "gemm");
  EXPECT_EQ(stats[0].count, 2u);
  EXPECT_EQ(stats[0].total_ns, 60);
  EXPECT_EQ(stats[0].min_ns, 30);
  EXPECT_EQ(stats[0].max_ns, 30);
  EXPECT_DOUBLE_EQ(stats[0].mean_ns, 30.0);
  EXPECT_NEAR(stats[0].percent, 100.0 * 60 / 90, 1e-9);
  EXPECT_EQ(run.str(stats[1].key), "gelu");
  EXPECT_EQ(stats[1].min_ns, 10);
  EXPECT_EQ(stats[1].max_ns, 20);
  EXPECT_DOUBLE_EQ(stats[1].mean_ns, 15.0);
  EXPECT_NEAR(stats[0].percent + stats[1].percent, 100.0, 1e-9);
}

TEST(OpStats, GroupedByOpCountingDistinctKernels) {
  sample::RunBuilder b;
  b.kernel(0, 10, "gemm_a", "gate", 7, 1);
  b.kernel(10, 30, "gemm_b", "gate", 7, 2);
  b.kernel(30, 35, "relu", "", 7, 3);
  const storage::RunData run = b.finish();
  const auto stats = op_stats(run);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(run.str(stats[0].key), "gate");
  EXPECT_EQ(stats[0].count, 2u);
  EXPECT_EQ(stats[0].distinct, 2u);
  EXPECT_EQ(stats[1].key, storage::kNoString);  // kernels outside any op
}

TEST(SortStats, EveryColumnBothWays) {
  const storage::RunData run = eager_like();
  auto stats = kernel_stats(run);
  sort_stats(stats, StatColumn::kKey, true, run);
  EXPECT_EQ(run.str(stats[0].key), "gelu");
  sort_stats(stats, StatColumn::kKey, false, run);
  EXPECT_EQ(run.str(stats[0].key), "gemm");
  sort_stats(stats, StatColumn::kMax, true, run);
  EXPECT_EQ(run.str(stats[0].key), "gelu");  // 20 < 30
  sort_stats(stats, StatColumn::kMin, false, run);
  EXPECT_EQ(run.str(stats[0].key), "gemm");
  sort_stats(stats, StatColumn::kPercent, true, run);
  EXPECT_EQ(run.str(stats[0].key), "gelu");
  sort_stats(stats, StatColumn::kTotal, false, run);
  EXPECT_EQ(run.str(stats[0].key), "gemm");
  sort_stats(stats, StatColumn::kMean, true, run);
  EXPECT_EQ(run.str(stats[0].key), "gelu");
  // Equal counts keep their order (stable).
  sort_stats(stats, StatColumn::kCount, true, run);
  EXPECT_EQ(run.str(stats[0].key), "gelu");
}

}  // namespace
}  // namespace fusionscope::analysis

namespace fusionscope::analysis {
namespace {

// The runner's layout: "iteration N" over warm-up and timed passes, launches inside them.
storage::RunData with_warmup(int warmup, int timed) {
  storage::RunInfo info;
  info.warmup = warmup;
  info.iterations = timed;
  sample::RunBuilder b(info);
  uint32_t corr = 100;
  for (int n = 0; n < warmup + timed; ++n) {
    const int64_t t = n * 1000;
    b.range(t, t + 100, "iteration " + std::to_string(n), 1);
    b.api_call(t + 10, t + 20, "cudaLaunchKernel", 1, ++corr);
    // The GPU runs behind the CPU: the kernel starts after its iteration range has ended.
    b.kernel(t + 500, t + 500 + (n < warmup ? 300 : 100), "k", "op", 7, corr);
  }
  b.kernel(90'000, 90'010, "setup", "", 7, 0);  // launched outside any iteration
  return b.finish();
}

TEST(TimedIterations, WarmupKernelsAreLeftOut) {
  const storage::RunData run = with_warmup(2, 3);
  const std::vector<bool> mask = timed_kernel_mask(run);
  ASSERT_EQ(mask.size(), run.kernels.size());
  EXPECT_EQ(std::count(mask.begin(), mask.end(), true), 3);
  const RunSummary s = summarize(run);
  EXPECT_TRUE(s.timed_split);
  EXPECT_EQ(s.kernels, 6u);
  EXPECT_EQ(s.timed_kernels, 3u);
  EXPECT_EQ(s.timed_launches, 3u);
  EXPECT_EQ(s.timed_kernel_time_ns, 300);
  EXPECT_EQ(s.gpu_busy_ns, 300);  // timed kernels only
  EXPECT_DOUBLE_EQ(s.kernel_time_per_iteration_ns(), 100.0);
  EXPECT_DOUBLE_EQ(s.kernels_per_iteration(), 1.0);
  const auto stats = kernel_stats(run, mask);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].count, 3u);
  EXPECT_EQ(stats[0].max_ns, 100);
  EXPECT_EQ(kernel_stats(run).size(), 2u);  // no mask: the setup kernel too
}

TEST(TimedIterations, RunsWithoutIterationRangesCountEverything) {
  sample::RunBuilder b;
  b.range(0, 100, "mlp_fwd", 1, storage::RangeKind::kUserAnnotation);
  b.kernel(10, 20, "k", "", 7, 1);
  const storage::RunData run = b.finish();
  EXPECT_TRUE(timed_kernel_mask(run).empty());
  const RunSummary s = summarize(run);
  EXPECT_FALSE(s.timed_split);
  EXPECT_EQ(s.timed_kernels, 1u);
}

// PyTorch's profiler marks each step "ProfilerStep#N" (numbers need not start at 0): an imported
// trace's steps are its iterations, none of them warm-up unless the run says so.
TEST(TimedIterations, ProfilerStepsOfAnImportedTraceAreIterations) {
  storage::RunInfo info;
  info.iterations = 2;
  sample::RunBuilder b(info);
  for (int n = 0; n < 2; ++n) {
    const int64_t t = n * 1000;
    b.range(t, t + 400, "ProfilerStep#" + std::to_string(n + 2), 1,
            storage::RangeKind::kUserAnnotation);
    b.api_call(t + 10, t + 20, "cudaLaunchKernel", 1, static_cast<uint32_t>(10 + n));
    b.kernel(t + 30, t + 130, "k", "aten::mm", 7, static_cast<uint32_t>(10 + n));
  }
  b.kernel(5000, 5010, "outside", "", 7, 0);
  const storage::RunData run = b.finish();
  const std::vector<bool> mask = timed_kernel_mask(run);
  ASSERT_EQ(mask.size(), 3u);
  EXPECT_EQ(std::count(mask.begin(), mask.end(), true), 2);
  const RunSummary s = summarize(run);
  EXPECT_TRUE(s.timed_split);
  EXPECT_DOUBLE_EQ(s.kernel_time_per_iteration_ns(), 100.0);
}

TEST(TimedIterations, NamesThatOnlyLookLikeIterations) {
  sample::RunBuilder b;
  b.range(0, 100, "iteration", 1);
  b.range(200, 300, "iteration 1b", 1);
  b.range(400, 500, "iterations 3", 1);
  b.range(600, 700, "ProfilerStep#", 1);
  b.range(800, 900, "ProfilerStep#2x", 1);
  b.kernel(10, 20, "k", "", 7, 1);
  EXPECT_TRUE(timed_kernel_mask(b.finish()).empty());
}

}  // namespace
}  // namespace fusionscope::analysis
