// The tracer where there is no GPU (CI, a laptop): it says why, and runs still go through it.
#include <gtest/gtest.h>

#include "fusionscope/profiler/device_info.h"
#include "fusionscope/profiler/tracer.h"
#include "gpu_guard.h"
#include "memory_sink.h"

namespace fusionscope::profiler {
namespace {

TEST(TracerWithoutGpu, ReportsWhyAndRunsStayUntraced) {
  if (fusionscope::testing::gpu_unavailable_reason().empty())
    GTEST_SKIP() << "a GPU is present: this test covers machines without one";
  Tracer tracer;
  EXPECT_FALSE(tracer.available());
  EXPECT_NE(tracer.unavailable_reason().find("no CUDA GPU"), std::string::npos)
      << tracer.unavailable_reason();
  testing::MemorySink sink;
  tracer.begin_run(sink);
  EXPECT_TRUE(tracer.in_run());
  const TraceOutcome out = tracer.end_run();
  EXPECT_FALSE(out.traced);
  EXPECT_EQ(out.status, tracer.unavailable_reason());
  EXPECT_TRUE(sink.kernels.empty());
}

TEST(TracerWithoutGpu, DescribeDeviceSaysWhy) {
  if (fusionscope::testing::gpu_unavailable_reason().empty())
    GTEST_SKIP() << "a GPU is present: this test covers machines without one";
  storage::SessionInfo info;
  std::string why;
  EXPECT_FALSE(describe_device(0, info, &why));
  EXPECT_FALSE(why.empty());
  EXPECT_TRUE(info.gpu_name.empty());
  EXPECT_FALSE(gpu_unavailable_reason().empty());
}

TEST(Tracer, RunsMustBeOpenedAndClosedInOrder) {
  Tracer tracer;
  testing::MemorySink sink;
  EXPECT_THROW(tracer.end_run(), std::logic_error);
  tracer.begin_run(sink);
  EXPECT_THROW(tracer.begin_run(sink), std::logic_error);
  tracer.end_run();
}

TEST(Tracer, OnlyOneTracerCapturesPerProcess) {
  Tracer first;
  Tracer second;
  EXPECT_FALSE(second.available());
  EXPECT_NE(second.unavailable_reason().find("another tracer"), std::string::npos);
}

}  // namespace
}  // namespace fusionscope::profiler
