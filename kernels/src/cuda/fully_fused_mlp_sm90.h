// The fully fused MLP on Hopper (sm_90a) for layers that are all the same width, 16, 32, 48, 64,
// 96 or 128: wgmma with the activations chained in registers, TMA loads of the input tiles and
// TMA stores of the output.
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
  // the same, 16, 32, 48, 64, 96 or 128, at most kMaxLayers layers whose weights fit in shared
  // memory (5 at 96 and 128 wide).
  static bool applies(const MlpConfig& c, int device);
  static constexpr int kMaxLayers = 8;

  // activate_output: the activation on the last layer too (a segment of a longer MLP).
  FusedMlpSm90(const MlpConfig& c, std::vector<const void*> weights,
               std::vector<const void*> biases, int device, bool activate_output = false);
  ~FusedMlpSm90();
  FusedMlpSm90(const FusedMlpSm90&) = delete;
  FusedMlpSm90& operator=(const FusedMlpSm90&) = delete;

  // One launch at a time per object (one stream, or streams ordered one after the other): its
  // warpgroups take the last tiles from a counter this object owns. Graph replays are fine.
  void run(const void* input, void* output, cudaStream_t stream);
  std::string describe() const;

 private:
  struct State;
  MlpConfig config_;
  std::unique_ptr<State> state_;
};

}  // namespace fusionscope::kernels::detail
