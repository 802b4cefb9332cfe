// One cuBLASLt GEMM y[m, n] = epilogue(x[m, k] w[n, k]^T (+ bias[n])) with row-major tensors, as
// PyTorch's addmm issues it (column-major "TN": y^T = w x^T). The descriptors and the algorithm
// are chosen once, so each run() is only the matmul call.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels::detail {

class LtGemm {
 public:
  // epilogue_act: kNone, kRelu or kGeluTanh (cuBLASLt has no SiLU epilogue).
  LtGemm(cublasLtHandle_t handle, DType dtype, uint64_t m, uint64_t n, uint64_t k, bool bias,
         Activation epilogue_act, void* workspace, uint64_t workspace_bytes);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  void run(const void* x, const void* w, const void* bias, void* y, cudaStream_t stream) const;

 private:
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  void* workspace_;
  uint64_t workspace_bytes_;
  bool bias_;
};

}  // namespace fusionscope::kernels::detail
