// Guess first, then look: peaks chosen in the documented order, roofline bounds of the post's
// workloads, and runs measured against their plan with the surprises they should raise.
#include <cmath>

#include <gtest/gtest.h>

#include "fusionscope/analysis/prediction.h"
#include "sample/run_builder.h"

namespace fusionscope::analysis {
namespace {

using kernels::Variant;
using storage::RunStatus;

storage::SessionInfo h100_session() {
  storage::SessionInfo s;
  s.gpu_name = "NVIDIA H100 80GB HBM3";
  s.mem_bandwidth_gbs = 3352.32;
  s.peak_tensor_tflops = 1070.5;
  s.peak_fp32_tflops = 66.9;
  return s;
}

PredictionPeaks round_peaks() {
  PredictionPeaks p;
  p.bandwidth_bytes_per_s = 2e12;  // 2 TB/s
  p.tensor_flops = 1e15;           // 1 PFLOP/s
  p.fp32_flops = 5e13;
  p.source = "test";
  return p;
}

TEST(Peaks, SessionTheoreticalWithoutADevice) {
  const storage::SessionInfo s = h100_session();
  const PredictionPeaks p = choose_peaks(&s, nullptr);
  EXPECT_DOUBLE_EQ(p.bandwidth_bytes_per_s, 3352.32e9);
  EXPECT_DOUBLE_EQ(p.tensor_flops, 1070.5e12);
  EXPECT_DOUBLE_EQ(p.fp32_flops, 66.9e12);
  EXPECT_EQ(p.source, "NVIDIA H100 80GB HBM3: theoretical peaks from the session");
}

TEST(Peaks, CalibratedFiguresComeFirstAndTheRestIsFilledIn) {
  storage::SessionInfo s = h100_session();
  s.calibrated_bandwidth_gbs = 3000;
  s.calibrated_tensor_tflops = 740;
  const PredictionPeaks p = choose_peaks(&s, nullptr);
  EXPECT_DOUBLE_EQ(p.bandwidth_bytes_per_s, 3000e9);
  EXPECT_DOUBLE_EQ(p.tensor_flops, 740e12);
  EXPECT_DOUBLE_EQ(p.fp32_flops, 66.9e12);  // calibration measures no FP32 peak
  EXPECT_EQ(p.source, "NVIDIA H100 80GB HBM3: calibrated + theoretical peaks from the session");
}

TEST(Peaks, ThisGpuWinsOverAnotherGpusSession) {
  storage::SessionInfo s = h100_session();
  s.calibrated_bandwidth_gbs = 3000;
  DevicePeaks d{"NVIDIA A100-SXM4-80GB", 2039e9, 312e12, 19.5e12};
  const PredictionPeaks p = choose_peaks(&s, &d);
  EXPECT_DOUBLE_EQ(p.bandwidth_bytes_per_s, 2039e9);  // not the H100's calibration
  EXPECT_DOUBLE_EQ(p.tensor_flops, 312e12);
  EXPECT_EQ(p.source, "NVIDIA A100-SXM4-80GB: theoretical peaks of this GPU");
}

TEST(Peaks, ASessionCalibratedOnThisGpuKeepsItsCalibration) {
  storage::SessionInfo s = h100_session();
  s.calibrated_tensor_tflops = 740;
  DevicePeaks d{"NVIDIA H100 80GB HBM3", 3352e9, 1070e12, 66e12};
  const PredictionPeaks p = choose_peaks(&s, &d);
  EXPECT_DOUBLE_EQ(p.tensor_flops, 740e12);
  EXPECT_DOUBLE_EQ(p.bandwidth_bytes_per_s, 3352e9);
}

TEST(Peaks, NothingKnown) {
  const PredictionPeaks p = choose_peaks(nullptr, nullptr);
  EXPECT_TRUE(p.source.empty());
  EXPECT_FALSE(p.known(kernels::DType::kBf16));
}

TEST(Roofline, BoundIsTheSlowerOfComputeAndMemory) {
  EXPECT_DOUBLE_EQ(roofline_bound_ns(1e12, 1e6, 1e15, 2e12), 1e6);  // 1 ms of FLOPs
  EXPECT_DOUBLE_EQ(roofline_bound_ns(1e6, 2e9, 1e15, 2e12), 1e6);   // 1 ms of bytes
  EXPECT_DOUBLE_EQ(roofline_bound_ns(1e12, 2e9, 0, 2e12), 1e6);     // unknown FLOP rate
  EXPECT_DOUBLE_EQ(roofline_bound_ns(0, 0, 1e15, 2e12), 0);
}

TEST(Predict, GegluEagerIsFiveKernelsAndGatedGemmTwoWithALowerBound) {
  const auto geglu = *kernels::find_preset("geglu-post");
  const PredictionPeaks peaks = round_peaks();
  const VariantPrediction eager = predict(geglu, Variant::kEager, peaks);
  ASSERT_EQ(eager.kernels(), 5u);
  EXPECT_EQ(eager.launches[0].op, "gate");
  EXPECT_EQ(eager.launches[1].op, "gelu-tanh");
  // gate: 2 * 8192 * 3072 * 768 FLOPs at 1 PFLOP/s, compute-bound.
  const double gate_flops = 2.0 * 8192 * 3072 * 768;
  EXPECT_DOUBLE_EQ(eager.launches[0].flops, gate_flops);
  EXPECT_NEAR(eager.launches[0].bound_ns, gate_flops / 1e15 * 1e9, 1e-6);
  EXPECT_FALSE(eager.launches[0].memory_bound);
  // gelu: reads and writes 8192 x 3072 bf16, memory-bound at 2 TB/s.
  EXPECT_TRUE(eager.launches[1].memory_bound);
  EXPECT_NEAR(eager.launches[1].bound_ns, 2.0 * 8192 * 3072 * 2 / 2e12 * 1e9, 1e-6);
  double sum = 0;
  for (const auto& l : eager.launches) sum += l.bound_ns;
  EXPECT_DOUBLE_EQ(eager.bound_ns, sum);

  const VariantPrediction gated = predict(geglu, Variant::kGatedGemm, peaks);
  EXPECT_EQ(gated.kernels(), 2u);
  EXPECT_LT(gated.bound_ns, eager.bound_ns);
  EXPECT_LT(gated.min_bytes, eager.min_bytes);
  // Same GEMM work either way (the epilogue's FLOPs differ slightly).
  EXPECT_NEAR(gated.flops / eager.flops, 1.0, 0.01);
}

TEST(Predict, Fp32UsesTheFp32PeakAndUnknownPeaksGiveNoBound) {
  auto c = *kernels::find_preset("mlp-wide");
  c.dtype = kernels::DType::kFp32;
  const VariantPrediction p = predict(c, Variant::kEager, round_peaks());
  EXPECT_NEAR(p.launches[0].bound_ns, p.launches[0].flops / 5e13 * 1e9, 1e-6);
  const VariantPrediction none = predict(c, Variant::kEager, PredictionPeaks{});
  EXPECT_EQ(none.bound_ns, 0);
  EXPECT_GT(none.flops, 0);
}

TEST(Predict, AVariantThatDoesNotApplyIsRefused) {
  EXPECT_THROW(predict(*kernels::find_preset("linear-post"), Variant::kGatedGemm, round_peaks()),
               kernels::ConfigError);
}

// A run laid out as the lab records it: `warmup` + `iterations` passes, each an "iteration N"
// range holding one op range and launch per kernel.
struct FakeKernel {
  std::string op;
  double us;
};
storage::RunData lab_run(const std::vector<FakeKernel>& pass, int warmup, int iterations,
                         RunStatus status = RunStatus::kOk, std::string error = {}) {
  storage::RunInfo info;
  info.id = 7;
  info.warmup = warmup;
  info.iterations = iterations;
  info.status = status;
  info.error = std::move(error);
  sample::RunBuilder b(info);
  int64_t t = 1000;
  uint32_t corr = 1;
  for (int it = 0; it < warmup + iterations; ++it) {
    const int64_t it_start = t;
    for (const FakeKernel& k : pass) {
      const int64_t launch = t;
      b.api_call(launch, launch + 100, "cudaLaunchKernel", 1, corr);
      b.kernel(launch + 200, launch + 200 + static_cast<int64_t>(k.us * 1000), "k_" + k.op, k.op, 7,
               corr);
      b.range(launch - 10, launch + 150, k.op, 1);
      ++corr;
      t += 300 + static_cast<int64_t>(k.us * 1000);
    }
    b.range(it_start - 20, t, "iteration " + std::to_string(it), 1);
    t += 50;
  }
  return b.finish();
}

TEST(Compare, AMatchingRunHasItsRooflineFractionAndNoSurprise) {
  const auto geglu = *kernels::find_preset("geglu-post");
  const VariantPrediction p = predict(geglu, Variant::kGatedGemm, round_peaks());
  // Twice the bound per op: 50 % of the roofline.
  std::vector<FakeKernel> pass;
  for (const auto& l : p.launches) pass.push_back({l.op, 2 * l.bound_ns / 1000.0});
  const VariantOutcome o = compare_to_prediction(p, lab_run(pass, 2, 3));
  EXPECT_TRUE(o.measured);
  EXPECT_EQ(o.planned_kernels, 2u);
  EXPECT_DOUBLE_EQ(o.measured_kernels, 2.0);
  ASSERT_TRUE(o.roofline_fraction.has_value());
  EXPECT_NEAR(*o.roofline_fraction, 0.5, 0.01);
  EXPECT_TRUE(o.surprises.empty()) << o.surprises.front().message;
  ASSERT_EQ(o.ops.size(), 2u);
  EXPECT_EQ(o.ops[0].op, p.launches[0].op);
  EXPECT_TRUE(o.ops[0].planned && o.ops[0].measured);
  EXPECT_NEAR(*o.ops[0].roofline_fraction, 0.5, 0.01);
  EXPECT_NEAR(o.ops[1].measured_ns, 2 * p.launches[1].bound_ns, 2.0);
}

TEST(Compare, AnExtraKernelAndAMissingOpAreSurprises) {
  const auto geglu = *kernels::find_preset("geglu-post");
  const VariantPrediction p = predict(geglu, Variant::kEager, round_peaks());
  // No "mul", and a cast nobody planned; 6 kernels instead of 5.
  std::vector<FakeKernel> pass = {{"gate", 60}, {"gelu-tanh", 30}, {"up", 60},
                                  {"cast", 5},  {"cast", 5},       {"down", 55}};
  const VariantOutcome o = compare_to_prediction(p, lab_run(pass, 1, 4));
  EXPECT_TRUE(o.has(SurpriseKind::kKernelCount));
  EXPECT_TRUE(o.has(SurpriseKind::kOpMissing));
  EXPECT_TRUE(o.has(SurpriseKind::kOpUnplanned));
  EXPECT_DOUBLE_EQ(o.measured_kernels, 6.0);
  for (const Surprise& s : o.surprises) {
    if (s.kind == SurpriseKind::kKernelCount) {
      EXPECT_EQ(s.message, "5 kernels per iteration planned, 6 measured");
    }
  }
  // Planned ops first, in plan order; then the unplanned one.
  ASSERT_EQ(o.ops.size(), 6u);
  EXPECT_EQ(o.ops[3].op, "mul");
  EXPECT_FALSE(o.ops[3].measured);
  EXPECT_EQ(o.ops[5].op, "cast");
  EXPECT_FALSE(o.ops[5].planned);
  EXPECT_DOUBLE_EQ(o.ops[5].measured_kernels, 2.0);
}

TEST(Compare, ALaunchBoundLinearIsFarFromItsBound) {
  const auto linear = *kernels::find_preset("linear-post");
  const VariantPrediction p = predict(linear, Variant::kEager, round_peaks());
  ASSERT_LT(p.bound_ns, 500);  // a few hundred kB and MFLOPs: tens of ns
  const VariantOutcome o = compare_to_prediction(p, lab_run({{"linear", 2.5}}, 2, 5));
  EXPECT_TRUE(o.has(SurpriseKind::kFarFromBound));
  EXPECT_FALSE(o.has(SurpriseKind::kKernelCount));
  EXPECT_LT(*o.roofline_fraction, 0.25);
}

TEST(Compare, FasterThanTheBoundMeansThePeaksAreWrong) {
  const auto geglu = *kernels::find_preset("geglu-post");
  const VariantPrediction p = predict(geglu, Variant::kGatedGemm, round_peaks());
  std::vector<FakeKernel> pass;
  for (const auto& l : p.launches) pass.push_back({l.op, 0.5 * l.bound_ns / 1000.0});
  const VariantOutcome o = compare_to_prediction(p, lab_run(pass, 0, 2));
  EXPECT_TRUE(o.has(SurpriseKind::kFasterThanBound));
  EXPECT_GT(*o.roofline_fraction, 1.0);
}

TEST(Compare, AnOpFasterThanItsBoundIsCalledOutByName) {
  const auto geglu = *kernels::find_preset("geglu-post");
  const VariantPrediction p = predict(geglu, Variant::kEager, round_peaks());
  // Every op at twice its bound except the multiply, at 80 % of it (the L2 kept its writes).
  std::vector<FakeKernel> pass;
  for (const auto& l : p.launches)
    pass.push_back({l.op, (l.op == "mul" ? 0.8 : 2.0) * l.bound_ns / 1000.0});
  const VariantOutcome o = compare_to_prediction(p, lab_run(pass, 1, 2));
  ASSERT_EQ(o.surprises.size(), 1u);
  EXPECT_EQ(o.surprises[0].kind, SurpriseKind::kFasterThanBound);
  EXPECT_EQ(o.surprises[0].message.rfind("op 'mul': ", 0), 0u) << o.surprises[0].message;
}

TEST(Compare, AFailedCheckAndAFailedRunAreCalledOut) {
  const auto geglu = *kernels::find_preset("geglu-post");
  const VariantPrediction p = predict(geglu, Variant::kGatedGemm, round_peaks());
  std::vector<FakeKernel> pass;
  for (const auto& l : p.launches) pass.push_back({l.op, 2 * l.bound_ns / 1000.0});
  const VariantOutcome check = compare_to_prediction(
      p, lab_run(pass, 1, 2, RunStatus::kFailed,
                 "output differs from the fp32 reference: relative error 0.5 > tolerance 0.02"));
  EXPECT_TRUE(check.has(SurpriseKind::kCheckFailed));
  EXPECT_TRUE(check.measured);  // the timing is still there to look at

  const VariantOutcome failed =
      compare_to_prediction(p, lab_run({}, 0, 2, RunStatus::kFailed, "an illegal memory access"));
  EXPECT_TRUE(failed.has(SurpriseKind::kRunFailed));
  EXPECT_FALSE(failed.measured);
  EXPECT_FALSE(failed.has(SurpriseKind::kNoTrace));
  EXPECT_EQ(failed.surprises.front().message, "the run failed: an illegal memory access");
}

TEST(Compare, ARunWithoutATraceHasNothingToCompare) {
  const auto geglu = *kernels::find_preset("geglu-post");
  const VariantPrediction p = predict(geglu, Variant::kEager, round_peaks());
  storage::RunData run;
  run.info.iterations = 20;
  run.info.status = RunStatus::kOk;
  run.info.trace_status = "another profiler is attached to this process";
  const VariantOutcome o = compare_to_prediction(p, run);
  EXPECT_FALSE(o.measured);
  ASSERT_TRUE(o.has(SurpriseKind::kNoTrace));
  EXPECT_EQ(o.surprises.front().message,
            "nothing to compare: another profiler is attached to this process");
  EXPECT_EQ(o.ops.size(), 5u);
}

TEST(Configs, RunConfigParsesAndSameWorkloadIgnoresTheName) {
  storage::RunInfo info;
  auto geglu = *kernels::find_preset("geglu-post");
  info.config_json = kernels::to_json(geglu);
  const auto parsed = run_config(info);
  ASSERT_TRUE(parsed.has_value());
  auto renamed = geglu;
  renamed.name = "my geglu";
  EXPECT_TRUE(same_workload(*parsed, renamed));
  renamed.widths[1] = 4096;
  EXPECT_FALSE(same_workload(*parsed, renamed));
  info.config_json = "{not json";
  EXPECT_FALSE(run_config(info).has_value());
  info.config_json.clear();
  EXPECT_FALSE(run_config(info).has_value());
}

}  // namespace
}  // namespace fusionscope::analysis
