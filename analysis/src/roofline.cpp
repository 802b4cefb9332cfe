#include "fusionscope/analysis/roofline.h"

#include <algorithm>
#include <cmath>

namespace fusionscope::analysis {

std::vector<RooflinePoint> roofline_points(const RunTraffic& traffic, const Ceilings& c,
                                           size_t* left_out) {
  std::vector<RooflinePoint> out;
  size_t skipped = 0;
  for (uint32_t i = 0; i < traffic.kernels.size(); ++i) {
    const KernelTraffic& k = traffic.kernels[i];
    const double ai = k.intensity(), rate = k.flop_rate();
    if (!(ai > 0) || !(rate > 0) || !std::isfinite(ai) || !std::isfinite(rate)) {
      ++skipped;
      continue;
    }
    RooflinePoint p;
    p.traffic = i;
    p.intensity = ai;
    p.flop_rate = rate;
    p.attainable = attainable(c.bandwidth, c.tensor_flops, ai);
    const double ridge = c.ridge();
    p.memory_bound = ridge > 0 && ai < ridge;
    out.push_back(p);
  }
  if (left_out) *left_out = skipped;
  return out;
}

double LogRange::min() const {
  return std::pow(10.0, lo);
}

double LogRange::max() const {
  return std::pow(10.0, hi);
}

double LogRange::fraction(double v) const {
  if (!(v > 0) || hi <= lo) return 0.0;
  return (std::log10(v) - lo) / static_cast<double>(hi - lo);
}

LogRange log_range(std::span<const double> values, int min_decades) {
  bool any = false;
  double lo = 0, hi = 0;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) continue;
    const double l = std::log10(v);
    lo = any ? std::min(lo, l) : l;
    hi = any ? std::max(hi, l) : l;
    any = true;
  }
  LogRange r;
  if (!any) {
    r.lo = 0;
    r.hi = std::max(min_decades, 1);
    return r;
  }
  r.lo = static_cast<int>(std::floor(lo));
  r.hi = static_cast<int>(std::ceil(hi));
  if (r.hi == r.lo) ++r.hi;
  while (r.hi - r.lo < min_decades) {
    // Widen on the side with less room around the values.
    if (lo - r.lo < r.hi - hi)
      --r.lo;
    else
      ++r.hi;
  }
  return r;
}

}  // namespace fusionscope::analysis
