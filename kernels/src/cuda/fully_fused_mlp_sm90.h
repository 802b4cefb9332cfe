// The fully fused MLP on Hopper (sm_90a) for layers that are all 64 wide (or all 32 or all 16,
// packed 2 or 4 rows to a 64-wide row): wgmma with the activations chained in registers, TMA
// loads of the input tiles and TMA stores of the output.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels::detail {

class FusedMlpSm90 {
 public:
  // True when this kernel applies: an sm_90 device running sm_90a code, fp16/bf16, every width
  // the same, 16, 32 or 64, at most kMaxLayers layers.
  static bool applies(const MlpConfig& c, int device);
  static constexpr int kMaxLayers = 8;

  FusedMlpSm90(const MlpConfig& c, std::vector<const void*> weights,
               std::vector<const void*> biases, int device);
  ~FusedMlpSm90();
  FusedMlpSm90(const FusedMlpSm90&) = delete;
  FusedMlpSm90& operator=(const FusedMlpSm90&) = delete;

  void run(const void* input, void* output, cudaStream_t stream);
  std::string describe() const;

 private:
  struct State;
  MlpConfig config_;
  std::unique_ptr<State> state_;
};

}  // namespace fusionscope::kernels::detail
