// Without a GPU (or driver) the runner reports why instead of failing hard. Runs anywhere; on a
// machine with a GPU it checks nothing and says so.
#include <gtest/gtest.h>

#include "fusionscope/kernels/runner.h"
#include "gpu_guard.h"

namespace fk = fusionscope::kernels;

TEST(RunnerNoGpu, ReportsTheReason) {
  const std::string reason = fusionscope::testing::gpu_unavailable_reason();
  if (reason.empty()) GTEST_SKIP() << "a GPU is present; the no-GPU path is not reachable here";
  const fk::DeviceInfo d = fk::query_device(0);
  EXPECT_FALSE(d.available);
  EXPECT_FALSE(d.unavailable_reason.empty());
  const fk::RunResult r = fk::run(fk::find_preset("linear-post").value(), fk::Variant::kEager);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no usable GPU"), std::string::npos) << r.error;
  EXPECT_FALSE(r.plan.launches.size() > 0 && r.ok);
}
