#include "fusionscope/analysis/bandwidth.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "fusionscope/analysis/iteration_kernels.h"
#include "fusionscope/kernels/config.h"
#include "fusionscope/kernels/plan.h"
#include "sample/run_builder.h"

namespace fusionscope::analysis {
namespace {

constexpr uint32_t kThread = 11;

struct Kernel {
  const char* op;
  int64_t ns;
  double read, write, flops;
};

// GeGLU eager as the lab records it: "iteration N" ranges, one launch per op, and the counters
// pass's metrics on the kernels of `counted` iterations.
storage::RunData geglu_eager(int warmup, int iterations, std::vector<int> counted) {
  const kernels::MlpConfig config = *kernels::find_preset("geglu-post");
  storage::RunInfo info;
  info.name = "geglu-post / eager";
  info.config_json = kernels::to_json(config);
  info.kind = "gated";
  info.variant = "eager";
  info.warmup = warmup;
  info.iterations = iterations;
  sample::RunBuilder b(info);
  const Kernel plan[] = {{"gate", 60'000, 26e6, 52e6, 3.87e10},
                         {"gelu-tanh", 33'000, 50e6, 47e6, 2.3e8},
                         {"up", 58'000, 26e6, 51e6, 3.87e10},
                         {"mul", 50'000, 101e6, 51e6, 2.5e7},
                         {"down", 52'000, 60e6, 26e6, 3.87e10}};
  int64_t t = 1000;
  uint32_t corr = 100;
  for (int it = 0; it < warmup + iterations; ++it) {
    const int64_t start = t;
    for (const Kernel& k : plan) {
      ++corr;
      b.api_call(t, t + 3000, "cudaLaunchKernel", kThread, corr);
      b.kernel(t + 4000, t + 4000 + k.ns, std::string("kernel_") + k.op, k.op, 7, corr);
      if (std::find(counted.begin(), counted.end(), it) != counted.end()) {
        b.metric(corr, "dram__bytes_read.sum", "byte", k.read);
        b.metric(corr, "dram__bytes_write.sum", "byte", k.write);
        b.metric(corr, "fusionscope/flops", "flop", k.flops);
        b.metric(corr, "gpu__time_duration.sum", "ns", static_cast<double>(k.ns) * 1.1);
      }
      t += 4000 + k.ns;
    }
    b.range(start, t, "iteration " + std::to_string(it), kThread);
    t += 500;
  }
  return b.finish();
}

TEST(IterationKernels, KernelsBelongToTheIterationThatLaunchedThem) {
  const storage::RunData run = geglu_eager(1, 2, {});
  const std::vector<long> of = kernel_iterations(run);
  ASSERT_EQ(of.size(), 15u);
  const std::vector<uint32_t> second = iteration_kernels(run, 1);
  ASSERT_EQ(second.size(), 5u);
  EXPECT_EQ(run.str(run.kernels[second[0]].op), "gate");
  EXPECT_EQ(run.str(run.kernels[second[4]].op), "down");
  for (uint32_t k : second) EXPECT_EQ(of[k], 1);
  EXPECT_TRUE(iteration_kernels(run, 7).empty());
}

TEST(Bandwidth, OneForwardPassOfTheFirstTimedIterationWithCounters) {
  // Counters on the warm-up iteration 0 and on timed iterations 2 and 1: iteration 1 is taken.
  const storage::RunData run = geglu_eager(1, 2, {0, 2, 1});
  const RunTraffic t = run_traffic(run);
  ASSERT_EQ(t.kernels.size(), 5u);
  EXPECT_EQ(t.iteration, 1);
  EXPECT_EQ(run.str(t.kernels[0].op), "gate");
  EXPECT_DOUBLE_EQ(t.kernels[0].dram_bytes(), 78e6);
  EXPECT_EQ(t.kernels[0].duration_ns, 60'000);
  EXPECT_DOUBLE_EQ(t.kernels[0].counted_duration_ns, 66'000);
  // Bandwidth over the timed kernel's own duration, not the replayed one.
  EXPECT_NEAR(t.kernels[0].bandwidth(), 78e6 / 60e-6, 1.0);
  EXPECT_NEAR(t.kernels[0].intensity(), 3.87e10 / 78e6, 1e-9);
  EXPECT_NEAR(t.kernels[0].flop_rate(), 3.87e10 / 60e-6, 1.0);
  EXPECT_DOUBLE_EQ(t.dram_bytes, 78e6 + 97e6 + 77e6 + 152e6 + 86e6);
  EXPECT_EQ(t.duration_ns, 60'000 + 33'000 + 58'000 + 50'000 + 52'000);
  EXPECT_NEAR(t.bandwidth(), t.dram_bytes / 253e-6, 1.0);
  EXPECT_NEAR(t.flops, 3 * 3.87e10 + 2.3e8 + 2.5e7, 1.0);
}

TEST(Bandwidth, PlansFewestBytesPerOpBesideTheMeasured) {
  const storage::RunData run = geglu_eager(0, 1, {0});
  const RunTraffic t = run_traffic(run);
  ASSERT_TRUE(t.plan.ok) << t.plan.error;
  const kernels::Plan plan =
      kernels::make_plan(*kernels::find_preset("geglu-post"), kernels::Variant::kEager);
  EXPECT_DOUBLE_EQ(t.min_bytes(), plan.min_bytes());
  ASSERT_EQ(t.ops.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(t.ops[i].op, plan.launches[i].op);
    EXPECT_DOUBLE_EQ(t.ops[i].min_bytes, plan.launches[i].min_bytes);
    EXPECT_EQ(t.ops[i].kernels, 1u);
  }
  // The GEMM gate reads x (8192 x 768) and its weight, writes 8192 x 3072, bf16.
  EXPECT_DOUBLE_EQ(t.ops[0].min_bytes, (8192.0 * 768 + 768.0 * 3072 + 8192.0 * 3072) * 2);
  EXPECT_NEAR(t.excess_over_min(), t.dram_bytes / plan.min_bytes(), 1e-12);
  EXPECT_DOUBLE_EQ(t.ops[0].min_write_bytes, 8192.0 * 3072 * 2);
}

TEST(Bandwidth, FewestCountedLeavesOutWhatTheL2MayHold) {
  // Counted per kernel from an L2 without dirty lines, a kernel's output can end in the L2: of
  // the gate GEMM's 50.3 MB output in a 52.4 MB (50 MiB) L2 none need be counted.
  const double l2 = 50.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(fewest_counted(67.6e6, 50.3e6, l2), 67.6e6 - 50.3e6);
  // An output larger than the L2 has its excess counted.
  EXPECT_DOUBLE_EQ(fewest_counted(268e6, 134e6, l2), 268e6 - l2);
  // A small output may stay entirely.
  EXPECT_DOUBLE_EQ(fewest_counted(67.6e6, 12.6e6, l2), 55e6);
  // Unknown L2 size: the plan's fewest as it is; unknown fewest stays unknown.
  EXPECT_DOUBLE_EQ(fewest_counted(67.6e6, 12.6e6, 0), 67.6e6);
  EXPECT_TRUE(std::isnan(fewest_counted(kUnknown, 1e6, l2)));

  const RunTraffic t = run_traffic(geglu_eager(0, 1, {0}));
  const kernels::Plan plan =
      kernels::make_plan(*kernels::find_preset("geglu-post"), kernels::Variant::kEager);
  double expected = 0;
  for (const auto& l : plan.launches) expected += l.min_bytes - std::min(l.min_write_bytes, l2);
  EXPECT_NEAR(t.min_bytes_counted(l2), expected, 1.0);
  EXPECT_DOUBLE_EQ(t.min_bytes_counted(0), plan.min_bytes());
  EXPECT_LT(t.min_bytes_counted(l2), plan.min_bytes() - 200e6);  // five outputs, 214 MB
}

TEST(Bandwidth, RunWithoutCountersIsEmptyAndSaysWhyThereIsNoPlan) {
  const RunTraffic t = run_traffic(geglu_eager(1, 1, {}));
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.bandwidth(), 0.0);
  EXPECT_TRUE(t.plan.ok);

  storage::RunInfo imported;
  imported.kind = "imported";
  EXPECT_FALSE(plan_traffic(imported).ok);
  EXPECT_NE(plan_traffic(imported).error.find("imported"), std::string::npos);
  storage::RunInfo bad;
  bad.kind = "gated";
  bad.config_json = "{not json";
  bad.variant = "eager";
  const PlanTraffic p = plan_traffic(bad);
  EXPECT_FALSE(p.ok);
  EXPECT_FALSE(p.error.empty());
}

TEST(Bandwidth, KernelsSharingACorrelationIdAreNotGivenItsCountersTwice) {
  // A CUDA graph launch: one correlation id, two kernels.
  sample::RunBuilder b;
  b.api_call(0, 10, "cudaGraphLaunch", kThread, 5);
  b.kernel(20, 40, "k1", "gate", 7, 5);
  b.kernel(40, 60, "k2", "up", 7, 5);
  b.metric(5, "dram__bytes_read.sum", "byte", 100);
  const RunTraffic t = run_traffic(b.finish());
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.iteration, -1);
  EXPECT_DOUBLE_EQ(t.dram_bytes, 100);
  EXPECT_TRUE(std::isnan(t.flops));  // no FLOPs were counted
  EXPECT_TRUE(std::isnan(t.kernels[0].intensity()));
}

TEST(Bandwidth, OnlyTheSumOfDramBytesIsEnough) {
  sample::RunBuilder b;
  b.kernel(0, 1000, "k", "op", 7, 3);
  b.metric(3, "fusionscope/dram_bytes", "byte", 2000);
  const RunTraffic t = run_traffic(b.finish());
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(t.kernels[0].dram_bytes(), 2000);
  EXPECT_NEAR(t.kernels[0].bandwidth(), 2e9, 1e-3);
}

TEST(Ceilings, CalibratedFiguresWinOverTheoreticalOnes) {
  storage::SessionInfo s;
  s.mem_bandwidth_gbs = 3352;
  s.peak_tensor_tflops = 989;
  s.peak_fp32_tflops = 67;
  Ceilings c = ceilings_of(s);
  EXPECT_FALSE(c.bandwidth_calibrated);
  EXPECT_DOUBLE_EQ(c.bandwidth, 3352e9);
  EXPECT_DOUBLE_EQ(c.tensor_flops, 989e12);
  EXPECT_DOUBLE_EQ(c.fp32_flops, 67e12);
  s.calibrated_bandwidth_gbs = 2820;
  s.calibrated_tensor_tflops = 788;
  c = ceilings_of(s);
  EXPECT_TRUE(c.bandwidth_calibrated);
  EXPECT_TRUE(c.tensor_calibrated);
  EXPECT_DOUBLE_EQ(c.bandwidth, 2820e9);
  EXPECT_DOUBLE_EQ(c.theoretical_bandwidth, 3352e9);
  EXPECT_NEAR(c.ridge(), 788e12 / 2820e9, 1e-9);
  EXPECT_EQ(ceilings_of({}).ridge(), 0.0);
}

TEST(Ceilings, AttainableIsTheLowerOfSlopeAndRoof) {
  EXPECT_DOUBLE_EQ(attainable(2e12, 800e12, 10), 20e12);     // memory-bound
  EXPECT_DOUBLE_EQ(attainable(2e12, 800e12, 1000), 800e12);  // compute-bound
  EXPECT_DOUBLE_EQ(attainable(2e12, 0, 1000), 2000e12);      // no roof known
  EXPECT_DOUBLE_EQ(attainable(0, 800e12, 10), 0.0);
}

}  // namespace
}  // namespace fusionscope::analysis
