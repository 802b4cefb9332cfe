// The whole MLP in one kernel for narrow widths (16..128, multiples of 16), in the manner of
// tiny-cuda-nn's fully fused MLP: every layer's weights live in shared memory for the whole
// kernel, each warp carries 16 rows through all layers with its activations in shared memory and
// registers, and only the input and the final output touch device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "../buffers.h"
#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels::detail {

class FusedMlpSm90;

class FullyFusedMlp {
 public:
  // weights[l] is [out_l, in_l] and biases[l] is [out_l] (null without bias), device memory.
  FullyFusedMlp(const MlpConfig& c, std::vector<const void*> weights,
                std::vector<const void*> biases, int device);
  ~FullyFusedMlp();
  FullyFusedMlp(const FullyFusedMlp&) = delete;
  FullyFusedMlp& operator=(const FullyFusedMlp&) = delete;
  void run(const void* input, void* output, cudaStream_t stream) const;
  // Which kernel runs: the Hopper one (every width the same, see FusedMlpSm90::applies) or
  // mma.sync, with its launch shape.
  std::string describe() const;
  int warps_per_block() const { return warps_; }
  int blocks() const { return blocks_; }

 private:
  MlpConfig config_;
  std::vector<const void*> weights_, biases_;
  int warps_ = 0;
  int blocks_ = 0;
  size_t smem_ = 0;
  int wmax_ = 0;
  std::unique_ptr<FusedMlpSm90> sm90_;  // set when FusedMlpSm90::applies()
};

}  // namespace fusionscope::kernels::detail
