// Fully fused MLP, Hopper (sm_90a), every layer 64 wide, or every layer 32 or 16 wide with 2 or 4
// rows packed into each 64-wide row (a row-major [rows, 32] tensor is a [rows / 2, 64] one) and
// each layer's weight repeated along the diagonal of a 64 x 64 block-diagonal one, built in
// shared memory: each packed row's 2 or 4 rows are computed independently, by wgmma n32 or n16
// on the diagonal blocks alone (no work on the zeros). The rows left over (rows % 2 or 4) form a
// last tile of their own, loaded and stored row by row.
//
// One CTA per SM, 4 warpgroups, each an independent worker over 64-row tiles (tiles strided over
// all warpgroups of the grid). Every layer's weights sit in shared memory for the whole kernel in
// the 128-byte-swizzled layout wgmma reads. Per tile a warpgroup:
// - has the tile's input [64 x 64] brought by TMA into one of its 3 stages, two tiles ahead;
// - runs layer 0 as 4 wgmma m64n64k16 with A and B from shared memory, and every further layer
//   with A from registers: the fp32 accumulators, after bias and activation and packing to 16
//   bits, are exactly the A fragments of the next layer, so activations never leave registers;
// - writes the last layer (plus bias) to a swizzled staging buffer and stores it with TMA.
// The 4 warpgroups interleave, so one's bias/activation arithmetic overlaps another's wgmma and
// the loads and stores of the others.
#include <algorithm>

#include "cuda_check.h"
#include "element.cuh"
#include "fully_fused_mlp_sm90.h"
#include "hopper_gemm.h"
#include "sm90_ptx.cuh"
#include "tma_map.h"

namespace fusionscope::kernels::detail {
namespace {

constexpr int kWidth = 64;
constexpr int kWarpgroups = 4;
constexpr int kThreads = 128 * kWarpgroups;
constexpr int kStages = 3;
constexpr uint32_t kTileBytes = 64 * kWidth * 2;  // 8 KiB: a 64 x 64 tile of 16-bit values
constexpr uint32_t kLayerBytes = kWidth * kWidth * 2;
constexpr uint32_t kPerWarpgroup = (kStages + 1) * kTileBytes;  // input stages + output staging

struct Params {
  const void* weights[FusedMlpSm90::kMaxLayers];
  const void* biases[FusedMlpSm90::kMaxLayers];
  int layers;
  uint32_t tiles;      // 64-row tiles of the packed [rows * width / 64, 64] view, + the tail
  uint32_t tail_tile;  // the tile of the rows left over, or kNoTail
  int tail_row;        // its first row (of the unpacked tensor)
};
constexpr uint32_t kNoTail = ~0u;

size_t smem_bytes(int layers) {
  return size_t{1024} + size_t(layers) * kLayerBytes + size_t{kWarpgroups} * kPerWarpgroup +
         size_t(layers) * kWidth * 4 + size_t{kWarpgroups} * kStages * 8;
}

#ifdef FS_SM90A
#include "wgmma_m64n64k16.inc"
#include "wgmma_narrow.inc"
using namespace sm90;

// One layer's product into the 64-wide accumulator d, A from shared memory at x (layer 0) or
// from registers a (later layers), B the layer's weight w: 4 k16 slices on 64 columns, or per
// diagonal block of a packed width W, its W / 16 slices on its W columns.
template <typename T, int W>
__device__ __forceinline__ void layer_mma_ss(float (&d)[32], const uint8_t* x, const uint8_t* w) {
  if constexpr (W == 64) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      wgmma_m64n64k16_ss<T>(d, smem_desc(x + kk * 32), smem_desc(w + kk * 32), kk > 0);
  } else {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const int b = kk * 16 / W;  // the block: output rows (of w) and accumulator columns b W..
      const uint64_t da = smem_desc(x + kk * 32), db = smem_desc(w + b * W * 128 + kk * 32);
      if constexpr (W == 32)
        wgmma_m64n32k16_ss<T>(d + 16 * b, da, db, kk % 2);
      else
        wgmma_m64n16k16_ss<T>(d + 8 * b, da, db, 0);
    }
  }
}
template <typename T, int W>
__device__ __forceinline__ void layer_mma_rs(float (&d)[32], const uint32_t (&a)[4][4],
                                             const uint8_t* w) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const int b = kk * 16 / W;
    const uint64_t db = smem_desc(w + b * W * 128 + kk * 32);
    if constexpr (W == 64)
      wgmma_m64n64k16_rs<T>(d, a[kk], db, kk > 0);
    else if constexpr (W == 32)
      wgmma_m64n32k16_rs<T>(d + 16 * b, a[kk], db, kk % 2);
    else
      wgmma_m64n16k16_rs<T>(d + 8 * b, a[kk], db, 0);
  }
}
#endif

