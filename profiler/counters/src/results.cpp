// The counters' results read back (CUDA-free, in every build).
#include <limits>

#include "fusionscope/counters/kernel_counters.h"
#include "fusionscope/counters/pm_sampler.h"

namespace fusionscope::counters {

double CounterPassResult::value(size_t kernel, std::string_view name) const {
  if (kernel < kernels.size()) {
    for (size_t i = 0; i < metrics.size(); ++i) {
      if (metrics[i] == name && i < kernels[kernel].values.size()) return kernels[kernel].values[i];
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

int PmSamplingResult::metric_index(std::string_view metric) const {
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i] == metric) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace fusionscope::counters
