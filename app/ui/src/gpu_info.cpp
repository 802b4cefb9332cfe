#include "gpu_info.h"

#include <cuda_runtime_api.h>

namespace fusionscope::ui {

std::string GpuStatus::summary() const {
  if (devices.empty()) return "no CUDA device: viewing only (" + reason + ")";
  std::string s = devices.front().name + ", compute capability " +
                  std::to_string(devices.front().cc_major) + "." +
                  std::to_string(devices.front().cc_minor);
  if (devices.size() > 1) s += " and " + std::to_string(devices.size() - 1) + " more";
  return s;
}

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
