#include "fusionscope/analysis/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusionscope::analysis {

size_t HistogramRange::bin_of(double v, size_t bins) const {
  if (bins == 0) return 0;
  double f;
  if (log)
    f = (std::log(std::max(v, lo)) - std::log(lo)) / (std::log(hi) - std::log(lo));
  else
    f = (v - lo) / (hi - lo);
  if (!(f > 0)) return 0;
  return std::min(static_cast<size_t>(f * static_cast<double>(bins)), bins - 1);
}

double HistogramRange::edge(size_t i, size_t bins) const {
  const double f = bins ? static_cast<double>(i) / static_cast<double>(bins) : 0.0;
  return log ? std::exp(std::log(lo) + f * (std::log(hi) - std::log(lo))) : lo + f * (hi - lo);
}

HistogramRange histogram_range(std::span<const double> a, std::span<const double> b) {
  double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
  for (std::span<const double> values : {a, b})
    for (double v : values)
      if (std::isfinite(v)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  HistogramRange r;
  if (lo > hi) return r;  // no values: [0, 1)
  if (hi - lo <= std::abs(hi) * 1e-9) {
    // One value: a range around it.
    const double pad = std::max(std::abs(lo) * 0.05, 1.0);
    r.lo = lo - pad;
    r.hi = hi + pad;
    return r;
  }
  r.log = lo > 0 && hi / lo > 10;
  r.lo = lo;
  r.hi = hi;  // bin_of() puts the largest value in the last bin
  return r;
}

uint32_t Histogram::max_count() const {
  return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

uint64_t Histogram::total() const {
  uint64_t n = 0;
  for (uint32_t c : counts) n += c;
  return n;
}

Histogram make_histogram(std::span<const double> values, const HistogramRange& range, size_t bins) {
  Histogram h;
  h.range = range;
  h.counts.assign(bins, 0);
  if (bins == 0) return h;
  for (double v : values)
    if (std::isfinite(v) && v >= range.lo && v <= range.hi) ++h.counts[range.bin_of(v, bins)];
  return h;
}

}  // namespace fusionscope::analysis
