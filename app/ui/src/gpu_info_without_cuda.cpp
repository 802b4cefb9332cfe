// The GPU status in a build without CUDA (FUSIONSCOPE_CUDA=OFF): none, and why.
#include "fusionscope/build_config.h"
#include "gpu_info.h"

static_assert(!FUSIONSCOPE_HAS_CUDA, "gpu_info_without_cuda.cpp belongs to builds without CUDA");

namespace fusionscope::ui {

GpuStatus query_gpus() {
  GpuStatus status;
  status.reason = kBuiltWithoutCuda;
  return status;
}

}  // namespace fusionscope::ui
