// Gated GEMM for Hopper (sm_90a): TMA loads into a 4-stage shared-memory ring completing on
// mbarriers, wgmma m64n256k16 from shared memory, a persistent grid, and warp specialisation:
// warpgroup 0 issues the loads, warpgroups 1 and 2 each multiply 64 rows of a 128 x 256 tile and
// apply act(g) * u in the epilogue. The 256 interleaved columns of a tile are 128 gate and 128 up
// columns of the same hidden units (8 gate, 8 up, ...), so one thread holds each matching pair.
#include <cuda.h>

#include <mutex>

#include "cuda_check.h"
#include "element.cuh"
#include "gated_gemm.h"

namespace fusionscope::kernels::detail {
namespace {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int kThreads = 384;
constexpr uint32_t kBytesA = BM * BK * 2;  // 16 KiB per stage
constexpr uint32_t kBytesB = BN * BK * 2;  // 32 KiB per stage
constexpr size_t kSmemBytes = size_t{STAGES} * (kBytesA + kBytesB) + 1024 /*alignment*/ + 256;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FS_SM90A 1
#endif

#ifdef FS_SM90A
#include "wgmma_m64n256k16.inc"

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)),
               "r"(bytes));
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)));
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(smem_u32(bar)),
      "r"(parity));
}

__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar,
                                            int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
      : "memory");
}

// Shared-memory matrix descriptor: K-major, 128-byte swizzle, 8-row groups 1024 bytes apart.
__device__ __forceinline__ uint64_t smem_desc(const void* p) {
  const uint64_t addr = smem_u32(p);
  return ((addr & 0x3FFFF) >> 4) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) |
         (uint64_t{1} << 62);
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
#endif  // FS_SM90A

template <typename T, Activation A>
__global__ void __launch_bounds__(kThreads, 1)
    gated_gemm_sm90_kernel(const __grid_constant__ CUtensorMap tmap_x,
                           const __grid_constant__ CUtensorMap tmap_w, T* product, uint32_t rows,
                           uint32_t hidden, uint32_t dim) {
#ifdef FS_SM90A
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // 128-byte swizzled tiles want 1024-byte alignment.
  uint8_t* base =
      reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  uint8_t* tiles_a = base;
  uint8_t* tiles_b = base + STAGES * kBytesA;
  uint64_t* full = reinterpret_cast<uint64_t*>(tiles_b + STAGES * kBytesB);
  uint64_t* empty = full + STAGES;

  const int wg = threadIdx.x / 128;
  const int tid = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 2);  // one arrival per consumer warpgroup
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  const uint32_t tiles_m = (rows + BM - 1) / BM;
  const uint32_t tiles_n = (2 * hidden + BN - 1) / BN;
  const uint32_t tiles = tiles_m * tiles_n;
  const int kblocks = static_cast<int>((dim + BK - 1) / BK);

  if (wg == 0) {
    // Producer: one thread streams A and B k-blocks for every tile of this CTA.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      uint32_t it = 0;
      for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int m0 = static_cast<int>((t % tiles_m) * BM);
        const int n0 = static_cast<int>((t / tiles_m) * BN);
        for (int kb = 0; kb < kblocks; ++kb, ++it) {
          const uint32_t s = it % STAGES, round = it / STAGES;
          if (round > 0) mbar_wait(&empty[s], (round - 1) & 1);
          mbar_expect_tx(&full[s], kBytesA + kBytesB);
          tma_load_2d(tiles_a + s * kBytesA, &tmap_x, &full[s], kb * BK, m0);
          tma_load_2d(tiles_b + s * kBytesB, &tmap_w, &full[s], kb * BK, n0);
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int c = wg - 1;  // consumer index: rows 64c .. 64c + 63 of the tile
    const int warp = tid / 32, lane = tid % 32;
    float d[128];
    uint32_t it = 0;
    for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
      const uint32_t m0 = (t % tiles_m) * BM;
      const uint32_t n0 = (t / tiles_m) * BN;
      uint32_t prev = 0;
      for (int kb = 0; kb < kblocks; ++kb, ++it) {
        const uint32_t s = it % STAGES;
        mbar_wait(&full[s], (it / STAGES) & 1);
        const uint8_t* a = tiles_a + s * kBytesA + c * 64 * 128;
        const uint8_t* b = tiles_b + s * kBytesB;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)  // 16 elements = 32 bytes along the swizzled row
          wgmma_m64n256k16<T>(d, smem_desc(a + kk * 32), smem_desc(b + kk * 32),
                              (kb > 0 || kk > 0) ? 1 : 0);
        wgmma_commit();
        // Keep one k-block in flight; the one before it has finished reading its stage.
        wgmma_wait<1>();
        if (kb > 0 && tid == 0) mbar_arrive(&empty[prev]);
        prev = s;
      }
      wgmma_wait<0>();
      if (tid == 0) mbar_arrive(&empty[prev]);

      // Epilogue: accumulator n8 chunk j holds columns 8j..8j+7 of the tile; even chunks are gate,
      // odd chunks the matching up columns. Each thread writes pairs of adjacent products.
      const uint32_t r = m0 + c * 64 + warp * 16 + lane / 4;
#pragma unroll
      for (int j = 0; j < 32; j += 2) {
        const uint32_t h = n0 / 2 + (j / 2) * 8 + 2 * (lane % 4);
        if (h >= hidden) continue;
        const float* g = &d[4 * j];
        const float* u = &d[4 * (j + 1)];
        if (r < rows)
          *reinterpret_cast<uint32_t*>(product + size_t{r} * hidden + h) =
              pack2<T>(act_fast<A>(g[0]) * u[0], act_fast<A>(g[1]) * u[1]);
        if (r + 8 < rows)
          *reinterpret_cast<uint32_t*>(product + size_t{r + 8} * hidden + h) =
              pack2<T>(act_fast<A>(g[2]) * u[2], act_fast<A>(g[3]) * u[3]);
      }
    }
  }
