#include "cuda_check.h"
#include "gpu_delay.h"

namespace fusionscope::kernels::detail {
namespace {

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void delay_kernel(uint64_t ns) {
  const uint64_t end = global_ns() + ns;
  while (global_ns() < end) {
  }
}

}  // namespace

void launch_gpu_delay(uint32_t microseconds, cudaStream_t stream) {
  delay_kernel<<<1, 1, 0, stream>>>(uint64_t{microseconds} * 1000);
  FS_CUDA_LAUNCHED("gpu_delay");
}

}  // namespace fusionscope::kernels::detail
