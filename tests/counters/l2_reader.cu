#include "l2_reader.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace fusionscope::counters::test {
namespace {

__global__ void read_kernel(const uint4* __restrict__ src, size_t n, bool evict_last,
                            uint32_t* sink) {
  uint64_t policy = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if (evict_last)
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
#endif
  uint32_t acc = 0;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    uint4 v;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (evict_last) {
      asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(src + i), "l"(policy));
    } else {
      v = src[i];
    }
#else
    v = src[i];
#endif
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u && threadIdx.x == 0xffffu) *sink = acc;  // never: keeps the loads
}

}  // namespace

void launch_l2_read(const void* buffer, size_t bytes, bool evict_last) {
  read_kernel<<<264, 512>>>(static_cast<const uint4*>(buffer), bytes / 16, evict_last, nullptr);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    throw std::runtime_error(std::string("l2 read: ") + cudaGetErrorString(e));
}

}  // namespace fusionscope::counters::test
