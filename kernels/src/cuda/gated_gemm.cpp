#include "gated_gemm.h"

#include <cuda.h>

#include "cuda_check.h"

namespace fusionscope::kernels::detail {

struct GatedGemm::TensorMaps {
  CUtensorMap weights{};
  std::map<const void*, CUtensorMap> inputs;  // per input buffer (the runner rotates them)
};

GatedGemm::GatedGemm(DType dtype, uint64_t rows, uint64_t hidden, uint64_t dim, Activation act,
                     GatedGemmPath path, const void* w_gate_up, int device)
    : dtype_(dtype), rows_(rows), hidden_(hidden), dim_(dim), act_(act), w_(w_gate_up) {
  if (dtype == DType::kFp32) throw CudaError("gated-gemm: fp32 is not supported");
  const bool can_hopper = gated_gemm_sm90_available(device);
  switch (path) {
    case GatedGemmPath::kAuto:
      hopper_ = can_hopper;
      break;
    case GatedGemmPath::kHopperWgmma:
      if (!can_hopper)
        throw CudaError(
            "gated-gemm: the wgmma kernel needs an sm_90 GPU and a build with "
            "sm_90a code");
      hopper_ = true;
      break;
    case GatedGemmPath::kAmpereMmaSync:
      hopper_ = false;
      break;
  }
  FS_CUDA(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
  if (hopper_) {
    prepare_gated_gemm_sm90(dtype, act);
  } else {
    prepare_gated_gemm_sm80(dtype, act);
  }
  if (hopper_) {
    maps_ = std::make_unique<TensorMaps>();
    encode_tensor_map(&maps_->weights, w_, 2 * hidden_, dim_, 256);
  }
}

GatedGemm::~GatedGemm() = default;

std::string GatedGemm::path_name() const {
  return hopper_ ? "gated GEMM: wgmma + TMA, warp-specialised (sm_90a)"
                 : "gated GEMM: mma.sync + cp.async (sm_80 code)";
}

void GatedGemm::run(const void* x, void* product, cudaStream_t stream) {
  const GatedGemmArgs args{x, w_, product, rows_, hidden_, dim_, act_, dtype_};
  if (!hopper_) {
    launch_gated_gemm_sm80(args, stream);
    return;
  }
  auto it = maps_->inputs.find(x);
  if (it == maps_->inputs.end()) {
    CUtensorMap m{};
    encode_tensor_map(&m, x, rows_, dim_, 128);
    it = maps_->inputs.emplace(x, m).first;
  }
  launch_gated_gemm_sm90(args, &it->second, &maps_->weights, sms_, stream);
}

}  // namespace fusionscope::kernels::detail
