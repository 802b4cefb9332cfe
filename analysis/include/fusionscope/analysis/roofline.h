// The roofline of a session's GPU and its kernels as points on it: arithmetic intensity (FLOPs
// over DRAM bytes, measured) against achieved FLOP/s, on log-log axes, under the bandwidth slope
// and the flat tensor and fp32 roofs (bandwidth.h's Ceilings).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fusionscope/analysis/bandwidth.h"

namespace fusionscope::analysis {

struct RooflinePoint {
  uint32_t traffic = 0;   // index into RunTraffic::kernels
  double intensity = 0;   // flop/byte
  double flop_rate = 0;   // flop/s
  double attainable = 0;  // under the ceilings at this intensity (tensor roof), flop/s; 0 = unknown
  bool memory_bound = false;  // left of the ridge point
};

// The kernels that can be placed: positive FLOPs, bytes and duration. Others (a copy kernel
// without FLOPs...) are left out and counted in `left_out` when given.
std::vector<RooflinePoint> roofline_points(const RunTraffic& traffic, const Ceilings& ceilings,
                                           size_t* left_out = nullptr);

// A log axis: the powers of ten from 10^lo to 10^hi.
struct LogRange {
  int lo = 0;
  int hi = 1;
  double min() const;
  double max() const;
  // Position of v in [0, 1] along the axis (values outside fall outside [0, 1]).
  double fraction(double v) const;
};

// The decades enclosing every positive, finite value, widened to at least `min_decades`.
LogRange log_range(std::span<const double> values, int min_decades = 2);

}  // namespace fusionscope::analysis
