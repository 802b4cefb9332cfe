#include "fusionscope/analysis/metrics_status.h"

#include <gtest/gtest.h>

namespace fusionscope::analysis {
namespace {

TEST(MetricsStatus, RecordedMetricsAreAvailable) {
  storage::RunInfo info;
  info.kind = "gated";
  const auto a = kernel_metrics_availability(info, true, std::string("ok: 5 kernels"));
  EXPECT_TRUE(a.available);
  EXPECT_EQ(a.note, "ok: 5 kernels");
}

TEST(MetricsStatus, SaysWhyThereAreNone) {
  storage::RunInfo info;
  info.kind = "gated";
  auto a = kernel_metrics_availability(info, false, std::nullopt);
  EXPECT_FALSE(a.available);
  EXPECT_EQ(a.why, "no counters pass in this run (capture with --counters)");
  a = samples_availability(info, false, std::nullopt);
  EXPECT_EQ(a.why, "no PM sampling in this run (capture with --pm-sampling)");
  const std::string refused =
      "counters: not permitted: the driver restricts GPU performance counters to administrators";
  a = kernel_metrics_availability(info, false, refused);
  EXPECT_EQ(a.why, refused);
  a = kernel_metrics_availability(info, false, std::string("ok: 0 kernels"));
  EXPECT_NE(a.why.find("none stored"), std::string::npos);
  info.kind = "imported";
  a = samples_availability(info, false, std::nullopt);
  EXPECT_NE(a.why.find("imported trace"), std::string::npos);
}

TEST(MetricsStatus, PropertyKeysPerRun) {
  EXPECT_EQ(kernel_counters_property(7), "counters.run.7.kernels");
  EXPECT_EQ(pm_sampling_property(7), "counters.run.7.samples");
}

}  // namespace
}  // namespace fusionscope::analysis
