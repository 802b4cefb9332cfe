// Tests that need a CUDA device call FUSIONSCOPE_REQUIRE_GPU() first: without one they skip and
// say why, so a CI log shows what did not run.
#pragma once

#include <string>

#include <gtest/gtest.h>

namespace fusionscope::testing {
// Empty when a usable CUDA device is present; otherwise the reason there is none.
std::string gpu_unavailable_reason();
}  // namespace fusionscope::testing

#define FUSIONSCOPE_REQUIRE_GPU()                                                                \
  do {                                                                                           \
    const std::string fusionscope_reason = ::fusionscope::testing::gpu_unavailable_reason();     \
    if (!fusionscope_reason.empty()) GTEST_SKIP() << "needs a CUDA GPU: " << fusionscope_reason; \
  } while (0)
