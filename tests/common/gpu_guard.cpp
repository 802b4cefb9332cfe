#include "gpu_guard.h"

#include <cstdlib>
#include <string_view>

#include "fusionscope/build_config.h"

#if FUSIONSCOPE_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace fusionscope::testing {

std::string gpu_unavailable_reason() {
#if FUSIONSCOPE_HAS_CUDA
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return cudaGetErrorString(err);
  if (count == 0) return "no CUDA device";
  return {};
#else
  return kBuiltWithoutCuda;
#endif
}

bool gpu_required() {
  const char* v = std::getenv("FUSIONSCOPE_REQUIRE_GPU");
  return v != nullptr && std::string_view(v) != "" && std::string_view(v) != "0";
}

std::string gpu_unavailable_message(const std::string& reason) {
  if (gpu_required())
    return "FUSIONSCOPE_REQUIRE_GPU is set and this GPU test cannot run: " + reason;
  return reason;
}

}  // namespace fusionscope::testing
