// The whole MLP in one kernel for narrow widths (16..128, multiples of 16), in the manner of
// tiny-cuda-nn's fully fused MLP: every layer's weights live in shared memory for the whole
// kernel, each warp carries 16 rows through all layers with its activations in shared memory and
// registers, and only the input and the final output touch device memory. Layers whose weights do
// not all fit in one block's shared memory (more than 5 at 128 wide) run as a few such kernels,
// each taking as many layers as fit (fused_segments in buffers.h), with the activations between
// them in device memory.
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
  // scratch: the device buffers that hold the activations between kernels when the layers take
  // several (one, or two used in turn; rows x the widest width each), as buffer_specs() lists
  // them. activate_output: the activation on the last layer too (for a segment).
  FullyFusedMlp(const MlpConfig& c, std::vector<const void*> weights,
                std::vector<const void*> biases, int device, std::vector<void*> scratch = {},
                bool activate_output = false);
  ~FullyFusedMlp();
  FullyFusedMlp(const FullyFusedMlp&) = delete;
  FullyFusedMlp& operator=(const FullyFusedMlp&) = delete;
  void run(const void* input, void* output, cudaStream_t stream) const;
  // The kernels the layers take (1 unless they do not fit one block), and kernel i alone:
  // input is read by the first only, output written by the last only, the others use scratch.
  size_t kernels() const { return segments_.empty() ? 1 : segments_.size(); }
  void run_kernel(size_t i, const void* input, void* output, cudaStream_t stream) const;
  // Which kernel runs: the Hopper one (every width the same, see FusedMlpSm90::applies) or
  // mma.sync, with its launch shape; for several kernels, each with its layers.
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
  bool act_out_ = false;
  std::unique_ptr<FusedMlpSm90> sm90_;  // set when FusedMlpSm90::applies()
  // Several kernels: each segment's own FullyFusedMlp, and the buffers between them.
  std::vector<std::unique_ptr<FullyFusedMlp>> segments_;  // as fused_segments(config_)
  std::vector<void*> scratch_;
};

}  // namespace fusionscope::kernels::detail
