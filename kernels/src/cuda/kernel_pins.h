// Set-up choices written down and pinned: the kernels a run's set-up otherwise picks by timing
// candidates on the device (the Hopper GEMM's configuration for the gated GEMM; ours or
// cuBLASLt for the down projection). A run reports its choices (RunResult::kernel_choices) and
// another run, in another process, can take them (RunOptions::pin_kernels) to run the same
// kernels without timing anything, e.g. beside Nsight Compute.
//
// Text: space-separated `gated=CONFIG` and `down=CONFIG|cublaslt`, where CONFIG is
// SCHEDULE:CLUSTER[xN]:GROUP[:ORDER[:HINTS[:STAGGER]]] (schedule coop, coop128 or coop192 for
// narrower cooperative tiles, or pp; cluster along M
// and optionally N; group_m; order m or n, with s appended for K serpentine and then d for dynamic
// tiles; L2 hints of A and B, each n, f or l; stagger).
#pragma once

#include <optional>
#include <string>

#include "hopper_gemm.h"

namespace fusionscope::kernels::detail {

struct DownPin {
  bool cublaslt = true;
  HopperGemmConfig config;  // when !cublaslt
};

struct KernelPins {
  std::optional<HopperGemmConfig> gated;
  std::optional<DownPin> down;
  bool empty() const { return !gated && !down; }
};

// Both throw ConfigError naming the text that is wrong.
HopperGemmConfig parse_hopper_config(const std::string& text);
KernelPins parse_kernel_pins(const std::string& text);

// The inverses: parse_hopper_config(hopper_config_text(c)) == c.
std::string hopper_config_text(const HopperGemmConfig& c);
std::string kernel_pins_text(const KernelPins& pins);

}  // namespace fusionscope::kernels::detail
