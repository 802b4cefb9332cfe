#include "workload_kernels.h"

#include <cuda_bf16.h>

#include <algorithm>

#include "fusionscope/counters/calibration.h"

namespace fusionscope::counters::detail {

namespace {

__device__ __forceinline__ uint32_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

__global__ void fill_pattern_kernel(uint4* dst, size_t n, uint32_t seed) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint32_t h = mix(i * 4 + seed);
    dst[i] = make_uint4(h | 1u, h ^ 0x9e3779b9u, h + 0x7f4a7c15u, ~h);
  }
}

__global__ void fill_bf16_kernel(__nv_bfloat16* dst, size_t n, uint64_t seed) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float u =
        static_cast<float>(mix(i + seed * 0x9e3779b97f4a7c15ull) >> 8) * (1.0f / 16777216.0f);
    dst[i] = __float2bfloat16(2.0f * u - 1.0f);
  }
}

// Four independent 16-byte loads in flight per thread before the stores.
__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

__global__ void compare_kernel(const uint4* a, const uint4* b, size_t n, unsigned int* mismatch) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint4 x = a[i], y = b[i];
    if (x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w) {
      atomicOr(mismatch, 1u);
      return;
    }
  }
}

constexpr int kThreads = 256;

int grid_for(const void* kernel) {
  int device = 0, sms = 0, per_sm = 0;
  check_cuda(cudaGetDevice(&device), "reading the current device");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
             "reading the SM count");
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0),
             "sizing the grid");
  return std::max(1, sms * std::max(1, per_sm));
}

}  // namespace

void check_cuda(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw WorkloadError(what + ": " + cudaGetErrorString(e));
}

void fill_pattern(void* dst, size_t bytes, uint32_t seed) {
  fill_pattern_kernel<<<grid_for(reinterpret_cast<const void*>(fill_pattern_kernel)), kThreads>>>(
      static_cast<uint4*>(dst), bytes / 16, seed);
  check_cuda(cudaGetLastError(), "launching the fill kernel");
}

void fill_random_bf16(void* dst, size_t count, uint64_t seed) {
  fill_bf16_kernel<<<grid_for(reinterpret_cast<const void*>(fill_bf16_kernel)), kThreads>>>(
      static_cast<__nv_bfloat16*>(dst), count, seed);
  check_cuda(cudaGetLastError(), "launching the bf16 fill kernel");
}

void launch_copy(const void* src, void* dst, size_t bytes) {
  const int grid = grid_for(reinterpret_cast<const void*>(copy_kernel));
  copy_kernel<<<grid, kThreads>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst),
                                  bytes / 16);
  check_cuda(cudaGetLastError(), "launching the copy kernel");
}

bool buffers_equal(const void* a, const void* b, size_t bytes) {
  unsigned int* flag = nullptr;
  check_cuda(cudaMalloc(&flag, sizeof *flag), "allocating the comparison flag");
  unsigned int host = 0;
  cudaError_t e = cudaMemset(flag, 0, sizeof *flag);
  if (e == cudaSuccess) {
    compare_kernel<<<grid_for(reinterpret_cast<const void*>(compare_kernel)), kThreads>>>(
        static_cast<const uint4*>(a), static_cast<const uint4*>(b), bytes / 16, flag);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaMemcpy(&host, flag, sizeof host, cudaMemcpyDeviceToHost);
  cudaFree(flag);
  check_cuda(e, "comparing buffers");
  return host == 0;
}

}  // namespace fusionscope::counters::detail
