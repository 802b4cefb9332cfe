// The gated GEMM: gate and up projections in ONE GEMM over interleaved weights whose epilogue
// applies act(g) * u and writes only the product [rows, hidden]. Two kernels: wgmma + TMA with a
// producer warpgroup and two consumer warpgroups (sm_90a), and mma.sync + cp.async (sm_80, also
// runs on Hopper).
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <string>

#include "fusionscope/kernels/config.h"
#include "fusionscope/kernels/runner.h"

namespace fusionscope::kernels::detail {

class GatedGemm {
 public:
  // w_gate_up: [2 * hidden, dim] interleaved by launch_interleave_gate_up().
  GatedGemm(DType dtype, uint64_t rows, uint64_t hidden, uint64_t dim, Activation act,
            GatedGemmPath path, const void* w_gate_up, int device);
  ~GatedGemm();
  GatedGemm(const GatedGemm&) = delete;
  GatedGemm& operator=(const GatedGemm&) = delete;

  void run(const void* x, void* product, cudaStream_t stream);
  bool hopper() const { return hopper_; }
  std::string path_name() const;

 private:
  struct TensorMaps;
  DType dtype_;
  uint64_t rows_, hidden_, dim_;
  Activation act_;
  const void* w_;
  bool hopper_ = false;
  int sms_ = 0;
  std::unique_ptr<TensorMaps> maps_;  // TMA descriptors, one per input buffer seen
};

// The two kernels' launchers (one translation unit each).
struct GatedGemmArgs {
  const void* x;
  const void* w;
  void* product;
  uint64_t rows, hidden, dim;
  Activation act;
  DType dtype;
};
// Raise the kernels' shared-memory limits; once, before any launch or graph capture.
void prepare_gated_gemm_sm80(DType dtype, Activation act);
void prepare_gated_gemm_sm90(DType dtype, Activation act);
void launch_gated_gemm_sm80(const GatedGemmArgs& a, cudaStream_t stream);
// True when the binary holds the sm_90a kernel and the device runs it.
bool gated_gemm_sm90_available(int device);
void launch_gated_gemm_sm90(const GatedGemmArgs& a, const void* tmap_x, const void* tmap_w, int sms,
                            cudaStream_t stream);
// A 2-D TMA descriptor (128-byte swizzle) for a row-major [rows, cols] tensor of 2-byte elements
// with box [box_rows, 64]; written into `out` (a 128-byte CUtensorMap).
void encode_tensor_map(void* out, const void* base, uint64_t rows, uint64_t cols,
                       uint32_t box_rows);

}  // namespace fusionscope::kernels::detail
