// The counters library's CPU side: derived metrics, records for the store, metric names checked
// against CUPTI's tables for the chips we target (no GPU needed), and clear statuses without one.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "fusionscope/counters/calibration.h"
#include "fusionscope/counters/kernel_counters.h"
#include "fusionscope/counters/metric_names.h"
#include "fusionscope/counters/pm_sampler.h"
#include "fusionscope/counters/store_records.h"
#include "gpu_guard.h"

namespace fc = fusionscope::counters;
namespace m = fusionscope::counters::metric;
namespace st = fusionscope::storage;

namespace {

// A stand-in for SessionStore::intern: ids from 1 in order of first use.
struct FakeStrings {
  std::map<std::string, st::StringId, std::less<>> ids;
  std::vector<std::string> texts{""};
  fc::Intern intern() {
    return [this](std::string_view s) -> st::StringId {
      if (s.empty()) return 0;
      auto it = ids.find(s);
      if (it != ids.end()) return it->second;
      texts.emplace_back(s);
      const auto id = static_cast<st::StringId>(texts.size() - 1);
      ids.emplace(std::string(s), id);
      return id;
    };
  }
};

fc::CounterPassResult two_kernel_pass() {
  fc::CounterPassResult r;
  r.metrics = {std::string(m::kDuration),  std::string(m::kDramRead),
               std::string(m::kDramWrite), std::string(m::kTensorOpsBf16),
               std::string(m::kFfma),      std::string(m::kFadd),
               std::string(m::kFmul)};
  r.units = {"nanosecond", "byte", "byte", "math_op", "instruction", "instruction", "instruction"};
  // A GEMM-like kernel: 2e9 tensor ops, and a pointwise kernel: 1e6 FFMA, 2e6 FADD, 3e6 FMUL.
  r.kernels.push_back({0, "0", {1000.0, 3e6, 1e6, 2e9, 0, 0, 0}});
  r.kernels.push_back({1, "1", {2000.0, 8e6, 4e6, 0, 1e6, 2e6, 3e6}});
  return r;
}

}  // namespace

TEST(DerivedMetrics, FlopsBytesAndRates) {
  auto r = two_kernel_pass();
  fc::add_derived_metrics(r);
  EXPECT_DOUBLE_EQ(r.value(0, m::kDramBytes), 4e6);
  EXPECT_DOUBLE_EQ(r.value(0, m::kTensorFlops), 2e9);
  EXPECT_DOUBLE_EQ(r.value(0, m::kFp32Flops), 0.0);
  EXPECT_DOUBLE_EQ(r.value(0, m::kFlops), 2e9);
  EXPECT_DOUBLE_EQ(r.value(0, m::kDramBandwidth), 4e6 / 1e-6);
  EXPECT_DOUBLE_EQ(r.value(0, m::kFlopRate), 2e9 / 1e-6);
  EXPECT_DOUBLE_EQ(r.value(0, m::kArithmeticIntensity), 2e9 / 4e6);
  // fp32: an FFMA is two FLOPs, FADD and FMUL one each.
  EXPECT_DOUBLE_EQ(r.value(1, m::kFp32Flops), 2 * 1e6 + 2e6 + 3e6);
  EXPECT_DOUBLE_EQ(r.value(1, m::kFlops), 7e6);
  EXPECT_DOUBLE_EQ(r.value(1, m::kDramBandwidth), 12e6 / 2e-6);
  ASSERT_EQ(r.metrics.size(), r.units.size());
  for (const auto& k : r.kernels) EXPECT_EQ(k.values.size(), r.metrics.size());
  // Idempotent: a second call adds no columns.
  const size_t columns = r.metrics.size();
  fc::add_derived_metrics(r);
  EXPECT_EQ(r.metrics.size(), columns);
}

TEST(DerivedMetrics, LeftOutWhenInputsAreMissing) {
  fc::CounterPassResult r;
  r.metrics = {std::string(m::kDramRead)};
  r.units = {"byte"};
  r.kernels.push_back({0, "0", {5.0}});
  fc::add_derived_metrics(r);
  EXPECT_EQ(r.metrics.size(), 1u);
  EXPECT_TRUE(std::isnan(r.value(0, m::kDramBytes)));
  EXPECT_TRUE(std::isnan(r.value(7, m::kDramRead)));
}

