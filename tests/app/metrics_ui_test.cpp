// The memory-bandwidth views' data without a display: why a run has no counters, which runs the
// roofline shows, the chart rows a run gets.
#include <gtest/gtest.h>

#include "metrics_common.h"
#include "metrics_fixture.h"
#include "metrics_row.h"
#include "session.h"
#include "test_paths.h"

namespace fusionscope::ui {
namespace {

std::unique_ptr<Session> metrics_session() {
  const auto path = testing::scratch_dir() / "metrics.fsdb";
  testing::write_metrics_session(path);
  return open_session(path);
}

const LoadedRun& run_named(const Session& s, const std::string& name) {
  for (const auto& r : s.runs)
    if (r->data.info.name == name) return *r;
  throw std::runtime_error("no run " + name);
}

TEST(MetricsUi, RunsWithCountersHaveTrafficAndSeries) {
  const auto s = metrics_session();
  const LoadedRun& eager = run_named(*s, "geglu-post / eager");
  EXPECT_TRUE(kernel_metrics_status(*s, eager).available);
  EXPECT_TRUE(samples_status(*s, eager).available);
  EXPECT_EQ(eager.traffic.kernels.size(), 5u);
  EXPECT_EQ(eager.traffic.iteration, 1);
  EXPECT_TRUE(eager.traffic.plan.ok);
  EXPECT_EQ(metrics_rows(eager.pm).size(), 2u);
}

TEST(MetricsUi, RunsWithoutCountersSayWhy) {
  const auto s = metrics_session();
  const LoadedRun& pointwise = run_named(*s, "geglu-post / pointwise-fused");
  const auto k = kernel_metrics_status(*s, pointwise);
  EXPECT_FALSE(k.available);
  EXPECT_NE(k.why.find("not permitted"), std::string::npos) << k.why;
  const auto p = samples_status(*s, pointwise);
  EXPECT_FALSE(p.available);
  EXPECT_EQ(p.why, "no PM sampling in this run (capture with --pm-sampling)");
  EXPECT_TRUE(metrics_rows(pointwise.pm).empty());
}

TEST(MetricsUi, OneSelectedRunBringsItsVariants) {
  AppState app;
  app.session = metrics_session();
  const int64_t eager = run_named(*app.session, "geglu-post / eager").data.info.id;
  const int64_t gated = run_named(*app.session, "geglu-post / gated-gemm").data.info.id;
  app.runs.selected = {eager};
  EXPECT_EQ(runs_with_variants(app).size(), 3u);
  app.runs.selected = {eager, gated};
  const auto two = runs_with_variants(app);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1]->data.info.id, gated);
}

}  // namespace
}  // namespace fusionscope::ui
