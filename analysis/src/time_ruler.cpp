#include "fusionscope/analysis/time_ruler.h"

#include <cmath>
#include <cstdio>

namespace fusionscope::analysis {

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

Ruler make_ruler(int64_t view_begin_ns, int64_t view_end_ns, double width_px, double min_label_px) {
  Ruler r;
  if (view_end_ns <= view_begin_ns || !(width_px > 0) || !(min_label_px > 0)) return r;
  const double ns_per_px = static_cast<double>(view_end_ns - view_begin_ns) / width_px;
  const double wanted = ns_per_px * min_label_px;
  // The smallest 1-2-5 step at least as large as wanted (and at least 1 ns).
  int64_t step = 1;
  int64_t minor_div = 5;
  for (int64_t decade = 1;; decade *= 10) {
    if (static_cast<double>(decade) >= wanted) {
      step = decade;
      minor_div = 5;
      break;
    }
    if (static_cast<double>(2 * decade) >= wanted) {
      step = 2 * decade;
      minor_div = 4;
      break;
    }
    if (static_cast<double>(5 * decade) >= wanted) {
      step = 5 * decade;
      minor_div = 5;
      break;
    }
    if (decade == int64_t{100'000'000'000'000'000}) {  // ~3 years; int64 ends at ~292 years
      step = 10 * decade;
      break;
    }
  }
  r.major_step_ns = step;
  r.minor_step_ns = step / minor_div > 0 ? step / minor_div : step;
  const int64_t minor = r.minor_step_ns;
  // The tick count follows width_px / min_label_px; the cap only guards absurd arguments.
  const int64_t last = floor_div(view_end_ns - 1, minor);  // k * minor stays below view_end_ns
  for (int64_t k = floor_div(view_begin_ns, minor); k <= last && r.ticks.size() < 100000; ++k) {
    const int64_t t = k * minor;
    if (t < view_begin_ns) continue;
    r.ticks.push_back({t, t % step == 0});
  }
  // The unit of the largest label on screen.
  const double largest = r.ticks.empty()
                             ? 0.0
                             : std::fmax(std::fabs(static_cast<double>(r.ticks.front().t_ns)),
                                         std::fabs(static_cast<double>(r.ticks.back().t_ns)));
  if (largest >= 1e9) {
    r.unit_ns = 1e9;
    r.unit = "s";
  } else if (largest >= 1e6) {
    r.unit_ns = 1e6;
    r.unit = "ms";
  } else if (largest >= 1e3) {
    r.unit_ns = 1e3;
    r.unit = "us";
  }
  for (double s = static_cast<double>(step) / r.unit_ns; s < 0.999999 && r.decimals < 9; s *= 10)
    ++r.decimals;
  return r;
}

std::string Ruler::label(int64_t t_ns) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, static_cast<double>(t_ns) / unit_ns, unit);
  return buf;
}

}  // namespace fusionscope::analysis