TEST(StoreRecords, KernelMetricsKeyedByCorrelationId) {
  auto r = two_kernel_pass();
  r.kernels[1].values[3] = std::nan("");  // not finite: not stored
  FakeStrings strings;
  const std::vector<uint32_t> ids = {41, 57};
  const auto records = fc::to_kernel_metric_records(r, ids, strings.intern());
  ASSERT_EQ(records.size(), 2 * r.metrics.size() - 1);
  EXPECT_EQ(records.front().correlation_id, 41u);
  EXPECT_EQ(strings.texts[records.front().name], m::kDuration);
  EXPECT_EQ(strings.texts[records.front().unit], "nanosecond");
  EXPECT_EQ(records.back().correlation_id, 57u);
  EXPECT_DOUBLE_EQ(records.back().value, 3e6);

  EXPECT_THROW(fc::to_kernel_metric_records(r, std::vector<uint32_t>{1}, strings.intern()),
               fc::MatchError);
  const auto by_order = fc::to_kernel_metric_records(r, strings.intern());
  EXPECT_EQ(by_order.front().correlation_id, 1u);
  EXPECT_EQ(by_order.back().correlation_id, 2u);
}

TEST(StoreRecords, MatchByLaunchOrderSortsTheIteration) {
  const auto r = two_kernel_pass();
  std::vector<st::KernelRecord> iteration(2);
  iteration[0].start_ns = 500;
  iteration[0].correlation_id = 9;
  iteration[1].start_ns = 100;
  iteration[1].correlation_id = 7;
  EXPECT_EQ(fc::match_by_launch_order(r, iteration), (std::vector<uint32_t>{7, 9}));
  iteration.pop_back();
  try {
    fc::match_by_launch_order(r, iteration);
    FAIL() << "a count mismatch must throw";
  } catch (const fc::MatchError& e) {
    EXPECT_NE(std::string(e.what()).find("2 kernel(s)"), std::string::npos) << e.what();
  }
}

TEST(StoreRecords, SamplesAtMidIntervalWithDerivedBandwidth) {
  fc::PmSamplingResult r;
  r.metrics = {std::string(m::kSampleDramRead), std::string(m::kSampleDramWrite),
               std::string(m::kSampleSmActivePct)};
  r.samples.push_back({1000, 6000, {1e12, 5e11, 80.0}});
  r.samples.push_back({6000, 11000, {2e12, std::nan(""), 90.0}});
  FakeStrings strings;
  const auto records = fc::to_sample_records(r, strings.intern());
  ASSERT_EQ(records.size(), 4u + 2u);  // 3 + bandwidth, then 2 finite (no bandwidth)
  EXPECT_EQ(records[0].t_ns, 3500);
  EXPECT_EQ(strings.texts[records[3].metric], m::kSampleDramBandwidth);
  EXPECT_DOUBLE_EQ(records[3].value, 1.5e12);
  EXPECT_EQ(records[4].t_ns, 8500);
  EXPECT_EQ(strings.texts[records[5].metric], m::kSampleSmActivePct);
}

TEST(MetricNames, DefaultKernelMetricsExistOnHopperInFewPasses) {
  const auto check = fc::check_metrics_for_chip("GH100", fc::default_kernel_metrics());
  ASSERT_TRUE(check.status.ok()) << check.status.describe();
  EXPECT_TRUE(check.missing.empty()) << "missing on GH100: " << check.missing.front();
  EXPECT_GE(check.passes, 1u);
  EXPECT_LE(check.passes, 8u);  // kernel replay runs each kernel this many times
}

TEST(MetricNames, DefaultSampleMetricsFitOnePmSamplingPassOnHopper) {
  const auto check = fc::check_metrics_for_chip("GH100", fc::default_sample_metrics(), true);
  ASSERT_TRUE(check.status.ok()) << check.status.describe();
  EXPECT_TRUE(check.missing.empty()) << "missing on GH100: " << check.missing.front();
  EXPECT_EQ(check.passes, 1u);
}

