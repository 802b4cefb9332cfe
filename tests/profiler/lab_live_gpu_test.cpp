// The app's live lab, headless, on a GPU: the controller the Lab panel drives runs the post's
// GeGLU presets in every variant into a session (each run checked against the fp32 reference),
// and the runs' kernels per iteration are the plans'; a sweep completes and its chart has every
// point; a configuration too large for the GPU is refused before anything runs.
#include <cmath>

#include <gtest/gtest.h>

#include "fusionscope/analysis/prediction.h"
#include "fusionscope/analysis/stats.h"
#include "fusionscope/analysis/sweep_chart.h"
#include "fusionscope/lab/lab_controller.h"
#include "gpu_guard.h"
#include "test_paths.h"

namespace fusionscope::lab {
namespace {

using kernels::Variant;
using storage::RunStatus;

std::filesystem::path new_session(const std::string& name) {
  const auto path = testing::scratch_dir() / name;
  storage::SessionStore::create(path, {});
  return path;
}

analysis::PredictionPeaks peaks_of(const DeviceFacts& d) {
  const analysis::DevicePeaks peaks{d.name, d.bandwidth_bytes_per_s, d.tensor_flops, d.fp32_flops};
  return analysis::choose_peaks(nullptr, &peaks);
}

TEST(LabLiveGpu, GegluPresetsInEveryVariantLandWithThePlansKernelCounts) {
  FUSIONSCOPE_REQUIRE_GPU();
  auto controller = make_lab_controller();
  const DeviceFacts device = controller->wait_for_device();
  ASSERT_TRUE(device.available) << device.reason;
  EXPECT_GT(device.free_bytes, 0u);

  LabRequest request;
  std::vector<std::string> skipped;
  request.job.runs =
      expand({*kernels::find_preset("geglu-post"), *kernels::find_preset("swiglu-post")},
             kernels::all_variants(), &skipped);
  request.job.warmup = 2;
  request.job.iterations = 5;
  request.job.verify = true;
  // geglu: eager, epilogue, pointwise-fused, gated-gemm; swiglu: no epilogue (no SiLU epilogue).
  ASSERT_EQ(request.job.runs.size(), 7u);
  const auto path = new_session("live.fsdb");
  std::string why;
  ASSERT_TRUE(controller->start(path, request, &why)) << why;
  controller->wait();
  const LabStatus status = controller->status();
  EXPECT_TRUE(status.error.empty()) << status.error;
  EXPECT_TRUE(status.trace_unavailable.empty()) << status.trace_unavailable;
  ASSERT_EQ(status.finished.size(), 7u);
  EXPECT_EQ(controller->take_finished_runs().size(), 7u);

  const auto store = storage::SessionStore::open(path);
  EXPECT_EQ(store.session().gpu_name, device.name);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 7u);
  const analysis::PredictionPeaks peaks = peaks_of(device);
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunSpec& spec = request.job.runs[i];
    SCOPED_TRACE(runs[i].name);
    EXPECT_EQ(runs[i].name, run_name(spec));
    EXPECT_EQ(runs[i].status, RunStatus::kOk) << runs[i].error;
    const storage::RunData data = store.load_run(runs[i].id);
    const analysis::RunSummary summary = analysis::summarize(data);
    const kernels::Plan plan = kernels::make_plan(spec.config, spec.variant);
    ASSERT_TRUE(summary.timed_split);
    EXPECT_EQ(summary.timed_kernels, plan.launches.size() * 5);
    const analysis::VariantOutcome outcome =
        analysis::compare_to_prediction(analysis::predict(spec.config, spec.variant, peaks), data);
    EXPECT_TRUE(outcome.measured);
    EXPECT_FALSE(outcome.has(analysis::SurpriseKind::kKernelCount));
    EXPECT_FALSE(outcome.has(analysis::SurpriseKind::kCheckFailed));
    EXPECT_FALSE(outcome.has(analysis::SurpriseKind::kOpMissing));
    ASSERT_TRUE(outcome.roofline_fraction.has_value());
    // Real kernels stay under the roofline and, for these GPU-bound MLPs, within 10x of it.
    EXPECT_GT(*outcome.roofline_fraction, 0.1);
    EXPECT_LT(*outcome.roofline_fraction, 1.1);
    std::printf("  %-32s %zu kernels/iter  %8.1f us/iter  bound %7.1f us  %3.0f%% of roofline\n",
                runs[i].name.c_str(), outcome.planned_kernels, outcome.measured_ns / 1e3,
                outcome.bound_ns / 1e3, *outcome.roofline_fraction * 100);
  }
}

