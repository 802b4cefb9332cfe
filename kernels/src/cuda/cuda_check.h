// CUDA and cuBLAS errors become exceptions with the call and place, caught by the runner, which
// reports them in RunResult::error instead of aborting.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace fusionscope::kernels::detail {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda(cudaError_t err, const char* what, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t st, const char* what, const char* file, int line);

}  // namespace fusionscope::kernels::detail

#define FS_CUDA(call)                                                                 \
  do {                                                                                \
    const cudaError_t fs_err_ = (call);                                               \
    if (fs_err_ != cudaSuccess)                                                       \
      ::fusionscope::kernels::detail::throw_cuda(fs_err_, #call, __FILE__, __LINE__); \
  } while (0)

#define FS_CUBLAS(call)                                                                \
  do {                                                                                 \
    const cublasStatus_t fs_st_ = (call);                                              \
    if (fs_st_ != CUBLAS_STATUS_SUCCESS)                                               \
      ::fusionscope::kernels::detail::throw_cublas(fs_st_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: a bad launch configuration shows here, not at the next sync.
#define FS_CUDA_LAUNCHED(what) FS_CUDA(cudaGetLastError())
