#include "gpu_guard.h"

#include <cuda_runtime_api.h>

namespace fusionscope::testing {

std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return cudaGetErrorString(err);
  if (count == 0) return "no CUDA device";
  return {};
}

}  // namespace fusionscope::testing