TEST(MetricNames, AmpereLacksSomeAndSaysWhich) {
  const auto check = fc::check_metrics_for_chip("GA100", fc::default_kernel_metrics());
  ASSERT_TRUE(check.status.ok()) << check.status.describe();
  // A100 has no separate fp16-source tensor path counter; the rest must be there.
  for (const auto& missing : check.missing) {
    EXPECT_EQ(missing, m::kTensorOpsFp16) << missing;
  }
  EXPECT_GE(check.passes, 1u);
}

TEST(MetricNames, UnknownChipIsAClearStatus) {
  const auto check = fc::check_metrics_for_chip("NOT_A_CHIP", fc::default_kernel_metrics());
  EXPECT_FALSE(check.status.ok());
  EXPECT_FALSE(check.status.message.empty());
}

TEST(Status, DescribeNamesTheReason) {
  const fc::CounterStatus s{fc::CounterAvailability::kInsufficientPrivileges, "only root"};
  EXPECT_EQ(s.describe(), "counters: not permitted: only root");
  EXPECT_EQ(fc::CounterStatus::success().describe(), "counters: ok");
}

// On a machine without a GPU every entry point says so instead of crashing.
TEST(NoGpu, EveryEntryPointReportsNoDevice) {
  if (fusionscope::testing::gpu_unavailable_reason().empty()) {
    GTEST_SKIP() << "a GPU is present; this checks the path without one";
  }
  const auto pass = fc::run_counter_pass([] {});
  EXPECT_EQ(pass.status.availability, fc::CounterAvailability::kNoDevice) << pass.status.describe();
  EXPECT_FALSE(pass.status.message.empty());

  fc::PmSampler sampler;
  EXPECT_EQ(sampler.start().availability, fc::CounterAvailability::kNoDevice);
  EXPECT_FALSE(sampler.running());
  EXPECT_EQ(sampler.stop().status.availability, fc::CounterAvailability::kNoDevice);

  const auto calibration = fc::calibrate();
  EXPECT_FALSE(calibration.ok);
  EXPECT_NE(calibration.error.find("no CUDA GPU"), std::string::npos) << calibration.error;

  const auto clock = fc::measure_gpu_clock_offset();
  EXPECT_FALSE(clock.ok);
  EXPECT_FALSE(clock.error.empty());
}

namespace {

// A pass as the range profiler returns it with flush_l2: each kernel of the workload preceded by
// the L2 sweep's own range, which reads its whole buffer from DRAM.
constexpr double kSweep = 157.3e6;

fc::CounterPassResult swept_pass(const std::vector<std::pair<double, double>>& kernels_rw,
                                 bool sweep_before_each) {
  fc::CounterPassResult r;
  r.metrics = {std::string(m::kDramRead), std::string(m::kDramWrite), std::string(m::kL2Bytes)};
  for (size_t i = 0; i < kernels_rw.size(); ++i) {
    if (sweep_before_each || i == 0) r.kernels.push_back({0, "", {kSweep, 24e6, kSweep}});
    const auto [read, write] = kernels_rw[i];
    r.kernels.push_back({0, "", {read, write, 2 * (read + write)}});
  }
  for (size_t i = 0; i < r.kernels.size(); ++i) r.kernels[i].index = i;
  return r;
}

}  // namespace

TEST(L2Sweeps, DroppedWhenTheyAlternateWithTheKernels) {
  auto r = swept_pass({{26e6, 31e6}, {50e6, 27e6}, {100e6, 30e6}}, true);
  ASSERT_EQ(r.kernels.size(), 6u);
  fc::drop_l2_sweeps(r, 3, static_cast<size_t>(kSweep));
  ASSERT_EQ(r.kernels.size(), 3u);
  EXPECT_EQ(r.l2_sweeps, 3u);
  EXPECT_DOUBLE_EQ(r.value(0, m::kDramRead), 26e6);
  EXPECT_DOUBLE_EQ(r.value(1, m::kDramWrite), 27e6);
  EXPECT_DOUBLE_EQ(r.value(2, m::kDramRead), 100e6);
  EXPECT_EQ(r.kernels[2].index, 2u);
}

