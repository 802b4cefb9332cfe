#include "fusionscope/analysis/verdict.h"

#include <cmath>

#include "fusionscope/analysis/format.h"

namespace fusionscope::analysis {

std::string comparison_verdict(const RunComparison& c, std::optional<double> dram_a,
                               std::optional<double> dram_b) {
  std::string s;
  if (!c.kernel_time_speedup) {
    s = "B has no kernel time to compare";
  } else if (*c.kernel_time_speedup > 1.005) {
    s = "B is " + format_factor(*c.kernel_time_speedup, 2) + " faster";
  } else if (*c.kernel_time_speedup < 0.995 && *c.kernel_time_speedup > 0) {
    s = "B is " + format_factor(1.0 / *c.kernel_time_speedup, 2) + " slower";
  } else {
    s = "A and B take the same GPU time";
  }
  std::string why;
  const long kernels = std::lround(c.a.kernels_per_iteration() - c.b.kernels_per_iteration());
  if (kernels > 0)
    why = std::to_string(kernels) + (kernels == 1 ? " fewer kernel" : " fewer kernels");
  else if (kernels < 0)
    why = std::to_string(-kernels) + (kernels == -1 ? " more kernel" : " more kernels");
  if (dram_a && dram_b && *dram_a > 0 && *dram_b > 0) {
    const double r = *dram_a / *dram_b;
    std::string bytes;
    if (r > 1.005)
      bytes = format_factor(r, 1) + " fewer DRAM bytes";
    else if (r < 0.995)
      bytes = format_factor(1.0 / r, 1) + " more DRAM bytes";
    else
      bytes = "the same DRAM bytes";
    why += (why.empty() ? "" : ", ") + bytes;
  }
  return why.empty() ? s : s + ": " + why;
}

}  // namespace fusionscope::analysis
