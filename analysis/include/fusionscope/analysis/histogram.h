// Duration histograms: counts of values in equal bins of a linear or logarithmic range, and the
// range two sets of values share so that their histograms overlay bin for bin (Tracy's compare
// window draws A and B that way).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace fusionscope::analysis {

struct HistogramRange {
  double lo = 0, hi = 1;
  bool log = false;  // bins equal in log space (values spanning more than a decade)
  // The bin of v among `bins` (clamped to the ends).
  size_t bin_of(double v, size_t bins) const;
  // The lower edge of bin i of `bins`.
  double edge(size_t i, size_t bins) const;
};

// A range covering every finite value of both sets (b may be empty); log when they span more
// than a factor of 10 and are all positive. A single value gets a range around it.
HistogramRange histogram_range(std::span<const double> a, std::span<const double> b = {});

struct Histogram {
  HistogramRange range;
  std::vector<uint32_t> counts;
  uint32_t max_count() const;
  uint64_t total() const;
};

Histogram make_histogram(std::span<const double> values, const HistogramRange& range, size_t bins);

}  // namespace fusionscope::analysis
