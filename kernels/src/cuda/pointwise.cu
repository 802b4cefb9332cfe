#include "cuda_check.h"
#include "element.cuh"
#include "pointwise.h"

namespace fusionscope::kernels::detail {
namespace {

constexpr int kThreads = 256;

// 16-byte vectors of T.
template <typename T>
struct alignas(16) Vec {
  static constexpr int kN = 16 / sizeof(T);
  T v[kN];
};

unsigned grid_for(uint64_t vectors) {
  const uint64_t blocks = (vectors + kThreads - 1) / kThreads;
  // Grid-stride beyond this; plenty of blocks for any GPU.
  return static_cast<unsigned>(blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

template <typename T, Activation A>
__global__ void activation_kernel(const Vec<T>* in, Vec<T>* out, uint64_t nvec) {
  for (uint64_t i = blockIdx.x * uint64_t{kThreads} + threadIdx.x; i < nvec;
       i += uint64_t{gridDim.x} * kThreads) {
    Vec<T> x = in[i];
#pragma unroll
    for (int j = 0; j < Vec<T>::kN; ++j) x.v[j] = from_float<T>(act_fast<A>(to_float(x.v[j])));
    out[i] = x;
  }
}

template <typename T, Activation A>
__global__ void bias_activation_kernel(const Vec<T>* in, const T* bias, Vec<T>* out, uint64_t nvec,
                                       uint64_t cols) {
  for (uint64_t i = blockIdx.x * uint64_t{kThreads} + threadIdx.x; i < nvec;
       i += uint64_t{gridDim.x} * kThreads) {
    Vec<T> x = in[i];
    const uint64_t c0 = (i * Vec<T>::kN) % cols;
#pragma unroll
    for (int j = 0; j < Vec<T>::kN; ++j)
      x.v[j] = from_float<T>(act_fast<A>(to_float(x.v[j]) + to_float(bias[c0 + j])));
    out[i] = x;
  }
}

template <typename T>
__global__ void multiply_kernel(const Vec<T>* a, const Vec<T>* b, Vec<T>* out, uint64_t nvec) {
  for (uint64_t i = blockIdx.x * uint64_t{kThreads} + threadIdx.x; i < nvec;
       i += uint64_t{gridDim.x} * kThreads) {
    Vec<T> x = a[i];
    const Vec<T> y = b[i];
#pragma unroll
    for (int j = 0; j < Vec<T>::kN; ++j)
      x.v[j] = from_float<T>(to_float(x.v[j]) * to_float(y.v[j]));
    out[i] = x;
  }
}

template <typename T, Activation A>
__global__ void activation_multiply_kernel(const Vec<T>* g, const Vec<T>* u, Vec<T>* out,
                                           uint64_t nvec) {
  for (uint64_t i = blockIdx.x * uint64_t{kThreads} + threadIdx.x; i < nvec;
       i += uint64_t{gridDim.x} * kThreads) {
    Vec<T> x = g[i];
    const Vec<T> y = u[i];
#pragma unroll
    for (int j = 0; j < Vec<T>::kN; ++j)
      x.v[j] = from_float<T>(act_fast<A>(to_float(x.v[j])) * to_float(y.v[j]));
    out[i] = x;
  }
}

template <typename T>
__global__ void interleave_kernel(const Vec<T>* gate, const Vec<T>* up, Vec<T>* out, uint64_t h,
                                  uint64_t dvec, GateUpScales scales) {
  const uint64_t total = 2 * h * dvec;
  for (uint64_t i = blockIdx.x * uint64_t{kThreads} + threadIdx.x; i < total;
       i += uint64_t{gridDim.x} * kThreads) {
    const uint64_t row = i / dvec, col = i % dvec;
    const uint64_t block = row / 16, within = row % 16;
    const uint64_t src_row = 8 * block + (within % 8);
    Vec<T> v = (within < 8 ? gate : up)[src_row * dvec + col];
    const float scale = within < 8 ? scales.gate : scales.up;
#pragma unroll
    for (int j = 0; j < Vec<T>::kN; ++j) v.v[j] = from_float<T>(to_float(v.v[j]) * scale);
    out[i] = v;
  }
}

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <typename T>
__global__ void fill_kernel(T* dst, uint64_t n, float lo, float hi, uint64_t key) {
  for (uint64_t i = blockIdx.x * uint64_t{kThreads} + threadIdx.x; i < n;
       i += uint64_t{gridDim.x} * kThreads) {
    const uint64_t r = splitmix64(key ^ splitmix64(i));
    const float u = static_cast<float>(r >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    dst[i] = from_float<T>(lo + (hi - lo) * u);
  }
}

}  // namespace

void launch_activation(const void* in, void* out, uint64_t n, Activation act, DType dtype,
                       cudaStream_t stream) {
  dispatch_dtype(dtype, [&]<typename T>() {
    const uint64_t nvec = n / Vec<T>::kN;
    dispatch_activation(act, [&]<Activation A>() {
      activation_kernel<T, A><<<grid_for(nvec), kThreads, 0, stream>>>(
          static_cast<const Vec<T>*>(in), static_cast<Vec<T>*>(out), nvec);
    });
  });
  FS_CUDA_LAUNCHED("activation");
}

void launch_bias_activation(const void* in, const void* bias, void* out, uint64_t rows,
                            uint64_t cols, Activation act, DType dtype, cudaStream_t stream) {
  dispatch_dtype(dtype, [&]<typename T>() {
    const uint64_t nvec = rows * cols / Vec<T>::kN;
    dispatch_activation(act, [&]<Activation A>() {
      bias_activation_kernel<T, A><<<grid_for(nvec), kThreads, 0, stream>>>(
          static_cast<const Vec<T>*>(in), static_cast<const T*>(bias), static_cast<Vec<T>*>(out),
          nvec, cols);
    });
  });
  FS_CUDA_LAUNCHED("bias_activation");
}

void launch_multiply(const void* a, const void* b, void* out, uint64_t n, DType dtype,
                     cudaStream_t stream) {
  dispatch_dtype(dtype, [&]<typename T>() {
    const uint64_t nvec = n / Vec<T>::kN;
    multiply_kernel<T><<<grid_for(nvec), kThreads, 0, stream>>>(static_cast<const Vec<T>*>(a),
                                                                static_cast<const Vec<T>*>(b),
                                                                static_cast<Vec<T>*>(out), nvec);
  });
  FS_CUDA_LAUNCHED("multiply");
}

void launch_activation_multiply(const void* g, const void* u, void* out, uint64_t n, Activation act,
                                DType dtype, cudaStream_t stream) {
  dispatch_dtype(dtype, [&]<typename T>() {
    const uint64_t nvec = n / Vec<T>::kN;
    dispatch_activation(act, [&]<Activation A>() {
      activation_multiply_kernel<T, A><<<grid_for(nvec), kThreads, 0, stream>>>(
          static_cast<const Vec<T>*>(g), static_cast<const Vec<T>*>(u), static_cast<Vec<T>*>(out),
          nvec);
    });
  });
  FS_CUDA_LAUNCHED("activation_multiply");
}

void launch_interleave_gate_up(const void* gate, const void* up, void* out, uint64_t h, uint64_t d,
                               Activation act, DType dtype, cudaStream_t stream) {
  dispatch_dtype(dtype, [&]<typename T>() {
    const uint64_t dvec = d / Vec<T>::kN;
    interleave_kernel<T><<<grid_for(2 * h * dvec), kThreads, 0, stream>>>(
        static_cast<const Vec<T>*>(gate), static_cast<const Vec<T>*>(up), static_cast<Vec<T>*>(out),
        h, dvec, gate_up_scales(act));
  });
  FS_CUDA_LAUNCHED("interleave_gate_up");
}

void launch_fill_uniform(void* dst, uint64_t n, DType dtype, float lo, float hi, uint64_t seed,
                         uint64_t tag, cudaStream_t stream) {
  const uint64_t key = seed * 0x9e3779b97f4a7c15ull + tag * 0xd1b54a32d192ed03ull + 1;
  dispatch_dtype(dtype, [&]<typename T>() {
    fill_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(static_cast<T*>(dst), n, lo, hi, key);
  });
  FS_CUDA_LAUNCHED("fill_uniform");
}

}  // namespace fusionscope::kernels::detail
