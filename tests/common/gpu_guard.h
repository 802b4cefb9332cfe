// Tests that need a CUDA device call FUSIONSCOPE_REQUIRE_GPU() first. Without one they skip and say
// why, so a CI log shows what did not run; with FUSIONSCOPE_REQUIRE_GPU=1 in the environment (a GPU
// machine, where every GPU result must count) they fail instead.
#pragma once

#include <string>

#include <gtest/gtest.h>

namespace fusionscope::testing {

// Empty when a usable CUDA device is present; otherwise the reason there is none.
std::string gpu_unavailable_reason();

// Whether FUSIONSCOPE_REQUIRE_GPU is set (to anything but "" or "0"): a GPU test that cannot run
// is then a failure, not a skip.
bool gpu_required();

// What a GPU test that cannot run for `reason` reports: the skip or failure message.
std::string gpu_unavailable_message(const std::string& reason);

}  // namespace fusionscope::testing

// Ends the calling test when a GPU test cannot run for `reason` (a string): skipped, or failed
// under FUSIONSCOPE_REQUIRE_GPU=1. For reasons other than a missing device, such as counters the
// driver does not allow.
#define FUSIONSCOPE_GPU_TEST_CANNOT_RUN(reason)                                      \
  do {                                                                               \
    const std::string fusionscope_message =                                          \
        ::fusionscope::testing::gpu_unavailable_message(reason);                     \
    if (::fusionscope::testing::gpu_required()) GTEST_FAIL() << fusionscope_message; \
    GTEST_SKIP() << fusionscope_message;                                             \
  } while (0)

#define FUSIONSCOPE_REQUIRE_GPU()                                                            \
  do {                                                                                       \
    const std::string fusionscope_reason = ::fusionscope::testing::gpu_unavailable_reason(); \
    if (!fusionscope_reason.empty())                                                         \
      FUSIONSCOPE_GPU_TEST_CANNOT_RUN("needs a CUDA GPU: " + fusionscope_reason);            \
  } while (0)
