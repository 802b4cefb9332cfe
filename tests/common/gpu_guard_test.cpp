// FUSIONSCOPE_REQUIRE_GPU=1 turns a GPU test that cannot run into a failure: the gate that makes
// GPU results count on a machine that has a GPU. Runs a one-test GPU program as a process.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpu_guard.h"

namespace fusionscope::testing {
namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;
};

Outcome run_probe(const std::string& env) {
  const std::string command = "env " + env + " '" FUSIONSCOPE_GPU_GUARD_PROBE "' 2>&1";
  Outcome out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), static_cast<int>(buf.size()), pipe)) out.output += buf.data();
  const int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(GpuGuard, RequiredOnlyWhenSetToSomethingButZero) {
  const char* saved = std::getenv("FUSIONSCOPE_REQUIRE_GPU");
  const std::string restore = saved ? saved : "";
  unsetenv("FUSIONSCOPE_REQUIRE_GPU");
  EXPECT_FALSE(gpu_required());
  setenv("FUSIONSCOPE_REQUIRE_GPU", "", 1);
  EXPECT_FALSE(gpu_required());
  setenv("FUSIONSCOPE_REQUIRE_GPU", "0", 1);
  EXPECT_FALSE(gpu_required());
  setenv("FUSIONSCOPE_REQUIRE_GPU", "1", 1);
  EXPECT_TRUE(gpu_required());
  EXPECT_NE(gpu_unavailable_message("no CUDA device").find("FUSIONSCOPE_REQUIRE_GPU"),
            std::string::npos);
  if (saved)
    setenv("FUSIONSCOPE_REQUIRE_GPU", restore.c_str(), 1);
  else
    unsetenv("FUSIONSCOPE_REQUIRE_GPU");
}

TEST(GpuGuard, WithoutAGpuTheTestSkipsOrUnderTheSwitchFails) {
  const std::string reason = gpu_unavailable_reason();
  const Outcome relaxed = run_probe("-u FUSIONSCOPE_REQUIRE_GPU");
  const Outcome strict = run_probe("FUSIONSCOPE_REQUIRE_GPU=1");
  if (reason.empty()) {  // a GPU: the probe runs and passes either way
    EXPECT_EQ(relaxed.exit_code, 0) << relaxed.output;
    EXPECT_EQ(strict.exit_code, 0) << strict.output;
    EXPECT_NE(strict.output.find("[  PASSED  ] 1 test"), std::string::npos) << strict.output;
    return;
  }
  EXPECT_EQ(relaxed.exit_code, 0) << relaxed.output;
  EXPECT_NE(relaxed.output.find("[  SKIPPED ] 1 test"), std::string::npos) << relaxed.output;
  EXPECT_NE(relaxed.output.find("needs a CUDA GPU: " + reason), std::string::npos)
      << relaxed.output;
  EXPECT_NE(strict.exit_code, 0) << strict.output;
  EXPECT_NE(strict.output.find("[  FAILED  ] 1 test"), std::string::npos) << strict.output;
  EXPECT_NE(strict.output.find("FUSIONSCOPE_REQUIRE_GPU is set and this GPU test cannot run: "
                               "needs a CUDA GPU: " +
                               reason),
            std::string::npos)
      << strict.output;
}

}  // namespace
}  // namespace fusionscope::testing