TEST(LabLiveGpu, ASweepCompletesAndItsChartHasEveryPoint) {
  FUSIONSCOPE_REQUIRE_GPU();
  auto controller = make_lab_controller();
  const DeviceFacts device = controller->wait_for_device();
  ASSERT_TRUE(device.available) << device.reason;
  SweepSpec spec;
  spec.size = SweepSize::kHidden;
  spec.from = 256;
  spec.to = 2048;
  LabRequest request;
  request.sweep =
      plan_sweep(*kernels::find_preset("geglu-post"), {Variant::kEager, Variant::kGatedGemm}, spec);
  request.job.runs = request.sweep->runs;
  request.job.warmup = 1;
  request.job.iterations = 3;
  const auto path = new_session("sweep.fsdb");
  std::string why;
  ASSERT_TRUE(controller->start(path, request, &why)) << why;
  controller->wait();
  const LabStatus status = controller->status();
  EXPECT_EQ(status.summary(), "8 runs: 8 ok");

  const auto store = storage::SessionStore::open(path);
  const auto sweeps = load_sweeps(store.properties());
  ASSERT_EQ(sweeps.size(), 1u);
  const analysis::PredictionPeaks peaks = peaks_of(device);
  std::vector<analysis::SweepSample> samples;
  for (size_t p = 0; p < sweeps[0].points.size(); ++p) {
    for (Variant v : sweeps[0].variants) {
      const int64_t id = sweeps[0].run_for(p, v);
      ASSERT_NE(id, 0);
      const auto data = store.load_run(id);
      const auto config = with_size(sweeps[0].base, spec.size, sweeps[0].points[p].value);
      samples.push_back({static_cast<double>(sweeps[0].points[p].value),
                         std::string(kernels::to_string(v)),
                         analysis::summarize(data).kernel_time_per_iteration_ns(),
                         analysis::predict(config, v, peaks).bound_ns});
    }
  }
  const analysis::SweepChart chart = analysis::build_sweep_chart(samples);
  EXPECT_EQ(chart.sizes, (std::vector<double>{256, 512, 1024, 2048}));
  ASSERT_EQ(chart.series.size(), 2u);
  for (const auto& s : chart.series)
    for (size_t i = 0; i < chart.sizes.size(); ++i) {
      EXPECT_TRUE(std::isfinite(s.time_ns[i])) << s.name << " at " << chart.sizes[i];
      EXPECT_TRUE(std::isfinite(s.speedup[i]));
    }
  std::printf("  gated-gemm over eager:");
  for (size_t i = 0; i < chart.sizes.size(); ++i)
    std::printf(" %.0f: %.2fx", chart.sizes[i], chart.series[1].speedup[i]);
  std::printf("\n");
}

TEST(LabLiveGpu, AConfigurationTooLargeForThisGpuIsRefusedBeforeAnythingRuns) {
  FUSIONSCOPE_REQUIRE_GPU();
  auto controller = make_lab_controller();
  const DeviceFacts device = controller->wait_for_device();
  ASSERT_TRUE(device.available) << device.reason;
  kernels::MlpConfig huge = *kernels::find_preset("geglu-large");
  huge.rows = int64_t{1} << 24;  // 16M tokens: terabytes of activations
  LabRequest request;
  request.job.runs = {{huge, Variant::kEager}};
  const auto refusals = check_request(request, device);
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].code, RefusalCode::kDeviceMemory) << refusals[0].message;
  EXPECT_NE(refusals[0].message.find("of device memory"), std::string::npos) << refusals[0].message;
  std::string why;
  EXPECT_FALSE(controller->start(new_session("huge.fsdb"), request, &why));
}

}  // namespace
}  // namespace fusionscope::lab
