// The figures behind a sweep's chart: one size varied over a range, every variant measured at
// each point; per variant its time and its speedup over a baseline (eager) against the size, on a
// log2 size axis, and from which size on fusion pays off. The view only draws them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fusionscope::analysis {

// One variant measured at one size. time_ns <= 0 (or NaN) means not measured (a failed run).
struct SweepSample {
  double size = 0;
  std::string series;   // the variant
  double time_ns = 0;   // GPU time per iteration
  double bound_ns = 0;  // the roofline bound; 0 = unknown
};

struct SweepSeries {
  std::string name;
  // Aligned with SweepChart::sizes; NaN where the series has no measurement.
  std::vector<double> time_ns;
  std::vector<double> bound_ns;
  std::vector<double> speedup;  // baseline time / this time
};

struct SweepChart {
  std::vector<double> sizes;                // ascending, distinct
  std::vector<SweepSeries> series;          // in order of first appearance
  std::string baseline;                     // what the speedups are over ("" when there is none)
  double min_time_ns = 0, max_time_ns = 0;  // over times and bounds that are known
  double min_speedup = 1, max_speedup = 1;  // 1 included, so the 1x line is always in range
  // The smallest size from which the fastest non-baseline series beats the baseline at that and
  // every larger measured size; empty when it never does.
  std::optional<double> pays_off_from;
  std::string best_at_largest;  // the fastest series at the largest size
  double best_speedup_at_largest = 0;
  bool empty() const { return sizes.empty(); }
};

// `baseline` names the series the others are compared with; when absent from the samples, the
// first series is the baseline.
SweepChart build_sweep_chart(const std::vector<SweepSample>& samples,
                             const std::string& baseline = "eager");

// A log2 axis: from the power of two at or below the smallest value to the one at or above the
// largest (at least one octave).
struct Log2Axis {
  double lo_exp = 0, hi_exp = 1;
  // Position of v along the axis in [0, 1] (outside for values outside the range).
  double fraction(double v) const;
  std::vector<double> ticks() const;  // the powers of two in range
};
Log2Axis log2_axis(double min_value, double max_value);

}  // namespace fusionscope::analysis
