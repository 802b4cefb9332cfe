// The comparison's answer in one line: "B is 1.39x faster: 3 fewer kernels, 2.9x fewer DRAM
// bytes", from the two runs' figures per timed iteration.
#pragma once

#include <optional>
#include <string>

#include "fusionscope/analysis/compare.h"

namespace fusionscope::analysis {

// `dram_a` and `dram_b` are the DRAM bytes of one forward pass of each run, when counted.
std::string comparison_verdict(const RunComparison& c, std::optional<double> dram_a,
                               std::optional<double> dram_b);

}  // namespace fusionscope::analysis
