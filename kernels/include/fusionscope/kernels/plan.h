// The plan of a configuration in one variant: the kernel launches it makes, in order, with the
// work each must do. This is the "guess" the app shows before a run, next to what was measured.
// CPU-only, like config.h.
#pragma once

#include <string>
#include <vector>

#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels {

struct PlannedLaunch {
  std::string op;        // the op this launch belongs to; equals the NVTX range the runner opens
  std::string kernel;    // what is expected to run, e.g. "cuBLASLt GEMM + bias", "gelu_tanh"
  double flops = 0;      // floating-point operations (a multiply-add counts 2)
  double min_bytes = 0;  // fewest DRAM bytes: each input read once, each output written once
  // Of min_bytes, the output written. A per-kernel count that starts each kernel with an L2
  // free of dirty lines (Nsight Compute's, the counters pass's) may see less of it: what still
  // sits in the L2 when the kernel ends is written later, outside the kernel.
  double min_write_bytes = 0;
};

struct Plan {
  Variant variant = Variant::kEager;
  std::vector<PlannedLaunch> launches;  // per forward pass
  double flops() const;
  double min_bytes() const;
};

// Throws ConfigError when the variant does not apply (see supports()).
Plan make_plan(const MlpConfig& c, Variant v);

}  // namespace fusionscope::kernels
