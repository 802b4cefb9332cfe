#include "cuda_check.h"

#include <filesystem>

namespace fusionscope::kernels::detail {
namespace {
std::string where(const char* file, int line) {
  return std::filesystem::path(file).filename().string() + ":" + std::to_string(line);
}
}  // namespace

void throw_cuda(cudaError_t err, const char* what, const char* file, int line) {
  throw CudaError(std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                  cudaGetErrorString(err) + ") in " + what + " at " + where(file, line));
}

void throw_cublas(cublasStatus_t st, const char* what, const char* file, int line) {
  throw CudaError(std::string("cuBLASLt error ") + std::to_string(static_cast<int>(st)) + " in " +
                  what + " at " + where(file, line));
}

}  // namespace fusionscope::kernels::detail