// The epilogue's instructions compete with wgmma for issue slots (the kernel is issue-bound once
// the loads are hidden): ReLU goes into the conversion, the others use one hardware tanh.
template <typename T, Activation A>
__device__ __forceinline__ uint32_t pack_activated(float a, float b) {
  if constexpr (A == Activation::kRelu)
    return pack2_relu<T>(a, b);
  else
    return pack2<T>(epilogue_act<A>(a), epilogue_act<A>(b));
}

template <typename T, Activation A, int W>
__global__ void __launch_bounds__(kThreads, 1)
    fused_mlp_sm90_kernel(const __grid_constant__ CUtensorMap tmap_in,
                          const __grid_constant__ CUtensorMap tmap_out,
                          const __grid_constant__ CUtensorMap tmap_tail_in,
                          const __grid_constant__ CUtensorMap tmap_tail_out, const Params p) {
#ifdef FS_SM90A
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  uint8_t* base =
      reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  uint8_t* weights = base;
  uint8_t* tiles = weights + p.layers * kLayerBytes;
  float* biases = reinterpret_cast<float*>(tiles + kWarpgroups * kPerWarpgroup);
  uint64_t* full = reinterpret_cast<uint64_t*>(biases + p.layers * kWidth);

  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  const int warp = tid / 32, lane = tid % 32;
  uint8_t* stages = tiles + wg * kPerWarpgroup;
  uint8_t* staging = stages + kStages * kTileBytes;
  const uint32_t staging_u32 = smem_u32(staging);
  uint64_t* my_full = full + wg * kStages;
  const uint32_t first = blockIdx.x * kWarpgroups + wg;
  const uint32_t step = gridDim.x * kWarpgroups;

  // The tail tile brings its rows (one packed row, zeros past the end) into the tile's row 0,
  // where the swizzle moves nothing; the tile's other rows are computed and never stored.
  auto load = [&](uint32_t tile, uint32_t slot) {
    if (tile == p.tail_tile) {
      mbar_expect_tx(&my_full[slot], kWidth * 2);
      tma_load(stages + slot * kTileBytes, &tmap_tail_in, &my_full[slot], 0, p.tail_row);
      return;
    }
    mbar_expect_tx(&my_full[slot], kTileBytes);
    tma_load(stages + slot * kTileBytes, &tmap_in, &my_full[slot], 0, static_cast<int>(tile * 64));
  };
  // Each warpgroup's first tiles are on their way while the block stages the weights.
  if (tid == 0) {
    for (int j = 0; j < kStages; ++j) mbar_init(&my_full[j], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    for (uint32_t j = 0; j + 1 < kStages; ++j)
      if (first + j * step < p.tiles) load(first + j * step, j);
  }

  // Weights into shared memory once, each layer [64 out][64 in] with 16-byte chunk c of row n at
  // chunk c ^ (n % 8) (128-byte swizzle), block-diagonal when packed (a chunk never straddles two
  // blocks: widths are multiples of 8); biases as fp32, repeated when packed (zeros without bias).
  constexpr int wd = W;
  for (int i = threadIdx.x; i < p.layers * kWidth * 8; i += kThreads) {
    const int l = i / (kWidth * 8), n = (i / 8) % kWidth, c = i % 8;
    uint4 v{0, 0, 0, 0};
    if (n / wd == c * 8 / wd)
      v = *reinterpret_cast<const uint4*>(static_cast<const T*>(p.weights[l]) + (n % wd) * wd +
                                          c * 8 % wd);
    *reinterpret_cast<uint4*>(weights + l * kLayerBytes + swizzled(n, c)) = v;
  }
  for (int i = threadIdx.x; i < p.layers * kWidth; i += kThreads) {
    const int l = i / kWidth, n = i % kWidth;
    const T* b = static_cast<const T*>(p.biases[l]);
    biases[i] = b ? to_float(b[n % wd]) : 0.f;
  }
  fence_proxy_async();  // wgmma reads what these threads wrote
  __syncthreads();

  const uint32_t r = warp * 16 + lane / 4;  // accumulator rows r and r + 8
  const uint32_t cp = 2 * (lane % 4);       // accumulator columns 8j + cp, 8j + cp + 1
  uint32_t i = 0;
  for (uint32_t tile = first; tile < p.tiles; tile += step, ++i) {
    const uint32_t slot = i % kStages;
    // The slot of tile i - 1 is free (its wgmma completed): fill it with tile i + kStages - 1.
    if (tid == 0 && tile + (kStages - 1) * step < p.tiles)
      load(tile + (kStages - 1) * step, (i + kStages - 1) % kStages);
    mbar_wait(&my_full[slot], (i / kStages) & 1);

    float d[32];
    const uint8_t* x = stages + slot * kTileBytes;
    wgmma_fence();
    layer_mma_ss<T, W>(d, x, weights);
    wgmma_commit();
    wgmma_wait<0>();

    for (int l = 0;; ++l) {
      const float* bias = biases + l * kWidth;
      if (l + 1 == p.layers) break;
      // Bias, activation, and the next layer's A fragments: k16 slice t is accumulator chunks
      // 2t (columns 16t..16t+7) and 2t + 1.
      uint32_t a[4][4];
#pragma unroll
      for (int t = 0; t < 4; ++t) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int j = 2 * t + h;
          const float2 b = *reinterpret_cast<const float2*>(bias + 8 * j + cp);
          a[t][2 * h] = pack_activated<T, A>(d[4 * j] + b.x, d[4 * j + 1] + b.y);
          a[t][2 * h + 1] = pack_activated<T, A>(d[4 * j + 2] + b.x, d[4 * j + 3] + b.y);
        }
      }
      const uint8_t* w = weights + (l + 1) * kLayerBytes;
      wgmma_fence();
      layer_mma_rs<T, W>(d, a, w);
      wgmma_commit();
      wgmma_wait<0>();
    }

    // Last layer: bias, then out through the staging buffer once the previous store read it.
    const float* bias = biases + (p.layers - 1) * kWidth;
    if (tid == 0) bulk_wait_read_all();
    named_sync(1 + wg);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float2 b = *reinterpret_cast<const float2*>(bias + 8 * j + cp);
      const uint32_t at = staging_u32 + 2 * cp;
      st_shared_u32(at + swizzled(r, j), pack2<T>(d[4 * j] + b.x, d[4 * j + 1] + b.y));
      st_shared_u32(at + swizzled(r + 8, j), pack2<T>(d[4 * j + 2] + b.x, d[4 * j + 3] + b.y));
    }
    fence_proxy_async();
    named_sync(1 + wg);
    if (tid == 0) {
      if (tile == p.tail_tile)
        tma_store(&tmap_tail_out, staging, 0, p.tail_row);
      else
        tma_store(&tmap_out, staging, 0, static_cast<int>(tile * 64));
      bulk_commit();
    }
  }
  if (tid == 0) bulk_wait_all();
