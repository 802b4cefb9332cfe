// tensor_overlap_bench: what an epilogue instruction costs while another warpgroup's wgmma runs
// on the same SM. The fully fused MLP interleaves warpgroups so that one's bias and activation
// overlap another's wgmma; how much each kind of instruction slows down there (and slows the
// wgmma) decides how its epilogues are written (docs/kernels.md, notes).
//
// One block an SM, two warpgroups: warpgroup 0 runs rounds of 8 wgmma m64n128k16 (fp16, fp32
// accumulators; A from registers or from shared memory, B from shared memory; commit and wait
// each round, as a layer does), warpgroup 1 runs one instruction in 8 independent chains a
// thread, each alone and the two together (then the wgmma runs for as long as the instruction
// does). Figures are clocks a wgmma round and clocks a warp instruction, by the SMs' own clock64,
// the median over the SMs: clocks, not seconds, whatever the power cap leaves.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "cuda_check.h"
#include "sm90_ptx.cuh"

namespace fusionscope::kernels::detail {
namespace {

enum Work { kIdle, kMmaRs, kMmaSs, kTanhF16x2, kFmaF16x2, kFmaF32, kCvtF16x2, kMaxF16x2 };
constexpr const char* kNames[] = {
    "idle",         "wgmma RS",   "wgmma SS",         "tanh.approx.f16x2",
    "fma.rn.f16x2", "fma.rn.f32", "cvt.rn.f16x2.f32", "max.f16x2"};
constexpr int kSmemBytes = 32768 + 16;  // A (16 KB) and B (16 KB) of a round, zeros; a flag
// Instructions a chain a round: a tanh.approx.f16x2 takes two MUFU operations.
constexpr int depth(Work w) {
  return w == kTanhF16x2 ? 4 : 32;
}

#ifdef FS_SM90A
#include "wgmma_m64n128k16.inc"
using namespace sm90;

template <Work kWork>
__device__ __forceinline__ void step(uint32_t (&v)[8]) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if constexpr (kWork == kTanhF16x2) asm volatile("tanh.approx.f16x2 %0, %0;" : "+r"(v[i]));
    if constexpr (kWork == kFmaF16x2) asm volatile("fma.rn.f16x2 %0, %0, %0, %0;" : "+r"(v[i]));
    if constexpr (kWork == kFmaF32) asm volatile("fma.rn.f32 %0, %0, %0, %0;" : "+r"(v[i]));
    if constexpr (kWork == kCvtF16x2) asm volatile("cvt.rn.f16x2.f32 %0, %0, %0;" : "+r"(v[i]));
    if constexpr (kWork == kMaxF16x2) asm volatile("max.f16x2 %0, %0, %0;" : "+r"(v[i]));
  }
}

// `rounds` rounds of kWork by this warpgroup, or (kUntil) as many as run before *done is set;
// thread 0 stamps its clock64 span and its rounds.
template <Work kWork, bool kUntil>
__device__ __forceinline__ void run_rounds(int rounds, uint32_t smem, const volatile int* done,
                                           long long* span, uint32_t* sink) {
  float d[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) d[i] = 0.f;
  uint32_t v[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = 0x3C003C00u ^ (threadIdx.x * (i + 1));
  const uint32_t a[4] = {v[0], v[1], v[2], v[3]};
  const long long t0 = clock64();
  int r = 0;
  for (; kUntil ? *done == 0 : r < rounds; ++r) {
    if constexpr (kWork == kMmaRs || kWork == kMmaSs) {
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        const uint64_t db = smem_desc(smem + 16384 + kk * 32);
        if constexpr (kWork == kMmaRs)
          wgmma_m64n128k16_rs<__half>(d, a, db, 1);
        else
          wgmma_m64n128k16_ss<__half>(d, smem_desc(smem + kk * 32), db, 1);
      }
      wgmma_commit();
      wgmma_wait<0>();
    } else if constexpr (kWork != kIdle) {
#pragma unroll
      for (int k = 0; k < depth(kWork); ++k) step<kWork>(v);
    }
  }
  const long long t1 = clock64();
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < 64; ++i) sum += d[i];
  uint32_t s = __float_as_uint(sum);
#pragma unroll
  for (int i = 0; i < 8; ++i) s ^= v[i];
  if (s == 0x12345678u) *sink = s;  // keeps every chain alive
  if (threadIdx.x % 128 == 0) span[0] = t1 - t0, span[1] = r;
}
#endif  // FS_SM90A

