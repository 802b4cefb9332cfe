// Gated GEMM for Ampere and Ada (mma.sync m16n8k16, cp.async 3-stage pipeline). Also correct on
// Hopper, where the wgmma kernel is used unless this path is asked for.
#include "cuda_check.h"
#include "element.cuh"
#include "gated_gemm.h"
#include "mma.cuh"

namespace fusionscope::kernels::detail {
namespace {

constexpr int BM = 128, BN = 128, BK = 32, STAGES = 3;
constexpr int kPad = 8;          // halves per smem row against ldmatrix bank conflicts
constexpr int kRow = BK + kPad;  // smem row length in elements
constexpr int kThreads = 256;    // 8 warps: 2 along M x 4 along N, 64 x 32 each
constexpr int kStageElems = (BM + BN) * kRow;
constexpr size_t kSmemBytes = size_t{STAGES} * kStageElems * 2;

template <typename T>
__device__ __forceinline__ void load_stage(T* stage, const T* x, const T* w, uint64_t m0,
                                           uint64_t n0, uint64_t k0, uint64_t rows, uint64_t wrows,
                                           uint64_t dim) {
  T* as = stage;
  T* bs = stage + BM * kRow;
  // 128 rows x 4 chunks of 8 elements per operand: two chunks of each per thread.
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int c = threadIdx.x + i * kThreads;
    const int r = c / 4, kc = (c % 4) * 8;
    const uint64_t k = k0 + kc;
    const bool ka = k < dim;
    const uint64_t gm = m0 + r, gn = n0 + r;
    const bool va = ka && gm < rows, vb = ka && gn < wrows;
    cp_async_16(as + r * kRow + kc, x + (va ? gm * dim + k : 0), va ? 16 : 0);
    cp_async_16(bs + r * kRow + kc, w + (vb ? gn * dim + k : 0), vb ? 16 : 0);
  }
}

template <typename T, Activation A>
__global__ void __launch_bounds__(kThreads)
    gated_gemm_sm80_kernel(const T* x, const T* w, T* product, uint64_t rows, uint64_t hidden,
                           uint64_t dim) {
  extern __shared__ __align__(16) uint8_t smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  const uint64_t m0 = uint64_t{blockIdx.x} * BM;
  const uint64_t n0 = uint64_t{blockIdx.y} * BN;  // in interleaved gate/up columns
  const uint64_t wrows = 2 * hidden;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / 4, wn = warp % 4;
  const int ktiles = static_cast<int>((dim + BK - 1) / BK);

  float acc[4][4][4] = {};
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles)
      load_stage(smem + s * kStageElems, x, w, m0, n0, static_cast<uint64_t>(s) * BK, rows, wrows,
                 dim);
    cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    // Refill the stage consumed last iteration while this one is computed.
    const int next = kt + STAGES - 1;
    if (next < ktiles)
      load_stage(smem + (next % STAGES) * kStageElems, x, w, m0, n0,
                 static_cast<uint64_t>(next) * BK, rows, wrows, dim);
    cp_async_commit();

    const T* as = smem + (kt % STAGES) * kStageElems;
    const T* bs = as + BM * kRow;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t a[4][4];
#pragma unroll
      for (int mt = 0; mt < 4; ++mt)
        ldmatrix_x4(a[mt], as + (wm * 64 + mt * 16 + lane % 16) * kRow + kk + (lane / 16) * 8);
      uint32_t b[2][4];
#pragma unroll
      for (int np = 0; np < 2; ++np)
        ldmatrix_x4(b[np], bs + (wn * 32 + np * 16 + (lane % 8) + (lane / 16) * 8) * kRow + kk +
                               ((lane / 8) % 2) * 8);
#pragma unroll
      for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
          mma_16816<T>(acc[mt][nt], a[mt], b[nt / 2][(nt % 2) * 2], b[nt / 2][(nt % 2) * 2 + 1]);
    }
  }
  cp_async_wait<0>();

  // n8 tiles 0 and 2 are gate columns, 1 and 3 the matching up columns (interleave by 8), of
  // the weight scaled for gated_product().
#pragma unroll
  for (int mt = 0; mt < 4; ++mt) {
    const uint64_t r = m0 + wm * 64 + mt * 16 + lane / 4;
#pragma unroll
    for (int pair = 0; pair < 2; ++pair) {
      const uint64_t h = (n0 + wn * 32 + pair * 16) / 2 + 2 * (lane % 4);
      if (h >= hidden) continue;
      const float* g = acc[mt][2 * pair];
      const float* u = acc[mt][2 * pair + 1];
      if (r < rows)
        *reinterpret_cast<uint32_t*>(product + r * hidden + h) =
            pack2<T>(gated_product<A>(g[0], u[0]), gated_product<A>(g[1], u[1]));
      if (r + 8 < rows)
        *reinterpret_cast<uint32_t*>(product + (r + 8) * hidden + h) =
            pack2<T>(gated_product<A>(g[2], u[2]), gated_product<A>(g[3], u[3]));
    }
  }
}

template <typename T>
void prepare_for(Activation act) {
  dispatch_activation(act, [&]<Activation A>() {
    FS_CUDA(cudaFuncSetAttribute(&gated_gemm_sm80_kernel<T, A>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(kSmemBytes)));
  });
}

}  // namespace

void prepare_gated_gemm_sm80(DType dtype, Activation act) {
  if (dtype == DType::kFp16) prepare_for<__half>(act);
  if (dtype == DType::kBf16) prepare_for<__nv_bfloat16>(act);
}

void launch_gated_gemm_sm80(const GatedGemmArgs& a, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((a.rows + BM - 1) / BM),
                  static_cast<unsigned>((2 * a.hidden + BN - 1) / BN));
  dispatch_dtype(a.dtype, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float>) {
      throw CudaError("gated-gemm: fp32 is not supported");
    } else {
      dispatch_activation(a.act, [&]<Activation A>() {
        auto* f = &gated_gemm_sm80_kernel<T, A>;
        f<<<grid, kThreads, kSmemBytes, stream>>>(
            static_cast<const T*>(a.x), static_cast<const T*>(a.w), static_cast<T*>(a.product),
            a.rows, a.hidden, a.dim);
      });
    }
  });
  FS_CUDA_LAUNCHED("gated_gemm_sm80");
}

}  // namespace fusionscope::kernels::detail
