// The GPU status from the CUDA runtime.
#include "gpu_info.h"

#include <cuda_runtime_api.h>

namespace fusionscope::ui {

GpuStatus query_gpus() {
  GpuStatus status;
  int count = 0;
  // The static runtime loads the driver on first use and reports its absence as an error code.
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    status.reason = cudaGetErrorString(err);
    return status;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    status.devices.push_back({prop.name, prop.major, prop.minor});
  }
  if (status.devices.empty()) status.reason = count == 0 ? "no device found" : "devices unreadable";
  return status;
}

}  // namespace fusionscope::ui