// Warpgroup 0 runs kWork0, warpgroup 1 kWork1 (branching on the warpgroup keeps each wgmma in
// code the whole warpgroup runs). spans: [block][warpgroup][clocks, rounds].
template <Work kWork0, Work kWork1>
__global__ void __launch_bounds__(256, 1)
    overlap_kernel(int rounds, long long* spans, uint32_t* sink) {
#ifdef FS_SM90A
  extern __shared__ __align__(1024) uint8_t smem[];
  for (int i = threadIdx.x; i < kSmemBytes / 4; i += blockDim.x)  // zeros, the flag clear
    reinterpret_cast<uint32_t*>(smem)[i] = 0;
  fence_proxy_async();
  __syncthreads();
  volatile int* done = reinterpret_cast<volatile int*>(smem + 32768);
  const int wg = threadIdx.x / 128;
  long long* span = spans + 2 * (2 * blockIdx.x + wg);
  constexpr bool kUntil = kWork1 != kIdle && kWork1 != kMmaRs && kWork1 != kMmaSs;
  if (wg == 0) {
    run_rounds<kWork0, kUntil>(rounds, smem_u32(smem), done, span, sink);
  } else {
    run_rounds<kWork1, false>(rounds, smem_u32(smem), done, span, sink);
    if (threadIdx.x == 128) *done = 1;
  }
#endif
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

struct Clocks {
  double wg0 = 0, wg1 = 0;  // clocks a round, medians over the SMs
};
// Clocks a warp instruction of an epilogue round.
double per_instruction(Work w, double round) {
  return round / (8 * depth(w));
}

template <Work kWork0, Work kWork1>
Clocks measure(int sms, int rounds, long long* spans, uint32_t* sink) {
  const auto kernel = overlap_kernel<kWork0, kWork1>;
  FS_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  kernel<<<sms, 256, kSmemBytes>>>(16, spans, sink);  // warm-up
  kernel<<<sms, 256, kSmemBytes>>>(rounds, spans, sink);
  FS_CUDA(cudaGetLastError());
  std::vector<long long> st(static_cast<size_t>(4 * sms));
  FS_CUDA(cudaMemcpy(st.data(), spans, st.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  std::vector<double> c0, c1;
  for (int b = 0; b < sms; ++b) {
    if (st[4 * b + 1] > 0) c0.push_back(static_cast<double>(st[4 * b]) / st[4 * b + 1]);
    if (st[4 * b + 3] > 0) c1.push_back(static_cast<double>(st[4 * b + 2]) / st[4 * b + 3]);
  }
  return {median(c0), median(c1)};
}

// One epilogue instruction: alone, next to wgmma RS, next to wgmma SS.
template <Work kEpi>
void row(int sms, int rounds, long long* spans, uint32_t* sink, Clocks rs, Clocks ss) {
  const Clocks alone = measure<kIdle, kEpi>(sms, rounds, spans, sink);
  const Clocks with_rs = measure<kMmaRs, kEpi>(sms, rounds, spans, sink);
  const Clocks with_ss = measure<kMmaSs, kEpi>(sms, rounds, spans, sink);
  std::printf("%-20s %8.2f   %8.2f %5.2fx %8.0f %5.2fx   %8.2f %5.2fx %8.0f %5.2fx\n", kNames[kEpi],
              per_instruction(kEpi, alone.wg1), per_instruction(kEpi, with_rs.wg1),
              with_rs.wg1 / alone.wg1, with_rs.wg0, with_rs.wg0 / rs.wg0,
              per_instruction(kEpi, with_ss.wg1), with_ss.wg1 / alone.wg1, with_ss.wg0,
              with_ss.wg0 / ss.wg0);
}

}  // namespace
}  // namespace fusionscope::kernels::detail

static int run(int argc, char** argv) {
  using namespace fusionscope::kernels::detail;
  const int rounds = argc > 1 ? std::max(64, std::atoi(argv[1])) : 2000;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "tensor_overlap_bench: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  FS_CUDA(cudaGetDeviceProperties(&prop, 0));
  if (prop.major != 9) {
    std::fprintf(stderr, "tensor_overlap_bench: needs a Hopper GPU (sm_90), found sm_%d%d\n",
                 prop.major, prop.minor);
    return 1;
  }
  const int sms = prop.multiProcessorCount;
  long long* spans = nullptr;
  uint32_t* sink = nullptr;
  FS_CUDA(cudaMalloc(&spans, sizeof(long long) * 4 * sms));
  FS_CUDA(cudaMalloc(&sink, sizeof(uint32_t)));
  std::printf("%s, %d SMs; one block an SM, %d rounds; clocks a round (median over the SMs)\n",
              prop.name, sms, rounds);
  const Clocks rs = measure<kMmaRs, kIdle>(sms, rounds, spans, sink);
  const Clocks ss = measure<kMmaSs, kIdle>(sms, rounds, spans, sink);
  const Clocks rs2 = measure<kMmaRs, kMmaRs>(sms, rounds, spans, sink);
  std::printf(
      "a round of wgmma (8 x m64n128k16, commit, wait): RS %.0f, SS %.0f alone (512 at "
      "the tensor cores' peak); two warpgroups of RS %.0f and %.0f\n",
      rs.wg0, ss.wg0, rs2.wg0, rs2.wg1);
  std::printf(
      "an epilogue instruction in 8 chains a thread: clocks a warp instruction alone, "
      "next to each wgmma, and that wgmma's clocks a round meanwhile\n");
  std::printf("%-20s %8s   %8s %6s %8s %6s   %8s %6s %8s %6s\n", "instruction", "alone", "next RS",
              "", "RS", "", "next SS", "", "SS", "");
  row<kTanhF16x2>(sms, rounds, spans, sink, rs, ss);
  row<kFmaF16x2>(sms, rounds, spans, sink, rs, ss);
  row<kFmaF32>(sms, rounds, spans, sink, rs, ss);
  row<kCvtF16x2>(sms, rounds, spans, sink, rs, ss);
  row<kMaxF16x2>(sms, rounds, spans, sink, rs, ss);
  FS_CUDA(cudaFree(spans));
  FS_CUDA(cudaFree(sink));
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tensor_overlap_bench: %s\n", e.what());
    return 1;
  }
}
