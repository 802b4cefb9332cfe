// The gated GEMM: gate and up projections in ONE GEMM over interleaved weights whose epilogue
// applies act(g) * u and writes only the product [rows, hidden]. Two kernels: the Hopper GEMM of
// hopper_gemm.h (sm_90a: TMA, wgmma, warp specialisation, clusters) and mma.sync + cp.async
// (sm_80, also runs on Hopper).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>

#include "fusionscope/kernels/config.h"
#include "fusionscope/kernels/runner.h"
#include "hopper_gemm.h"

namespace fusionscope::kernels::detail {

class GatedGemm {
 public:
  // w_gate_up: [2 * hidden, dim] interleaved by launch_interleave_gate_up(). On Hopper the
  // kernel's configuration is measured once per shape on x [rows, dim] and product
  // [rows, hidden] (overwritten), see tune_hopper_gemm(), unless `pinned` gives it (then the
  // Hopper kernel is required).
  GatedGemm(DType dtype, uint64_t rows, uint64_t hidden, uint64_t dim, Activation act,
            GatedGemmPath path, const void* w_gate_up, int device, const void* x, void* product,
            const std::optional<HopperGemmConfig>& pinned = std::nullopt);
  ~GatedGemm();
  GatedGemm(const GatedGemm&) = delete;
  GatedGemm& operator=(const GatedGemm&) = delete;

  void run(const void* x, void* product, cudaStream_t stream);
  bool hopper() const { return hopper_ != nullptr; }
  const HopperGemmConfig& hopper_config() const;  // when hopper()
  std::string path_name() const;
  double tuned_us() const { return tuned_us_; }

 private:
  DType dtype_;
  uint64_t rows_, hidden_, dim_;
  Activation act_;
  const void* w_;
  std::unique_ptr<HopperGemm> hopper_;
  double tuned_us_ = 0;
};

// The sm_80 kernel's launcher.
struct GatedGemmArgs {
  const void* x;
  const void* w;
  void* product;
  uint64_t rows, hidden, dim;
  Activation act;
  DType dtype;
};
// Raise the kernel's shared-memory limit; once, before any launch or graph capture.
void prepare_gated_gemm_sm80(DType dtype, Activation act);
void launch_gated_gemm_sm80(const GatedGemmArgs& a, cudaStream_t stream);

}  // namespace fusionscope::kernels::detail
