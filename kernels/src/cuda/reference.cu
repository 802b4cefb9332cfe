#include <algorithm>
#include <vector>

#include "cuda_check.h"
#include "element.cuh"
#include "reference.h"

namespace fusionscope::kernels::detail {
namespace {

constexpr int kTile = 64;   // output tile per block
constexpr int kTileK = 16;  // k per shared-memory step
// 256 threads, each computes a 4 x 4 block of the 64 x 64 tile.
template <typename TX, typename TW>
__global__ void __launch_bounds__(256)
    reference_linear_kernel(const TX* x, const TW* w, const TW* bias, float* y, uint64_t m,
                            uint64_t n, uint64_t k, Activation act) {
  __shared__ float xs[kTileK][kTile + 1];
  __shared__ float ws[kTileK][kTile + 1];
  const uint64_t row0 = uint64_t{blockIdx.x} * kTile, col0 = uint64_t{blockIdx.y} * kTile;
  const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
  float acc[4][4] = {};
  for (uint64_t k0 = 0; k0 < k; k0 += kTileK) {
    for (int i = threadIdx.x; i < kTile * kTileK; i += 256) {
      const int r = i / kTileK, kk = i % kTileK;
      const uint64_t gk = k0 + kk;
      xs[kk][r] = (row0 + r < m && gk < k) ? to_float(x[(row0 + r) * k + gk]) : 0.f;
      ws[kk][r] = (col0 + r < n && gk < k) ? to_float(w[(col0 + r) * k + gk]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        a[i] = xs[kk][tr * 4 + i];
        b[i] = ws[kk][tc * 4 + i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    const uint64_t r = row0 + tr * 4 + i;
    if (r >= m) continue;
    for (int j = 0; j < 4; ++j) {
      const uint64_t c = col0 + tc * 4 + j;
      if (c >= n) continue;
      float v = acc[i][j];
      if (bias) v += to_float(bias[c]);
      y[r * n + c] = act_exact(act, v);
    }
  }
}

__global__ void reference_act_mul_kernel(float* g, const float* u, uint64_t n, Activation act) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += uint64_t{gridDim.x} * blockDim.x)
    g[i] = act_exact(act, g[i]) * u[i];
}

template <typename T>
__global__ void __launch_bounds__(256)
    compare_kernel(const T* out, const float* ref, uint64_t n, double* partials) {
  double max_err = 0, max_ref = 0, sq_err = 0, sq_ref = 0, bad = 0;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += uint64_t{gridDim.x} * blockDim.x) {
    const double o = to_float(out[i]);
    const double r = ref[i];
    if (!isfinite(o)) {
      bad += 1;
      continue;
    }
    const double e = fabs(o - r);
    max_err = fmax(max_err, e);
    max_ref = fmax(max_ref, fabs(r));
    sq_err += e * e;
    sq_ref += r * r;
  }
  __shared__ double red[5][256];
  red[0][threadIdx.x] = max_err;
  red[1][threadIdx.x] = max_ref;
  red[2][threadIdx.x] = sq_err;
  red[3][threadIdx.x] = sq_ref;
  red[4][threadIdx.x] = bad;
  __syncthreads();
  for (int s = 128; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      red[0][threadIdx.x] = fmax(red[0][threadIdx.x], red[0][threadIdx.x + s]);
      red[1][threadIdx.x] = fmax(red[1][threadIdx.x], red[1][threadIdx.x + s]);
      for (int q = 2; q < 5; ++q) red[q][threadIdx.x] += red[q][threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x < 5) partials[blockIdx.x * 5 + threadIdx.x] = red[threadIdx.x][0];
}

}  // namespace

void launch_reference_linear(const void* x, DType x_dtype, const void* w, const void* bias,
                             DType w_dtype, float* y, uint64_t m, uint64_t n, uint64_t k,
                             Activation act, cudaStream_t stream) {
  // Rows along x (up to 2^31 blocks), columns along y (widths are at most 2^20).
  const dim3 grid(static_cast<unsigned>((m + kTile - 1) / kTile),
                  static_cast<unsigned>((n + kTile - 1) / kTile));
  dispatch_dtype(x_dtype, [&]<typename TX>() {
    dispatch_dtype(w_dtype, [&]<typename TW>() {
      reference_linear_kernel<TX, TW>
          <<<grid, 256, 0, stream>>>(static_cast<const TX*>(x), static_cast<const TW*>(w),
                                     static_cast<const TW*>(bias), y, m, n, k, act);
    });
  });
  FS_CUDA_LAUNCHED("reference_linear");
}

void launch_reference_act_mul(float* g, const float* u, uint64_t n, Activation act,
                              cudaStream_t stream) {
  reference_act_mul_kernel<<<1024, 256, 0, stream>>>(g, u, n, act);
  FS_CUDA_LAUNCHED("reference_act_mul");
}

void launch_compare(const void* out, DType dtype, const float* ref, uint64_t n, double* partials,
                    cudaStream_t stream) {
  dispatch_dtype(dtype, [&]<typename T>() {
    compare_kernel<T>
        <<<kCheckBlocks, 256, 0, stream>>>(static_cast<const T*>(out), ref, n, partials);
  });
  FS_CUDA_LAUNCHED("compare");
}

ErrorSums finish_compare(const double* partials_device, cudaStream_t stream) {
  std::vector<double> host(kCheckBlocks * 5);
  FS_CUDA(cudaMemcpyAsync(host.data(), partials_device, host.size() * sizeof(double),
                          cudaMemcpyDeviceToHost, stream));
  FS_CUDA(cudaStreamSynchronize(stream));
  ErrorSums s;
  for (int b = 0; b < kCheckBlocks; ++b) {
    s.max_abs_error = std::max(s.max_abs_error, host[b * 5 + 0]);
    s.max_abs_reference = std::max(s.max_abs_reference, host[b * 5 + 1]);
    s.sum_sq_error += host[b * 5 + 2];
    s.sum_sq_reference += host[b * 5 + 3];
    s.non_finite += static_cast<uint64_t>(host[b * 5 + 4]);
  }
  return s;
}

}  // namespace fusionscope::kernels::detail