#endif  // FS_SM90A
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_fn() {
  static EncodeTiled fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<EncodeTiled>(p);
  });
  if (!fn) throw CudaError("the driver does not provide cuTensorMapEncodeTiled (TMA)");
  return fn;
}

}  // namespace

void encode_tensor_map(void* out, const void* base, uint64_t rows, uint64_t cols,
                       uint32_t box_rows) {
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * 2};
  const cuuint32_t box[2] = {BK, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_fn()(
      static_cast<CUtensorMap*>(out), CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, const_cast<void*>(base),
      dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw CudaError("cuTensorMapEncodeTiled failed with error " + std::to_string(r));
}

bool gated_gemm_sm90_available(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return false;
  if (major != 9 || minor != 0) return false;  // sm_90a code runs on sm_90 only
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, gated_gemm_sm90_kernel<__nv_bfloat16, Activation::kGeluTanh>) !=
      cudaSuccess)
    return false;
  return attr.binaryVersion == 90;
}

void prepare_gated_gemm_sm90(DType dtype, Activation act) {
  auto prepare = [&]<typename T>() {
    dispatch_activation(act, [&]<Activation A>() {
      FS_CUDA(cudaFuncSetAttribute(&gated_gemm_sm90_kernel<T, A>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(kSmemBytes)));
    });
  };
  if (dtype == DType::kFp16) prepare.template operator()<__half>();
  if (dtype == DType::kBf16) prepare.template operator()<__nv_bfloat16>();
}

void launch_gated_gemm_sm90(const GatedGemmArgs& a, const void* tmap_x, const void* tmap_w, int sms,
                            cudaStream_t stream) {
  const uint64_t tiles = ((a.rows + BM - 1) / BM) * ((2 * a.hidden + BN - 1) / BN);
  const unsigned grid = static_cast<unsigned>(tiles < static_cast<uint64_t>(sms) ? tiles : sms);
  const CUtensorMap& mx = *static_cast<const CUtensorMap*>(tmap_x);
  const CUtensorMap& mw = *static_cast<const CUtensorMap*>(tmap_w);
  dispatch_dtype(a.dtype, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float>) {
      throw CudaError("gated-gemm: fp32 is not supported");
    } else {
      dispatch_activation(a.act, [&]<Activation A>() {
        auto* f = &gated_gemm_sm90_kernel<T, A>;
        f<<<grid, kThreads, kSmemBytes, stream>>>(
            mx, mw, static_cast<T*>(a.product), static_cast<uint32_t>(a.rows),
            static_cast<uint32_t>(a.hidden), static_cast<uint32_t>(a.dim));
      });
    }
  });
  FS_CUDA_LAUNCHED("gated_gemm_sm90");
}

}  // namespace fusionscope::kernels::detail