#endif  // FS_SM90A
}

using KernelFn = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, Params);

template <int W>
KernelFn pick_width(DType dtype, Activation act) {
  KernelFn f = nullptr;
  dispatch_activation(act, [&]<Activation A>() {
    if (dtype == DType::kBf16) f = &fused_mlp_sm90_kernel<__nv_bfloat16, A, W>;
    if (dtype == DType::kFp16) f = &fused_mlp_sm90_kernel<__half, A, W>;
  });
  return f;
}

KernelFn pick(DType dtype, Activation act, int width) {
  KernelFn f = width == 16   ? pick_width<16>(dtype, act)
               : width == 32 ? pick_width<32>(dtype, act)
                             : pick_width<64>(dtype, act);
  if (!f) throw CudaError("fully-fused (sm_90a): fp16 or bf16 only");
  return f;
}

}  // namespace

struct FusedMlpSm90::State {
  std::vector<const void*> weights, biases;
  KernelFn kernel = nullptr;
  size_t smem = 0;
  unsigned blocks = 0;
  int width = 64, pack = 1;
  uint64_t packed_rows = 0;  // full 64-wide rows of the packed view
  std::map<const void*, std::pair<CUtensorMap, CUtensorMap>> in, out;  // packed view, tail rows
};

bool FusedMlpSm90::applies(const MlpConfig& c, int device) {
  if (c.dtype != DType::kFp16 && c.dtype != DType::kBf16) return false;
  const int layers = static_cast<int>(c.widths.size()) - 1;
  if (layers < 1 || layers > kMaxLayers) return false;
  const int64_t w0 = c.widths.front();
  if (w0 != 16 && w0 != 32 && w0 != kWidth) return false;
  for (auto w : c.widths)
    if (w != w0) return false;
  return hopper_gemm_available(device);
}