TEST(L2Sweeps, FoundByTheirTrafficWhenALaunchMadeTwoKernels) {
  // The first announced launch made two kernels (e.g. a GEMM and its split-K reduction), so the
  // sweep ranges do not alternate; they still stand out by reading the sweep buffer.
  auto r = swept_pass({{26e6, 31e6}, {2e6, 12e6}}, false);
  r.kernels.push_back({0, "", {kSweep, 20e6, kSweep}});
  r.kernels.push_back({0, "", {60e6, 5e6, 130e6}});
  ASSERT_EQ(r.kernels.size(), 5u);
  fc::drop_l2_sweeps(r, 2, static_cast<size_t>(kSweep));
  ASSERT_EQ(r.kernels.size(), 3u);
  EXPECT_DOUBLE_EQ(r.value(0, m::kDramRead), 26e6);
  EXPECT_DOUBLE_EQ(r.value(1, m::kDramRead), 2e6);
  EXPECT_DOUBLE_EQ(r.value(2, m::kDramRead), 60e6);
}

TEST(L2Sweeps, RefusedWhenTheyCannotBeToldApart) {
  // A workload kernel that reads as much as the sweep makes three look-alikes for two sweeps.
  auto r = swept_pass({{kSweep, 1e6}, {26e6, 31e6}}, false);
  r.kernels.push_back({0, "", {kSweep, 20e6, kSweep}});
  r.kernels.push_back({0, "", {60e6, 5e6, 130e6}});
  EXPECT_THROW(fc::drop_l2_sweeps(r, 2, static_cast<size_t>(kSweep)), std::runtime_error);
}

TEST(DerivedMetrics, L2WriteBytesAreSectorsTimes32) {
  fc::CounterPassResult r;
  r.metrics = {std::string(m::kL2WriteSectors)};
  r.kernels.push_back({0, "0", {1000.0}});
  fc::add_derived_metrics(r);
  EXPECT_DOUBLE_EQ(r.value(0, m::kL2WriteBytes), 32000.0);
}

TEST(MetricNames, DramMetricsNeedOnePassOnHopper) {
  // One pass: kernel replay then needs no memory save and restore, whose dirty lines would be
  // counted as the kernel's writes (docs/counters.md).
  const auto check = fc::check_metrics_for_chip("GH100", fc::dram_kernel_metrics());
  ASSERT_TRUE(check.status.ok()) << check.status.describe();
  EXPECT_TRUE(check.missing.empty());
  EXPECT_EQ(check.passes, 1u);
}

TEST(PmGaps, NoneWhenEverySampleFollowsTheLast) {
  std::vector<fc::PmSample> s;
  for (int i = 0; i < 100; ++i) s.push_back({i * 10'000, (i + 1) * 10'000, {}});
  EXPECT_TRUE(fc::sample_gaps(s, 10'000, 100 * 10'000 + 20'000).empty());
}

TEST(PmGaps, MissingSamplesAndALostEndAreReportedExactly) {
  std::vector<fc::PmSample> s;
  for (int i = 0; i < 100; ++i)
    if (i < 40 || i >= 55) s.push_back({i * 10'000, (i + 1) * 10'000, {}});
  const auto gaps = fc::sample_gaps(s, 10'000, 5'000'000);
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].start_ns, 400'000);  // samples 40..54 lost
  EXPECT_EQ(gaps[0].end_ns, 550'000);
  EXPECT_EQ(gaps[1].start_ns, 1'000'000);  // from the last sample to the stop
  EXPECT_EQ(gaps[1].end_ns, 5'000'000);
  fc::PmSamplingResult r;
  r.gaps = gaps;
  EXPECT_EQ(r.lost_ns(), 150'000 + 4'000'000);
}
