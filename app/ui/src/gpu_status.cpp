#include "gpu_info.h"

namespace fusionscope::ui {

std::string GpuStatus::summary() const {
  if (devices.empty()) return "no CUDA device: viewing only (" + reason + ")";
  std::string s = devices.front().name + ", compute capability " +
                  std::to_string(devices.front().cc_major) + "." +
                  std::to_string(devices.front().cc_minor);
  if (devices.size() > 1) s += " and " + std::to_string(devices.size() - 1) + " more";
  return s;
}

}  // namespace fusionscope::ui
