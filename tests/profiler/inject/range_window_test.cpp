// When the injected library records: the capture range's first occurrence, the counters pass's
// iteration, and the settings it reads from its environment.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "range_window.h"
#include "settings.h"

namespace fusionscope::inject {
namespace {

using Event = RangeWindow::Event;

TEST(RangeWindow, OpensOnTheFirstRangeOfTheNameAndClosesWithIt) {
  auto w = RangeWindow::exact("step");
  EXPECT_EQ(w->push(1, 0, "setup"), Event::kNone);
  EXPECT_EQ(w->pop(1, 0), Event::kNone);
  EXPECT_EQ(w->push(1, 0, "step"), Event::kOpen);
  EXPECT_EQ(w->push(1, 0, "step"), Event::kNone);  // nested, same name: still the outer one
  EXPECT_EQ(w->push(2, 0, "other thread"), Event::kNone);
  EXPECT_EQ(w->pop(2, 0), Event::kNone);
  EXPECT_EQ(w->pop(1, 0), Event::kNone);
  EXPECT_EQ(w->pop(1, 7), Event::kNone);  // a pop of another domain's stack
  EXPECT_EQ(w->pop(1, 0), Event::kClose);
  EXPECT_TRUE(w->closed());
  EXPECT_EQ(w->push(1, 0, "step"), Event::kNone);  // only the first occurrence
}

TEST(RangeWindow, TheSecondOccurrenceOfANameIsTheCountersPassesNextWindow) {
  auto first = RangeWindow::exact("step");
  auto second = RangeWindow::exact("step", 1);
  EXPECT_EQ(first->push(1, 0, "step"), Event::kOpen);
  EXPECT_EQ(second->push(1, 0, "step"), Event::kNone);
  EXPECT_EQ(first->pop(1, 0), Event::kClose);
  EXPECT_EQ(second->pop(1, 0), Event::kNone);
  EXPECT_EQ(first->push(1, 0, "step"), Event::kNone);
  EXPECT_EQ(second->push(1, 0, "step"), Event::kOpen);
  EXPECT_EQ(second->pop(1, 0), Event::kClose);
  EXPECT_EQ(first->describe(), "the first NVTX range \"step\"");
  EXPECT_EQ(second->describe(), "the second NVTX range \"step\"");
}

TEST(RangeWindow, StartEndRangesMatchById) {
  auto w = RangeWindow::exact("region");
  EXPECT_EQ(w->start(5, "region"), Event::kOpen);
  EXPECT_EQ(w->end(4), Event::kNone);
  EXPECT_EQ(w->end(5), Event::kClose);
}

TEST(RangeWindow, TheNthIterationOfTheFirstPrefixSeen) {
  auto w = RangeWindow::nth_with_prefix({"ProfilerStep#", "iteration"}, 2);
  EXPECT_EQ(w->push(1, 0, "iteration 0"), Event::kNone);
  EXPECT_EQ(w->pop(1, 0), Event::kNone);
  EXPECT_EQ(w->push(1, 0, "ProfilerStep#1"), Event::kNone);  // "iteration" was seen first
  EXPECT_EQ(w->pop(1, 0), Event::kNone);
  EXPECT_EQ(w->push(1, 0, "iteration 1"), Event::kNone);
  EXPECT_EQ(w->pop(1, 0), Event::kNone);
  EXPECT_EQ(w->push(1, 0, "iteration 2"), Event::kOpen);
  EXPECT_EQ(w->push(1, 0, "gate"), Event::kNone);
  EXPECT_EQ(w->pop(1, 0), Event::kNone);
  EXPECT_EQ(w->pop(1, 0), Event::kClose);
  EXPECT_NE(w->describe().find("\"iteration\""), std::string::npos) << w->describe();
}

TEST(InjectSettings, ReadFromTheEnvironmentWithDefaults) {
  std::map<std::string, std::string> env = {
      {"FUSIONSCOPE_INJECT_SOCKET", "/tmp/s"},        {"FUSIONSCOPE_INJECT_MODE", "counters"},
      {"FUSIONSCOPE_INJECT_DRIVER_API", "0"},         {"FUSIONSCOPE_INJECT_DELAY_NS", "2000"},
      {"FUSIONSCOPE_INJECT_CAPTURE_RANGE", "step"},   {"FUSIONSCOPE_INJECT_WARMUP", "3"},
      {"FUSIONSCOPE_INJECT_KERNEL_LIMIT", "12"},      {"FUSIONSCOPE_INJECT_BUFFER_BYTES", "junk"},
      {"FUSIONSCOPE_INJECT_KERNEL_FILTER", "gemm|mm"}};
  const Settings s = read_settings([&](const char* k) -> const char* {
    auto it = env.find(k);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  EXPECT_EQ(s.socket, "/tmp/s");
  EXPECT_TRUE(s.counters);
  EXPECT_FALSE(s.driver_api);
  EXPECT_EQ(s.delay_ns, 2000u);
  EXPECT_EQ(s.capture_range, "step");
  EXPECT_EQ(s.warmup, 3);
  EXPECT_EQ(s.kernel_limit, 12u);
  EXPECT_EQ(s.kernel_filter, "gemm|mm");
  EXPECT_EQ(s.buffer_bytes, std::size_t{8} << 20);  // malformed: the default

  const Settings none = read_settings([](const char*) -> const char* { return nullptr; });
  EXPECT_TRUE(none.socket.empty());
  EXPECT_FALSE(none.counters);
  EXPECT_TRUE(none.driver_api);
}

}  // namespace
}  // namespace fusionscope::inject

#include <cmath>

#include "counters_pass.h"
#include "fusionscope/counters/kernel_counters.h"
#include "fusionscope/counters/metric_names.h"

namespace fusionscope::inject {
namespace {

TEST(KernelFilter, KeepsMatchingKernelsUpToTheLimitWithTheirLaunchIndex) {
  WireCounters c;
  c.metrics = {"m"};
  for (uint32_t i = 0; i < 6; ++i)
    c.kernels.push_back({i, i % 2 ? "triton_poi_fused_gelu_mul_0" : "nvjet_gemm", {double(i)}});
  std::string error;
  EXPECT_EQ(apply_kernel_filter(c, "gelu", 2, &error), 3u);
  EXPECT_TRUE(error.empty());
  ASSERT_EQ(c.kernels.size(), 2u);
  EXPECT_EQ(c.kernels[0].launch_index, 1u);
  EXPECT_EQ(c.kernels[1].launch_index, 3u);
  EXPECT_TRUE(c.limit_reached);

  WireCounters bad;
  bad.kernels = {{0, "k", {}}};
  EXPECT_EQ(apply_kernel_filter(bad, "([", 0, &error), 0u);
  EXPECT_NE(error.find("not a valid regex"), std::string::npos) << error;
  EXPECT_EQ(bad.kernels.size(), 1u);
}

namespace m = counters::metric;

counters::CounterPassResult pass(std::vector<std::string> metrics,
                                 std::vector<std::pair<std::string, std::vector<double>>> kernels) {
  counters::CounterPassResult r;
  r.metrics = std::move(metrics);
  r.units.assign(r.metrics.size(), "byte");
  for (auto& [name, values] : kernels) {
    counters::KernelCounters k;
    k.index = r.kernels.size();
    k.range_name = name;
    k.values = values;
    r.kernels.push_back(std::move(k));
  }
  counters::add_derived_metrics(r);
  return r;
}

TEST(CounterWindows, DramBytesFromTheSweptWindowTheRestFromTheNext) {
  // The DRAM window: exact bytes. The next window (6 passes): its DRAM writes read high, and it
  // has the tensor ops.
  counters::CounterPassResult dram =
      pass({std::string(m::kDuration), std::string(m::kDramRead), std::string(m::kDramWrite)},
           {{"nvjet_gemm", {1000, 100, 50}}, {"triton_poi_fused_gelu_mul_0", {500, 200, 60}}});
  const counters::CounterPassResult others = pass(
      {std::string(m::kDuration), std::string(m::kDramRead), std::string(m::kDramWrite),
       std::string(m::kTensorOpsBf16)},
      {{"nvjet_gemm", {1100, 101, 99, 4000}}, {"triton_poi_fused_gelu_mul_0", {520, 200, 90, 0}}});
  std::string why;
  ASSERT_TRUE(merge_counter_windows(dram, others, &why)) << why;
  EXPECT_EQ(dram.value(0, m::kDramWrite), 50);
  EXPECT_EQ(dram.value(0, m::kDramRead), 100);
  EXPECT_EQ(dram.value(0, m::kDuration), 1000);
  EXPECT_EQ(dram.value(0, m::kTensorOpsBf16), 4000);
  EXPECT_EQ(dram.value(0, m::kDramBytes), 150);
  EXPECT_EQ(dram.value(0, m::kFlops), 4000);
  EXPECT_DOUBLE_EQ(dram.value(0, m::kArithmeticIntensity), 4000.0 / 150);
  EXPECT_EQ(dram.value(1, m::kDramBytes), 260);
  // Every metric once, values aligned with them.
  for (const auto& k : dram.kernels) EXPECT_EQ(k.values.size(), dram.metrics.size());
  EXPECT_EQ(std::count(dram.metrics.begin(), dram.metrics.end(), std::string(m::kDramBytes)), 1);
}

TEST(CounterWindows, DifferentKernelsInTheNextWindowAreNotMerged) {
  counters::CounterPassResult dram =
      pass({std::string(m::kDramRead), std::string(m::kDramWrite)}, {{"a", {1, 2}}, {"b", {3, 4}}});
  const auto before = dram.metrics;
  std::string why;
  EXPECT_FALSE(
      merge_counter_windows(dram, pass({std::string(m::kTensorOpsBf16)}, {{"a", {5}}}), &why));
  EXPECT_NE(why.find("launched 1 kernels, the DRAM window 2"), std::string::npos) << why;
  EXPECT_FALSE(merge_counter_windows(
      dram, pass({std::string(m::kTensorOpsBf16)}, {{"a", {5}}, {"c", {6}}}), &why));
  EXPECT_NE(why.find("kernel 1 of the next window is c, not b"), std::string::npos) << why;
  EXPECT_EQ(dram.metrics, before);
}

}  // namespace
}  // namespace fusionscope::inject
