#include "fusionscope/analysis/sweep_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusionscope::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool known(double v) {
  return std::isfinite(v) && v > 0;
}

}  // namespace

SweepChart build_sweep_chart(const std::vector<SweepSample>& samples, const std::string& baseline) {
  SweepChart chart;
  for (const SweepSample& s : samples)
    if (std::isfinite(s.size) && s.size > 0) chart.sizes.push_back(s.size);
  std::sort(chart.sizes.begin(), chart.sizes.end());
  chart.sizes.erase(std::unique(chart.sizes.begin(), chart.sizes.end()), chart.sizes.end());
  const size_t n = chart.sizes.size();
  auto slot_of = [&](double size) {
    return static_cast<size_t>(std::lower_bound(chart.sizes.begin(), chart.sizes.end(), size) -
                               chart.sizes.begin());
  };
  for (const SweepSample& s : samples) {
    if (!(std::isfinite(s.size) && s.size > 0)) continue;
    auto it = std::find_if(chart.series.begin(), chart.series.end(),
                           [&](const SweepSeries& x) { return x.name == s.series; });
    if (it == chart.series.end()) {
      SweepSeries series;
      series.name = s.series;
      series.time_ns.assign(n, kNaN);
      series.bound_ns.assign(n, kNaN);
      series.speedup.assign(n, kNaN);
      chart.series.push_back(std::move(series));
      it = std::prev(chart.series.end());
    }
    const size_t i = slot_of(s.size);
    if (known(s.time_ns)) it->time_ns[i] = s.time_ns;  // a later measurement of a point wins
    if (known(s.bound_ns)) it->bound_ns[i] = s.bound_ns;
  }
  if (chart.series.empty()) return chart;

  const SweepSeries* base = &chart.series.front();
  for (const SweepSeries& s : chart.series)
    if (s.name == baseline) base = &s;
  chart.baseline = base->name;
  const std::vector<double> base_time = base->time_ns;

  bool any_time = false;
  for (SweepSeries& s : chart.series) {
    for (size_t i = 0; i < n; ++i) {
      for (double v : {s.time_ns[i], s.bound_ns[i]}) {
        if (!known(v)) continue;
        chart.min_time_ns = any_time ? std::min(chart.min_time_ns, v) : v;
        chart.max_time_ns = any_time ? std::max(chart.max_time_ns, v) : v;
        any_time = true;
      }
      if (known(s.time_ns[i]) && known(base_time[i])) {
        s.speedup[i] = base_time[i] / s.time_ns[i];
        chart.min_speedup = std::min(chart.min_speedup, s.speedup[i]);
        chart.max_speedup = std::max(chart.max_speedup, s.speedup[i]);
      }
    }
  }

  // Best other series at each size; fusion pays off from the first size of the final stretch of
  // sizes where the best one is faster than the baseline.
  std::vector<double> best(n, kNaN);
  std::vector<std::string> best_name(n);
  for (const SweepSeries& s : chart.series) {
    if (s.name == chart.baseline) continue;
    for (size_t i = 0; i < n; ++i)
      if (std::isfinite(s.speedup[i]) && !(s.speedup[i] <= best[i])) {
        best[i] = s.speedup[i];
        best_name[i] = s.name;
      }
  }
  std::optional<double> from;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(best[i])) continue;  // nothing measured there: it neither wins nor loses
    if (best[i] > 1.0) {
      if (!from) from = chart.sizes[i];
    } else {
      from.reset();
    }
  }
  chart.pays_off_from = from;
  for (size_t i = n; i-- > 0;) {
    if (!std::isfinite(best[i])) continue;
    chart.best_at_largest = best_name[i];
    chart.best_speedup_at_largest = best[i];
    break;
  }
  return chart;
}

double Log2Axis::fraction(double v) const {
  if (!(v > 0)) return -1;
  return (std::log2(v) - lo_exp) / (hi_exp - lo_exp);
}

std::vector<double> Log2Axis::ticks() const {
  std::vector<double> out;
  for (double e = lo_exp; e <= hi_exp + 1e-9; e += 1) out.push_back(std::exp2(e));
  return out;
}

Log2Axis log2_axis(double min_value, double max_value) {
  Log2Axis a;
  if (!(min_value > 0) || !(max_value > 0) || !std::isfinite(min_value) ||
      !std::isfinite(max_value))
    return a;
  if (max_value < min_value) std::swap(min_value, max_value);
  a.lo_exp = std::floor(std::log2(min_value) + 1e-9);
  a.hi_exp = std::ceil(std::log2(max_value) - 1e-9);
  if (a.hi_exp <= a.lo_exp) a.hi_exp = a.lo_exp + 1;
  return a;
}

}  // namespace fusionscope::analysis
