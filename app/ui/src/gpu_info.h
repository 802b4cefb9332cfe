// Whether this machine can capture: the CUDA devices the runtime sees, or why there are none.
#pragma once

#include <string>
#include <vector>

namespace fusionscope::ui {

struct GpuDevice {
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
};

struct GpuStatus {
  std::vector<GpuDevice> devices;
  std::string reason;  // why there is no device (empty when there is one)
  bool available() const { return !devices.empty(); }
  // "NVIDIA H100 80GB HBM3, compute capability 9.0" or "no CUDA device: viewing only (reason)".
  std::string summary() const;
};

// Asks the CUDA runtime; without a driver or a device it returns the reason, never fails.
GpuStatus query_gpus();

}  // namespace fusionscope::ui
