#include "gated_gemm.h"

#include "cuda_check.h"
#include "fusionscope/kernels/config.h"
#include "hopper_gemm.h"
#include "kernel_pins.h"

namespace fusionscope::kernels::detail {

GatedGemm::GatedGemm(DType dtype, uint64_t rows, uint64_t hidden, uint64_t dim, Activation act,
                     GatedGemmPath path, const void* w_gate_up, int device, const void* x,
                     void* product, const std::optional<HopperGemmConfig>& pinned)
    : dtype_(dtype), rows_(rows), hidden_(hidden), dim_(dim), act_(act), w_(w_gate_up) {
  if (dtype == DType::kFp32) throw CudaError("gated-gemm: fp32 is not supported");
  const bool can_hopper = hopper_gemm_available(device);
  bool use_hopper = false;
  switch (path) {
    case GatedGemmPath::kAuto:
      use_hopper = can_hopper;
      break;
    case GatedGemmPath::kHopperWgmma:
      if (!can_hopper)
        throw CudaError(
            "gated-gemm: the wgmma kernel needs an sm_90 GPU and a build with "
            "sm_90a code");
      use_hopper = true;
      break;
    case GatedGemmPath::kAmpereMmaSync:
      break;
  }
  if (pinned && !use_hopper)
    throw ConfigError("kernel pin gated=" + hopper_config_text(*pinned) +
                      ": the Hopper gated GEMM does not run here (" +
                      (can_hopper ? "the sm_80 path was asked for" : "it needs an sm_90 GPU") +
                      ")");
  if (use_hopper && pinned) {
    hopper_ =
        std::make_unique<HopperGemm>(dtype, act, rows, 2 * hidden, dim, w_gate_up, *pinned, device);
  } else if (use_hopper) {
    const HopperTuning t =
        tune_hopper_gemm(dtype, act, rows, 2 * hidden, dim, w_gate_up, x, product, device, nullptr);
    tuned_us_ = t.us;
    hopper_ = std::make_unique<HopperGemm>(dtype, act, rows, 2 * hidden, dim, w_gate_up, t.config,
                                           device);
  } else {
    prepare_gated_gemm_sm80(dtype, act);
  }
}

GatedGemm::~GatedGemm() = default;

const HopperGemmConfig& GatedGemm::hopper_config() const {
  return hopper_->config();
}

std::string GatedGemm::path_name() const {
  return hopper_ ? "gated GEMM: wgmma + TMA, warp-specialised (sm_90a, " +
                       to_string(hopper_->config()) + ")"
                 : "gated GEMM: mma.sync + cp.async (sm_80 code)";
}

void GatedGemm::run(const void* x, void* product, cudaStream_t stream) {
  if (hopper_) {
    hopper_->run(x, product, stream);
    return;
  }
  launch_gated_gemm_sm80({x, w_, product, rows_, hidden_, dim_, act_, dtype_}, stream);
}

}  // namespace fusionscope::kernels::detail