FusedMlpSm90::FusedMlpSm90(const MlpConfig& c, std::vector<const void*> weights,
                           std::vector<const void*> biases, int device)
    : config_(c), state_(std::make_unique<State>()) {
  State& s = *state_;
  s.weights = std::move(weights);
  s.biases = std::move(biases);
  const int layers = static_cast<int>(s.weights.size());
  if (layers < 1 || layers > kMaxLayers) throw CudaError("fully-fused (sm_90a): 1 to 8 layers");
  s.kernel = pick(c.dtype, c.activation, static_cast<int>(c.widths.front()));
  s.smem = smem_bytes(layers);
  FS_CUDA(cudaFuncSetAttribute(s.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(s.smem)));
  int sms = 0;
  FS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  s.width = static_cast<int>(c.widths.front());
  s.pack = kWidth / s.width;
  s.packed_rows = static_cast<uint64_t>(c.rows) / static_cast<uint64_t>(s.pack);
  const bool tail = static_cast<uint64_t>(c.rows) % static_cast<uint64_t>(s.pack) != 0;
  const uint64_t tiles = (s.packed_rows + 63) / 64 + (tail ? 1 : 0);
  s.blocks = static_cast<unsigned>(
      std::min<uint64_t>(static_cast<uint64_t>(sms), (tiles + kWarpgroups - 1) / kWarpgroups));
}

FusedMlpSm90::~FusedMlpSm90() = default;

std::string FusedMlpSm90::describe() const {
  const State& s = *state_;
  const std::string packed = s.pack > 1 ? ", " + std::to_string(s.pack) + " rows of " +
                                              std::to_string(s.width) + " packed per 64-wide row"
                                        : "";
  return "fully fused MLP: wgmma + TMA (sm_90a)" + packed + ", 4 warpgroups x " +
         std::to_string(s.blocks) + " blocks";
}

void FusedMlpSm90::run(const void* input, void* output, cudaStream_t stream) {
  State& s = *state_;
  const uint64_t rows = static_cast<uint64_t>(config_.rows);
  const int tail_row = static_cast<int>(s.packed_rows * static_cast<uint64_t>(s.pack));
  // Per buffer: the packed view (when it has a full row) and the tail's rows (when there are
  // any; otherwise a copy of the first, never used).
  auto maps = [&](const void* base) {
    std::pair<CUtensorMap, CUtensorMap> m{};
    if (s.packed_rows > 0) m.first = encode_tma_map_128b(base, s.packed_rows, kWidth, 64);
    if (static_cast<uint64_t>(tail_row) < rows)
      m.second = encode_tma_map_rows(base, rows, static_cast<uint64_t>(s.width),
                                     static_cast<uint32_t>(s.pack));
    else
      m.second = m.first;
    if (s.packed_rows == 0) m.first = m.second;
    return m;
  };
  auto in = s.in.find(input);
  if (in == s.in.end()) in = s.in.emplace(input, maps(input)).first;
  auto out = s.out.find(output);
  if (out == s.out.end()) out = s.out.emplace(output, maps(output)).first;
  Params p{};
  p.layers = static_cast<int>(s.weights.size());
  for (int l = 0; l < p.layers; ++l) {
    p.weights[l] = s.weights[static_cast<size_t>(l)];
    p.biases[l] = s.biases.empty() ? nullptr : s.biases[static_cast<size_t>(l)];
  }
  const uint32_t full_tiles = static_cast<uint32_t>((s.packed_rows + 63) / 64);
  const bool tail = static_cast<uint64_t>(tail_row) < rows;
  p.tiles = full_tiles + (tail ? 1 : 0);
  p.tail_tile = tail ? full_tiles : kNoTail;
  p.tail_row = tail_row;
  s.kernel<<<s.blocks, kThreads, s.smem, stream>>>(in->second.first, out->second.first,
                                                   in->second.second, out->second.second, p);
  FS_CUDA_LAUNCHED("fused_mlp_sm90");
}

}  // namespace fusionscope::kernels::detail
