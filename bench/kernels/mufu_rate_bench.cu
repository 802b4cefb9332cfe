// mufu_rate_bench: how many values a clock an SM the activations' hardware instructions give,
// next to the f16x2 FMA, by the SMs' own clocks. The fully fused MLP's GELU and SiLU spend one
// tanh.approx per value; whether that or the issue slots bound a layer decides how to write them
// (docs/kernels.md, notes).
//
// Every thread runs 8 independent chains of one instruction, 8 blocks of 256 threads an SM. The
// rate is an SM's instructions over its own clock64 span (first block's start to last block's
// end; a block's own span undercounts, since the blocks of an SM do not all run to the end
// together), the median over the SMs: clocks, not seconds, whatever the power cap leaves.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "cuda_check.h"

namespace {

enum Op { kTanhF16x2, kEx2F16x2, kTanhF32, kEx2F32, kTanhBf16x2, kEx2Bf16x2, kFmaF16x2 };

template <Op kOp>
__device__ __forceinline__ uint32_t apply(uint32_t v) {
  uint32_t r = v;
  if constexpr (kOp == kTanhF16x2) asm volatile("tanh.approx.f16x2 %0, %1;" : "=r"(r) : "r"(v));
  if constexpr (kOp == kEx2F16x2) asm volatile("ex2.approx.f16x2 %0, %1;" : "=r"(r) : "r"(v));
  if constexpr (kOp == kTanhF32) asm volatile("tanh.approx.f32 %0, %1;" : "=r"(r) : "r"(v));
  if constexpr (kOp == kEx2F32) asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=r"(r) : "r"(v));
#if __CUDA_ARCH__ >= 900
  if constexpr (kOp == kTanhBf16x2) asm volatile("tanh.approx.bf16x2 %0, %1;" : "=r"(r) : "r"(v));
  if constexpr (kOp == kEx2Bf16x2) asm volatile("ex2.approx.ftz.bf16x2 %0, %1;" : "=r"(r) : "r"(v));
#endif
  if constexpr (kOp == kFmaF16x2) asm volatile("fma.rn.f16x2 %0, %1, %1, %1;" : "=r"(r) : "r"(v));
  return r;
}

__device__ __forceinline__ uint32_t sm_id() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// Each block stamps its SM and its first and last clock (clock64 counts per SM, so the stamps
// of one SM's blocks compare).
template <Op kOp>
__global__ void rate_kernel(int iters, long long* stamps, uint32_t* sink) {
  uint32_t v[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = 0x3C003C00u + threadIdx.x + static_cast<uint32_t>(i);
  __syncthreads();
  const long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = apply<kOp>(v[i]);
  }
  __syncthreads();
  const long long t1 = clock64();
  uint32_t s = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) s ^= v[i];
  if (s == 0x12345678u) *sink = s;  // keeps the chains alive
  if (threadIdx.x == 0) {
    stamps[3 * blockIdx.x] = sm_id();
    stamps[3 * blockIdx.x + 1] = t0;
    stamps[3 * blockIdx.x + 2] = t1;
  }
}

// Per SM: instructions of its blocks over the span from its first block's start to its last
// block's end; the median over the SMs.
template <Op kOp>
double values_per_clock(int sms, int iters, long long* stamps, uint32_t* sink) {
  constexpr int kThreads = 256, kBlocksPerSm = 8;
  const int blocks = sms * kBlocksPerSm;
  rate_kernel<kOp><<<blocks, kThreads>>>(16, stamps, sink);  // warm-up
  rate_kernel<kOp><<<blocks, kThreads>>>(iters, stamps, sink);
  FS_CUDA(cudaGetLastError());
  std::vector<long long> st(static_cast<size_t>(3 * blocks));
  FS_CUDA(cudaMemcpy(st.data(), stamps, st.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  struct Span {
    long long first = 0, last = 0;
    int blocks = 0;
  };
  std::vector<Span> per_sm(static_cast<size_t>(sms));
  for (int b = 0; b < blocks; ++b) {
    const auto id = static_cast<size_t>(st[3 * b]);
    if (id >= per_sm.size()) continue;
    Span& sp = per_sm[id];
    sp.first = sp.blocks ? std::min(sp.first, st[3 * b + 1]) : st[3 * b + 1];
    sp.last = sp.blocks ? std::max(sp.last, st[3 * b + 2]) : st[3 * b + 2];
    ++sp.blocks;
  }
  std::vector<double> rates;
  for (const Span& sp : per_sm)
    if (sp.blocks > 0 && sp.last > sp.first)
      rates.push_back(double{kThreads} * iters * 8 * sp.blocks /
                      static_cast<double>(sp.last - sp.first));
  if (rates.empty()) return 0;
  std::nth_element(rates.begin(), rates.begin() + rates.size() / 2, rates.end());
  return rates[rates.size() / 2];
}

using RateFn = double (*)(int, int, long long*, uint32_t*);
struct OpInfo {
  const char* ptx;
  int values;  // values an instruction computes
  bool sm90;   // needs sm_90
  RateFn rate;
};
constexpr OpInfo kOps[] = {
    {"tanh.approx.f16x2", 2, false, &values_per_clock<kTanhF16x2>},
    {"ex2.approx.f16x2", 2, false, &values_per_clock<kEx2F16x2>},
    {"tanh.approx.f32", 1, false, &values_per_clock<kTanhF32>},
    {"ex2.approx.ftz.f32", 1, false, &values_per_clock<kEx2F32>},
    {"tanh.approx.bf16x2", 2, true, &values_per_clock<kTanhBf16x2>},
    {"ex2.approx.ftz.bf16x2", 2, true, &values_per_clock<kEx2Bf16x2>},
    {"fma.rn.f16x2 (x*x+x)", 2, false, &values_per_clock<kFmaF16x2>},
};

}  // namespace

static int run(int argc, char** argv) {
  const int iters = argc > 1 ? std::max(64, std::atoi(argv[1])) : 4096;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "mufu_rate_bench: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  FS_CUDA(cudaGetDeviceProperties(&prop, 0));
  const bool sm90 = prop.major >= 9;
  std::printf("%s, %d SMs; 8 blocks of 256 threads an SM, 8 chains a thread, %d steps\n", prop.name,
              prop.multiProcessorCount, iters);
  long long* stamps = nullptr;
  uint32_t* sink = nullptr;
  FS_CUDA(cudaMalloc(&stamps, sizeof(long long) * 3 * prop.multiProcessorCount * 8));
  FS_CUDA(cudaMalloc(&sink, sizeof(uint32_t)));
  std::printf("%-24s %16s %16s\n", "instruction", "lanes/clk/SM", "values/clk/SM");
  for (const OpInfo& o : kOps) {
    if (o.sm90 && !sm90) continue;
    const double rate = o.rate(prop.multiProcessorCount, iters, stamps, sink);
    std::printf("%-24s %16.1f %16.1f\n", o.ptx, rate, rate * o.values);
  }
  FS_CUDA(cudaFree(stamps));
  FS_CUDA(cudaFree(sink));
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mufu_rate_bench: %s\n", e.what());
    return 1;
  }
}
