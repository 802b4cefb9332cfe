// A GPU test and nothing else, for gpu_guard_test: it passes on a GPU, skips without one, and
// fails without one under FUSIONSCOPE_REQUIRE_GPU=1.
#include "gpu_guard.h"

TEST(GpuGuardProbe, NeedsAGpu) {
  FUSIONSCOPE_REQUIRE_GPU();
  SUCCEED();
}
