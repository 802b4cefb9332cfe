#include "fusionscope/analysis/compare.h"

#include <gtest/gtest.h>

#include "sample/run_builder.h"
#include "sample/sample_session.h"

namespace fusionscope::analysis {
namespace {

// The GeGLU MLP per iteration: eager (gate, gelu, up, mul, down) against the pointwise fusion
// (gate, up, gelu_mul, down), with the reference kernel times in ns / 100.
storage::RunData geglu(bool fused, int iterations) {
  storage::RunInfo info;
  info.iterations = iterations;
  sample::RunBuilder b(info);
  int64_t t = 1000;
  uint32_t corr = 1;
  auto k = [&](const char* name, const char* op, int64_t d) {
    b.kernel(t, t + d, name, op, 7, corr++);
    t += d + 1;
  };
  for (int it = 0; it < iterations; ++it) {
    b.range(t, t + 1, "mlp_fwd", 1, storage::RangeKind::kUserAnnotation);
    k("gemm_gu", "gate", 613);
    if (!fused) k("gelu", "gelu", 349);
    k("gemm_gu", "up", 624);
    if (fused)
      k("gelu_mul", "gelu_mul", 637);
    else
      k("mul", "mul", 501);
    k("gemm_down", "down", 551);
  }
  return b.finish();
}

TEST(Compare, TotalsAndSpeedupPerIteration) {
  const auto a = geglu(false, 2);
  const auto b = geglu(true, 4);  // different iteration counts compare per iteration
  const RunComparison c = compare_runs(a, b);
  EXPECT_EQ(c.a.kernel_time_ns, 2 * (613 + 349 + 624 + 501 + 551));
  EXPECT_EQ(c.b.kernel_time_ns, 4 * (613 + 624 + 637 + 551));
  ASSERT_TRUE(c.kernel_time_speedup.has_value());
  EXPECT_NEAR(*c.kernel_time_speedup, 2638.0 / 2425.0, 1e-12);
  EXPECT_DOUBLE_EQ(c.a.kernels_per_iteration(), 5.0);
  EXPECT_DOUBLE_EQ(c.b.kernels_per_iteration(), 4.0);
}

TEST(Compare, OpsInBothOnlyAOnlyB) {
  const RunComparison c = compare_runs(geglu(false, 1), geglu(true, 1));
  ASSERT_EQ(c.ops.size(), 6u);
  // A's order first: gate, gelu, up, mul, down; then B's own: gelu_mul.
  EXPECT_EQ(c.ops[0].op, "gate");
  EXPECT_EQ(c.ops[0].presence, Presence::kBoth);
  EXPECT_EQ(c.ops[0].a_total_ns, 613);
  EXPECT_EQ(c.ops[0].b_total_ns, 613);
  ASSERT_EQ(c.ops[0].a.size(), 1u);
  EXPECT_EQ(c.ops[0].a[0].name, "gemm_gu");
  EXPECT_EQ(c.ops[1].op, "gelu");
  EXPECT_EQ(c.ops[1].presence, Presence::kOnlyA);
  EXPECT_TRUE(c.ops[1].b.empty());
  EXPECT_EQ(c.ops[3].op, "mul");
  EXPECT_EQ(c.ops[3].presence, Presence::kOnlyA);
  EXPECT_EQ(c.ops[5].op, "gelu_mul");
  EXPECT_EQ(c.ops[5].presence, Presence::kOnlyB);
  EXPECT_EQ(c.ops[5].b_total_ns, 637);
  EXPECT_EQ(c.ops[5].b_count, 1u);
}

TEST(Compare, EmptyRunsHaveNoSpeedup) {
  sample::RunBuilder b;
  const storage::RunData empty = b.finish();
  const RunComparison c = compare_runs(geglu(false, 1), empty);
  EXPECT_FALSE(c.kernel_time_speedup.has_value());
  for (const OpDiff& d : c.ops) EXPECT_EQ(d.presence, Presence::kOnlyA);
  const RunComparison d = compare_runs(empty, empty);
  EXPECT_TRUE(d.ops.empty());
}

TEST(Alignment, IterationsFromRepeatedTopLevelRanges) {
  const auto run = geglu(false, 3);
  const auto starts = iteration_starts(run);
  ASSERT_EQ(starts.size(), 3u);  // "ProfilerStep#2..4" count as one name
  EXPECT_EQ(alignment_origin(run, Alignment::kRunStart), run.begin_ns);
  EXPECT_EQ(alignment_origin(run, Alignment::kFirstKernel), run.kernels.front().start_ns);
  // Iteration 1's first kernel: the gate GEMM after the second step range.
  const int64_t second = alignment_origin(run, Alignment::kIteration, 1);
  EXPECT_GE(second, starts[1]);
  for (const auto& k : run.kernels)
    if (k.start_ns >= starts[1]) {
      EXPECT_EQ(second, k.start_ns);
      break;
    }
  // Beyond the last iteration: the first kernel.
  EXPECT_EQ(alignment_origin(run, Alignment::kIteration, 7), run.kernels.front().start_ns);
}

TEST(Alignment, NoRepeatedRangeMeansNoIterations) {
  sample::RunBuilder b;
  b.range(0, 10, "setup", 1);
  b.range(20, 30, "forward", 1);
  b.range(22, 24, "op", 1);
  b.range(25, 26, "op", 1);  // repeated, but nested (depth 1)
  b.kernel(40, 50, "k", "", 7, 1);
  const auto run = b.finish();
  EXPECT_TRUE(iteration_starts(run).empty());
  EXPECT_EQ(alignment_origin(run, Alignment::kIteration, 0), 40);
}

TEST(Alignment, RunnerIterationsSkipWarmup) {
  storage::RunInfo info;
  info.warmup = 2;
  info.iterations = 2;
  sample::RunBuilder b(info);
  for (int n = 3; n >= 0; --n) {  // out of order on purpose: N, not time, numbers iterations
    const int64_t t = 1000 * (n + 1);
    b.range(t, t + 100, "iteration " + std::to_string(n), 1);
    b.kernel(t + 200, t + 300, "k", "op", 7, static_cast<uint32_t>(n + 1));
  }
  const auto run = b.finish();
  EXPECT_EQ(iteration_starts(run), (std::vector<int64_t>{3000, 4000}));
  EXPECT_EQ(alignment_origin(run, Alignment::kIteration, 0), 3200);
  EXPECT_EQ(alignment_origin(run, Alignment::kIteration, 1), 4200);
}

TEST(Alignment, SampleSessionIterationsMatchItsRuns) {
  const sample::SampleSession s = sample::make_sample_session();
  for (const storage::RunData& run : s.runs) {
    if (run.kernels.empty()) continue;
    EXPECT_EQ(iteration_starts(run).size(), static_cast<size_t>(run.info.iterations))
        << run.info.name;
  }
}

}  // namespace
}  // namespace fusionscope::analysis
