#include "lt_gemm.h"

#include <string>

#include "cuda_check.h"

namespace fusionscope::kernels::detail {
namespace {

cudaDataType_t data_type(DType d) {
  switch (d) {
    case DType::kFp32:
      return CUDA_R_32F;
    case DType::kFp16:
      return CUDA_R_16F;
    case DType::kBf16:
      return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

cublasLtEpilogue_t epilogue(bool bias, Activation act) {
  switch (act) {
    case Activation::kRelu:
      return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::kGeluTanh:  // cuBLASLt's GELU is the tanh approximation
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case Activation::kNone:
      return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case Activation::kSilu:
      break;
  }
  throw CudaError("cuBLASLt has no SiLU epilogue");
}

}  // namespace

LtGemm::LtGemm(cublasLtHandle_t handle, DType dtype, uint64_t m, uint64_t n, uint64_t k, bool bias,
               Activation epilogue_act, void* workspace, uint64_t workspace_bytes)
    : handle_(handle), workspace_(workspace), workspace_bytes_(workspace_bytes), bias_(bias) {
  const cudaDataType_t t = data_type(dtype);
  FS_CUBLAS(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  FS_CUBLAS(
      cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)));
  FS_CUBLAS(
      cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)));
  const cublasLtEpilogue_t epi = epilogue(bias, epilogue_act);
  FS_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  // Column-major view: A = w^T stored k x n (ld k), B = x^T stored k x m (ld k), C = y^T n x m.
  FS_CUBLAS(cublasLtMatrixLayoutCreate(&a_, t, k, n, static_cast<int64_t>(k)));
  FS_CUBLAS(cublasLtMatrixLayoutCreate(&b_, t, k, m, static_cast<int64_t>(k)));
  FS_CUBLAS(cublasLtMatrixLayoutCreate(&c_, t, n, m, static_cast<int64_t>(n)));

  cublasLtMatmulPreference_t pref = nullptr;
  FS_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  FS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &workspace_bytes_, sizeof(workspace_bytes_)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, c_, c_, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0)
    throw CudaError("cuBLASLt found no algorithm for a " + std::to_string(m) + " x " +
                    std::to_string(n) + " x " + std::to_string(k) + " GEMM with this epilogue");
  algo_ = result.algo;
}

LtGemm::~LtGemm() {
  if (c_) cublasLtMatrixLayoutDestroy(c_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (op_) cublasLtMatmulDescDestroy(op_);
}

void LtGemm::run(const void* x, const void* w, const void* bias, void* y,
                 cudaStream_t stream) const {
  if (bias_)
    FS_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                             sizeof(bias)));
  const float alpha = 1.f, beta = 0.f;
  FS_CUBLAS(cublasLtMatmul(handle_, op_, &alpha, w, a_, x, b_, &beta, y, c_, y, c_, &algo_,
                           workspace_, workspace_bytes_, stream));
}

}  // namespace fusionscope::kernels::detail
