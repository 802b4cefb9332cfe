#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>

#include "fusionscope/counters/calibration.h"
#include "workload_kernels.h"

namespace fusionscope::counters {

using detail::check_cuda;

CopyWorkload::CopyWorkload(size_t bytes) : bytes_(bytes) {
  if (bytes == 0 || bytes % 16 != 0) {
    throw WorkloadError("copy size must be a positive multiple of 16 bytes, not " +
                        std::to_string(bytes));
  }
  check_cuda(cudaMalloc(&src_, bytes),
             "allocating the copy source (" + std::to_string(bytes) + " bytes)");
  const cudaError_t e = cudaMalloc(&dst_, bytes);
  if (e != cudaSuccess) {
    cudaFree(src_);
    check_cuda(e, "allocating the copy destination (" + std::to_string(bytes) + " bytes)");
  }
  try {
    detail::fill_pattern(src_, bytes, 0x5eed);
    check_cuda(cudaMemset(dst_, 0, bytes), "clearing the copy destination");
    check_cuda(cudaDeviceSynchronize(), "preparing the copy buffers");
  } catch (...) {
    cudaFree(src_);
    cudaFree(dst_);
    throw;
  }
}

CopyWorkload::~CopyWorkload() {
  cudaFree(src_);
  cudaFree(dst_);
}

void CopyWorkload::launch() {
  detail::launch_copy(src_, dst_, bytes_);
}

bool CopyWorkload::verify() {
  return detail::buffers_equal(src_, dst_, bytes_);
}

namespace {

void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw WorkloadError(std::string(what) + ": " + cublasLtGetStatusString(s));
  }
}

}  // namespace

struct GemmWorkload::Impl {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr, d_layout = nullptr;
  cublasLtMatmulAlgo_t algo{};
  void* a = nullptr;
  void* b = nullptr;
  void* d = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = size_t{32} << 20;

  ~Impl() {
    if (d_layout) cublasLtMatrixLayoutDestroy(d_layout);
    if (b_layout) cublasLtMatrixLayoutDestroy(b_layout);
    if (a_layout) cublasLtMatrixLayoutDestroy(a_layout);
    if (op) cublasLtMatmulDescDestroy(op);
    if (handle) cublasLtDestroy(handle);
    cudaFree(a);
    cudaFree(b);
    cudaFree(d);
    cudaFree(workspace);
  }
};

// D (m x n) = A^T (m x k) * B (k x n), column-major, A stored k x m: cuBLASLt's "TN" layout,
// which its fastest Hopper kernels take.
GemmWorkload::GemmWorkload(int m, int n, int k)
    : impl_(std::make_unique<Impl>()), m_(m), n_(n), k_(k) {
  if (m <= 0 || n <= 0 || k <= 0) {
    throw WorkloadError("GEMM sizes must be positive, not " + std::to_string(m) + " x " +
                        std::to_string(n) + " x " + std::to_string(k));
  }
  Impl& g = *impl_;
  const size_t mm = static_cast<size_t>(m), nn = static_cast<size_t>(n),
               kk = static_cast<size_t>(k);
  check_cuda(cudaMalloc(&g.a, mm * kk * 2), "allocating GEMM A");
  check_cuda(cudaMalloc(&g.b, kk * nn * 2), "allocating GEMM B");
  check_cuda(cudaMalloc(&g.d, mm * nn * 2), "allocating GEMM D");
  check_cuda(cudaMalloc(&g.workspace, g.workspace_bytes), "allocating the cuBLASLt workspace");
  detail::fill_random_bf16(g.a, mm * kk, 1);
  detail::fill_random_bf16(g.b, kk * nn, 2);
  check_cuda(cudaMemset(g.d, 0, mm * nn * 2), "clearing GEMM D");

  check_blas(cublasLtCreate(&g.handle), "creating the cuBLASLt handle");
  check_blas(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "creating the GEMM");
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  check_blas(
      cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a),
      "setting GEMM transposes");
  check_blas(
      cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b),
      "setting GEMM transposes");
  check_blas(cublasLtMatrixLayoutCreate(&g.a_layout, CUDA_R_16BF, kk, mm, static_cast<int64_t>(kk)),
             "describing A");
  check_blas(cublasLtMatrixLayoutCreate(&g.b_layout, CUDA_R_16BF, kk, nn, static_cast<int64_t>(kk)),
             "describing B");
  check_blas(cublasLtMatrixLayoutCreate(&g.d_layout, CUDA_R_16BF, mm, nn, static_cast<int64_t>(mm)),
             "describing D");

  cublasLtMatmulPreference_t pref = nullptr;
  check_blas(cublasLtMatmulPreferenceCreate(&pref), "creating the algorithm preference");
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &g.workspace_bytes, sizeof g.workspace_bytes);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(
      g.handle, g.op, g.a_layout, g.b_layout, g.d_layout, g.d_layout, pref, 1, &heuristic, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  check_blas(s, "choosing a GEMM algorithm");
  if (found == 0) throw WorkloadError("cuBLASLt has no bf16 GEMM algorithm for this GPU");
  g.algo = heuristic.algo;
  check_cuda(cudaDeviceSynchronize(), "preparing the GEMM inputs");
}

GemmWorkload::~GemmWorkload() = default;

void GemmWorkload::launch() {
  Impl& g = *impl_;
  const float alpha = 1.0f, beta = 0.0f;
  check_blas(
      cublasLtMatmul(g.handle, g.op, &alpha, g.a, g.a_layout, g.b, g.b_layout, &beta, g.d,
                     g.d_layout, g.d, g.d_layout, &g.algo, g.workspace, g.workspace_bytes, nullptr),
      "running the GEMM");
  check_cuda(cudaGetLastError(), "launching the GEMM");
}

}  // namespace fusionscope::counters
