#include "fusionscope/analysis/iterations.h"

#include <gtest/gtest.h>

#include "sample/run_builder.h"

namespace fusionscope::analysis {
namespace {

// The runner's layout: setup, then iterations 0..3 (0 and 1 warm-up), each launching two kernels
// that run on the GPU after the launch; a slow third timed iteration.
storage::RunData runner_run() {
  storage::RunInfo info;
  info.warmup = 2;
  info.iterations = 2;
  sample::RunBuilder b(info);
  b.api_call(0, 500, "cudaSetDevice", 1);
  uint32_t corr = 100;
  int64_t t = 1000;
  for (int n = 0; n < 4; ++n) {
    const int64_t len = n == 3 ? 300 : 100;
    b.range(t, t + 50, "iteration " + std::to_string(n), 1);
    b.api_call(t + 5, t + 10, "cudaLaunchKernel", 1, corr);
    b.kernel(t + 20, t + 20 + len, "k_a", "a", 7, corr++);
    b.api_call(t + 15, t + 20, "cudaLaunchKernel", 1, corr);
    b.kernel(t + 20 + len, t + 20 + 2 * len, "k_b", "b", 7, corr++);
    t += 1000;
  }
  b.kernel(9000, 9010, "k_outside", "", 7, 999);  // launch not recorded
  return b.finish();
}

TEST(Iterations, KernelsBelongToTheIterationThatLaunchedThem) {
  const storage::RunData run = runner_run();
  const RunIterations it = run_iterations(run);
  ASSERT_EQ(it.iterations.size(), 4u);
  EXPECT_FALSE(it.iterations[0].timed);
  EXPECT_FALSE(it.iterations[1].timed);
  EXPECT_TRUE(it.iterations[2].timed);
  EXPECT_TRUE(it.iterations[3].timed);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(it.iterations[i].number, static_cast<long>(i));
    EXPECT_EQ(it.iterations[i].kernels, 2u);
  }
  EXPECT_EQ(it.iterations[2].gpu_begin, 3020);
  EXPECT_EQ(it.iterations[2].gpu_end, 3220);
  EXPECT_EQ(it.iterations[3].kernel_ns, 600);
  ASSERT_EQ(it.of_kernel.size(), run.kernels.size());
  for (size_t k = 0; k < run.kernels.size(); ++k) {
    if (run.str(run.kernels[k].name) == "k_outside") {
      EXPECT_EQ(it.of_kernel[k], -1);
    } else {
      ASSERT_GE(it.of_kernel[k], 0);
      const Iteration& owner = it.iterations[static_cast<size_t>(it.of_kernel[k])];
      EXPECT_GE(run.kernels[k].start_ns, owner.gpu_begin);
      EXPECT_LE(run.kernels[k].end_ns, owner.gpu_end);
    }
  }
}

TEST(Iterations, TheTimedSpanLeavesOutSetupAndWarmUp) {
  const std::optional<TimeSpan> span = timed_span(run_iterations(runner_run()));
  ASSERT_TRUE(span.has_value());
  EXPECT_EQ(span->begin, 3000);      // iteration 2's range
  EXPECT_EQ(span->end, 4000 + 620);  // iteration 3's last kernel
}

TEST(Iterations, SpreadAndOutliers) {
  // Five timed iterations of 100 and one of 300 (GPU span): the slow one is the outlier.
  sample::RunBuilder b;
  uint32_t corr = 1;
  for (int n = 0; n < 6; ++n) {
    const int64_t t = n * 1000, len = n == 4 ? 300 : 100;
    b.range(t, t + 10, "ProfilerStep#" + std::to_string(n), 1);
    b.api_call(t + 1, t + 2, "cudaLaunchKernel", 1, corr);
    b.kernel(t + 5, t + 5 + len, "k", "", 7, corr++);
  }
  const RunIterations it = run_iterations(b.finish());
  ASSERT_EQ(it.iterations.size(), 6u);  // the repeated top-level range, all timed
  const IterationSpread s = iteration_spread(it, IterationFigure::kGpuSpan);
  EXPECT_EQ(s.count, 6u);
  EXPECT_DOUBLE_EQ(s.median, 100);
  EXPECT_DOUBLE_EQ(s.min, 100);
  EXPECT_DOUBLE_EQ(s.max, 300);
  EXPECT_NEAR(s.mean, 800.0 / 6, 1e-9);
  ASSERT_EQ(s.outliers.size(), 1u);
  EXPECT_EQ(s.outliers[0], 4u);
}

TEST(Iterations, ARunWithoutIterationsHasNone) {
  sample::RunBuilder b;
  b.range(0, 10, "setup", 1);
  b.kernel(0, 5, "k");
  const RunIterations it = run_iterations(b.finish());
  EXPECT_TRUE(it.empty());
  EXPECT_FALSE(timed_span(it).has_value());
  EXPECT_EQ(iteration_spread(it, IterationFigure::kKernelTime).count, 0u);
}

}  // namespace
}  // namespace fusionscope::analysis
