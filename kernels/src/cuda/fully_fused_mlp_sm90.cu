// Fully fused MLP, Hopper (sm_90a), every layer the same width W:
// - 64 or 128: as it is;
// - 32 or 16: 2 or 4 rows packed into each 64-wide row (a row-major [rows, 32] tensor is a
//   [rows / 2, 64] one), a layer the product by a 64 x 64 block-diagonal weight whose diagonal
//   blocks are the layer's weight: wgmma n32 or n16 for each diagonal block alone (no work on
//   the zeros), every one reading the one W x W block kept in shared memory. The rows left over
//   (rows % 2 or 4) form a last tile of their own, loaded and stored row by row;
// - 48 or 96: rows loaded and stored as they are (unswizzled), layer 0's A fragments read with
//   ldmatrix, the weights padded to 64 or 128 columns in shared memory (the swizzle's atoms; at
//   96 wide only the 96 rows the MMAs read); the MMAs only as wide as the layer (n48, n96: no
//   work on the padding columns).
//
// One CTA per SM of 2 to 6 warpgroups (the kernel's Shape: by width, epilogue and layers), each
// an independent worker over 64-row tiles:
// the first tiles strided over all warpgroups of the grid, the last ones (up to 64 wide, all but
// the first feeds; see claims_every_tile) taken one at a time from a counter (so that the SMs the
// memory serves slower take fewer; see kDynamicRounds). Every layer's weights sit in shared
// memory for the whole kernel in the 128-byte-swizzled layout wgmma reads (64-column atoms). Per
// tile a warpgroup:
// - has the tile's input [64 x W] brought by TMA into one of its stages, ahead of use (marked
//   evict-first in the L2: it is read once), or with one stage once the last output has left it;
// - runs layer 0 as wgmma m64nWk16 with A and B from shared memory, and every further layer
//   with A from registers: the accumulators (fp16 in fp16, fp32 in bf16), after bias and
//   activation and packing to 16 bits, are exactly the A fragments of the next layer, so
//   activations never leave registers (fused_epilogue_sm90.cuh: where and how the biases and
//   activation are applied);
// - writes the last layer (plus bias) to a staging buffer (at 96 and 128, and at 16 with ReLU
//   or none, the tile's own input stage) and stores it with TMA (with one stage, once the next
//   tile's layer 0 has read the stage: kDeferStore).
// The warpgroups interleave, so one's bias/activation arithmetic overlaps another's wgmma and
// the loads and stores of the others.
#include <algorithm>
#include <type_traits>
#include <utility>

#include "../buffers.h"
#include "cuda_check.h"
#include "device_buffer.h"
#include "element.cuh"
#include "fully_fused_mlp_sm90.h"
#include "fused_epilogue_sm90.cuh"
#include "hopper_gemm.h"
#include "mma.cuh"
#include "sm90_ptx.cuh"
#include "tma_map.h"

namespace fusionscope::kernels::detail {

// What a layer's epilogue costs, by which a kernel's geometry is chosen: ReLU or none (light),
// GELU or SiLU in f16x2 (fp16 kernels), SiLU or GELU on fp32 accumulators (bf16 kernels; GELU's
// hidden layers in f16x2 too, FusedEpilogue::kHalfHidden).
enum class EpiCost { kLight, kHalf, kFloat, kFloatGelu };
constexpr EpiCost epi_cost(DType dtype, Activation act) {
  if (act == Activation::kRelu || act == Activation::kNone) return EpiCost::kLight;
  if (dtype == DType::kFp16) return EpiCost::kHalf;
  return act == Activation::kGeluTanh ? EpiCost::kFloatGelu : EpiCost::kFloat;
}
constexpr bool fp32_epilogue(EpiCost e) {
  return e == EpiCost::kFloat || e == EpiCost::kFloatGelu;
}

// 16 wide with ReLU or no activation (a light epilogue): bound by the tiles in flight, not by its
// layers, so it keeps more of them (the geometry's kStages).
constexpr bool deep16(int width, EpiCost e) {
  return width == 16 && e == EpiCost::kLight;
}
// Six warpgroups of two stages each where the others have four of three (staging buffers 144 KB
// against 128; 80 registers a thread, no spills) where the epilogue bounds the kernel: 16 and 64
// wide with GELU or SiLU, and 32 and 48 wide with them in fp32 (bf16). More warpgroups hide more
// of each one's layer latency behind the others' work (16 wide GELU was bound by that latency, not
// by its units). Not fp16 at 32 and 48 wide, where it measured level or mixed; 32 wide bf16 and
// 64 wide bf16 SiLU take five instead (base_shape).
// Measured: docs/fused_choices.md, "six_warpgroups".
constexpr bool six_warpgroups(int width, EpiCost e) {
  return e != EpiCost::kLight && (width == 16 || width == 64 || (width == 48 && fp32_epilogue(e)) ||
                                  (width == 32 && fp32_epilogue(e)));
}
// But four of three at 32, 48 and 64 wide where there are fewer tiles than kFewRounds rounds of
// six warpgroups on every SM (a kernel of each is built): with a tile or so a warpgroup, six
// measured slower than four.
// Measured: docs/fused_choices.md, "four_when_few".
constexpr bool four_when_few(int width) {
  return width == 32 || width == 48 || width == 64;
}
constexpr uint64_t kFewRounds = 2;
// Seven warpgroups where six_warpgroups gives six to bf16 GELU and SiLU at 48 wide, with 5 or 6
// layers (8 do not fit the shared memory; 72 registers a thread, the most seven allow). The MUFU's
// work comes in bursts, each warp's epilogue asking more of it than it gives, so one more warp a
// scheduler keeps it busier (docs/kernels.md, "Where a bf16 GELU pass waits"): 2% at a million
// rows. Not at 2 to 4 layers, where the memory bounds the kernel and it measured slower, nor at 16
// wide: in bf16 ptxas spilled at 72 registers (10% slower), in fp16 it was mixed.
// Measured: docs/fused_choices.md, "seven_warpgroups".
constexpr bool seven_warpgroups(int width, EpiCost e, int layers) {
  return width == 48 && fp32_epilogue(e) && (layers == 5 || layers == 6);
}
// A kernel's shape: warpgroups a block and tiles in each warpgroup's ring of stages. Its loads
// run stages - 1 tiles ahead; with one stage, the next tile is loaded once the output staged there
// has been read.
struct Shape {
  int warpgroups, stages;
  constexpr bool operator==(const Shape&) const = default;
};
// Up to 96 wide, and at 128 with a light epilogue:
// - stages: two at 96 and 128 wide, where the weights fill the shared memory, and with six
//   warpgroups (but three at 16 wide up to kShallow16 layers: fused_shape), five at 16 wide with
//   a light epilogue, three otherwise;
// - warpgroups: two at 128 wide, three at 96 (its weights kept as 96 rows, not 128: the room of
//   a third; 10-14% faster than two at 5 layers), six with six_warpgroups, four otherwise;
// - 32 wide bf16 GELU and SiLU and 64 wide SiLU: five warpgroups where six_warpgroups gives
//   six, their biases by wgmma (FusedEpilogue::kFoldMma; Geometry::kBiasAtoms): in six ptxas
//   serialized the wgmmas (C7512, 80 registers a thread), in five it does not (83 and 96
//   registers). 64 wide GELU, its hidden layers fp16 (FusedEpilogue::kHalfHidden), takes six.
// Measured: docs/fused_choices.md, "base_shape".
constexpr Shape base_shape(int width, EpiCost e, bool six) {
  if (width == 96) return {3, 2};
  if (width > 64) return {2, 2};
  if (six)
    return {(width == 32 || (width == 64 && e == EpiCost::kFloat)) && fp32_epilogue(e) ? 5 : 6, 2};
  return {4, deep16(width, e) ? 5 : 3};
}
// 96 and 128 wide: with GELU or SiLU the layers bound the kernel from three layers on, and the
// fewer the layers, the more warpgroups the shared memory their weights leave holds. 96 wide:
// four of two stages at three and four layers of GELU or SiLU. 128 wide: four of two at three
// layers of bf16 GELU or SiLU; at four, three of two, or four of one stage in bf16; at five, four
// of one stage with any epilogue (the one stage holds 5 layers of 128: see kDeferStore). Four of
// one only with kWideFewRounds rounds of tiles: it loads no tile ahead of the one it runs.
// Measured: docs/fused_choices.md, "wide_shape".
constexpr double kWideFewRounds = 16;
constexpr Shape wide_shape(int width, EpiCost e, int layers, double tiles_a_sm) {
  const bool heavy = e != EpiCost::kLight;
  const bool many = tiles_a_sm >= kWideFewRounds * 4;
  if (width == 96) return heavy && (layers == 3 || layers == 4) ? Shape{4, 2} : Shape{3, 2};
  if (many && (layers >= 5 || (layers == 4 && fp32_epilogue(e)))) return {4, 1};
  if (layers == 4 && heavy) return {3, 2};
  if (layers == 3 && fp32_epilogue(e)) return {4, 2};
  return {2, 2};
}
// 16 wide with GELU or SiLU: a third stage in each of the six warpgroups (192 KB of tiles and
// staging) where up to kShallow16 layers leave the memory the bound, so that each keeps two tiles
// in flight ahead of the one it runs (1 and 2 layers 6-7% faster, 3 layers 4-7%, 4 layers level
// to 5%). From five layers on the layers bound the kernel, and three stages measured 3-5% slower.
// Measured: docs/fused_choices.md, "shallow16".
constexpr int kShallow16 = 4;
// The shape of a pass of `layers` layers of this width over tiles_a_sm 64-row tiles an SM.
constexpr Shape fused_shape(int width, EpiCost e, int layers, double tiles_a_sm) {
  if (width > 64) return wide_shape(width, e, layers, tiles_a_sm);
  const bool few = four_when_few(width) && tiles_a_sm < double(kFewRounds) * 6;
  const bool six = six_warpgroups(width, e) && !few;
  if (six && seven_warpgroups(width, e, layers)) return {7, 2};
  if (six && width == 16 && layers <= kShallow16) return {6, 3};
  return base_shape(width, e, six);
}
// The shapes fused_shape gives a width and epilogue (a kernel is built for each).
struct Shapes {
  Shape at[8];
  int n = 0;
};
constexpr Shapes shapes_built(int width, EpiCost e) {
  Shapes out{};
  for (int layers = 1; layers <= fused_sm90_max_layers(width); ++layers) {
    for (const double tiles_a_sm : {0.0, 1e9}) {
      const Shape s = fused_shape(width, e, layers, tiles_a_sm);
      bool seen = false;
      for (int i = 0; i < out.n; ++i) seen = seen || out.at[i] == s;
      if (!seen) out.at[out.n++] = s;
    }
  }
  return out;
}
// Where the bias MMA (FusedEpilogue::kBiasMma) runs whether or not the MLP has biases (their
// slices then hold zeros), and a kernel without it is built for MLPs that have none. Under the
// run-time branch it had, ptxas closed each layer's wgmma group with an empty wgmma of its own
// (HGMMA.64x8x16 on RZ) and gave the kernels 4 to 16 registers more. Not at 32 wide, where ptxas
// then serialised the wgmmas (C7511, C7520), nor at 96 (slower).
// Measured: docs/fused_choices.md, "bias_mma_always".
constexpr bool bias_mma_always(int width) {
  return width == 48 || width == 64;
}
// Which kernels take every tile but their first feeds from the counter (kDynamicRounds): every
// width up to 64 (at 96 and 128 the layers bound the pass and two rounds are claimed).
constexpr bool claims_every_tile(int width) {
  return width <= 64;
}

// The kernel's geometry for layers W wide with epilogues costing E, in kWg warpgroups of kStg
// stages (outside the anonymous namespace: members a width does not use are no warning).
template <int W, EpiCost E = EpiCost::kHalf,
          int kWg = base_shape(W, E, six_warpgroups(W, E)).warpgroups,
          int kStg = base_shape(W, E, six_warpgroups(W, E)).stages>
struct FusedMlpSm90Geometry {
  static constexpr bool kPacked = W == 16 || W == 32;        // rows packed 4 or 2 to a row
  static constexpr bool kDense = W == 48 || W == 96;         // rows as they are, weights padded
  static constexpr int kCols = W <= 64 ? 64 : 128;           // columns of the MMAs
  static constexpr int kAtoms = kCols / 64;                  // 128-byte-swizzled column atoms
  static constexpr int kSlices = (kDense ? W : kCols) / 16;  // k16 slices a layer computes
  static constexpr int kAcc = kCols / 2;                     // fp32 accumulators a thread
  static constexpr uint32_t kTileBytes = 64 * kCols * 2;     // a stage
  static constexpr uint32_t kLoadBytes = 64 * (kDense ? W : kCols) * 2;  // a tile's input
  // Rows of a layer's weight in shared memory, each kCols wide (64-column atoms): packed, the one
  // W x W block every diagonal block's wgmma reads (they are the same weight), in its first W / 16
  // k16 slices; at 96 wide the 96 rows its n96 MMAs read (24 KB a layer, not 32: base_shape);
  // elsewhere all kCols.
  static constexpr int kWeightRows = kPacked || W == 96 ? W : kCols;
  static constexpr int kWeightChunks = (kPacked ? W : kCols) / 8;  // 16-byte chunks copied a row
  static constexpr uint32_t kLayerBytes = kWeightRows * kCols * 2;
  static constexpr int kWarpgroups = kWg;
  static constexpr int kThreads = 128 * kWarpgroups;
  // Input stages a warpgroup (base_shape, wide_shape). 16 wide with ReLU or no activation
  // (kDeep16) is bound by the bytes in flight, not by its layers: it keeps four tiles ahead, its
  // output staged in the tile's own stage (as at 128 wide) and its biases in 16 bits, which still
  // fits 8 layers. Where the layers bound the kernel (GELU at 16 and 32 wide), a fourth stage
  // measured slower.
  // Measured: docs/fused_choices.md, "Geometry::kDeep16".
  static constexpr bool kDeep16 = deep16(W, E);
  static constexpr int kStages = kStg;
  // One stage: a tile's output is held in registers until the next tile's layer 0 has read
  // the stage (see the kernel's loop).
  static constexpr bool kDeferStore = kStages == 1;
  // The output staged in its input's stage.
  static constexpr bool kStageInSlot = kCols == 128 || kDeep16;
  static constexpr uint32_t kPerWarpgroup = (kStages + (kStageInSlot ? 0 : 1)) * kTileBytes;
  // Biases as 16 bits at 128 wide (room) and in kDeep16, whose epilogues all add them so
  // (kHalfBias).
  static constexpr int kBiasBytes = kCols == 128 || kDeep16 ? 2 : 4;
  // 64 wide bf16 GELU and SiLU, and 32 wide bf16 SiLU in five warpgroups, add their biases by
  // wgmma (FusedEpilogue::kFoldMma) from k16 slices of their own, the weight having no padding to
  // hold them (packed, one m64n64k16 on every diagonal block where the weight's rows took one
  // m64nWk16 a block): four layers' slices to a 128-byte-swizzled atom (64 rows of 128 bytes,
  // slice l % 4 of atom l / 4), in place of the bias array (so that 8 layers still fit at 64).
  // Not 32 wide GELU (the weight's rows measured faster), nor 32 wide SiLU in the four warpgroups
  // of its few-tiles shape (ptxas serialized the wgmmas with the atoms, C7511).
  // Measured: docs/fused_choices.md, "Geometry::kBiasAtoms".
  static constexpr bool bias_atoms(int warpgroups) {
    return fp32_epilogue(E) && (W == 64 || (W == 32 && E == EpiCost::kFloat && warpgroups == 5));
  }
  static constexpr bool kBiasAtoms = bias_atoms(kWg);
  // 16 wide bf16 GELU and SiLU (FusedEpilogue::kBiasPreload) keep their biases as fp32, each pair
  // twice in the accumulators' order, so that a 16-byte load fills four accumulators with no
  // instruction to widen them. Not at 96 wide (three times the loads, slower) nor at 32 wide SiLU
  // in four warpgroups (level), and no room for them at 128.
  // Measured: docs/fused_choices.md, "Geometry::kPreloadF32".
  static constexpr bool kPreloadF32 = fp32_epilogue(E) && W == 16;
  // After them, 16 wide GELU's fp16 pairs for its hidden layers (FusedEpilogue::kHiddenF16Acc):
  // 32 bytes a layer (hidden_pair_half).
  static constexpr size_t kPreloadLayerBytes = size_t(kSlices) * 128 + 32;
  static constexpr size_t bias_bytes(int layers, int warpgroups = kWg) {
    return bias_atoms(warpgroups) ? size_t((layers + 3) / 4) * 8192
           : kPreloadF32          ? size_t(layers) * kPreloadLayerBytes
                                  : size_t(layers) * kCols * kBiasBytes;
  }
};

namespace {

template <int W, EpiCost E = EpiCost::kHalf,
          int kWg = base_shape(W, E, six_warpgroups(W, E)).warpgroups,
          int kStg = base_shape(W, E, six_warpgroups(W, E)).stages>
using Geometry = FusedMlpSm90Geometry<W, E, kWg, kStg>;
template <typename T, Activation A>
constexpr EpiCost kEpiCost = epi_cost(std::is_same_v<T, __half> ? DType::kFp16 : DType::kBf16, A);

struct Params {
  const void* weights[FusedMlpSm90::kMaxLayers];
  const void* biases[FusedMlpSm90::kMaxLayers];
  int layers;
  uint32_t tiles;      // 64-row tiles of the (packed) [rows * W / kCols, kCols] view, + the tail
  uint32_t tail_tile;  // the tile of the rows left over, or kNoTail
  int tail_row;        // its first row (of the unpacked tensor)
  int act_out;         // the activation on the last layer too (a segment of a longer MLP)
  // Tiles from static_tiles on are taken from a counter that is never reset: every launch makes
  // exactly `claims` claims (each dynamic tile once, then one past the end per warpgroup), the
  // counter wraps to 0 after claims - 1 (atom.inc), and launches on one stream do not overlap,
  // so claim n of a launch reads n and takes tile static_tiles + n. No launch has to reset it (a
  // reset by the last block to finish cost its kernel ~1 us at the end), and a CUDA graph
  // replays as it is.
  uint32_t static_tiles;
  uint32_t claims;
  unsigned* counter;
};
constexpr uint32_t kNoTail = ~0u;
// Rounds of tiles (one tile per warpgroup of the grid) at the end of the work that are taken
// from the counter rather than dealt in stride. Dealt in stride, every warpgroup gets the same
// number of tiles to one, but the memory does not serve every SM at the same rate: at a million
// rows of 16 the slowest block finished 14% after the median one. Two rounds measured 2-3.5%
// faster than none from 32 wide up. Up to 64 wide, with each claim made a tile ahead and not
// waited for, every tile but the first feeds is claimed (claims_every_tile); the first feeds are
// dealt (claimed, each waited for the round trip of the one before while the block set up).
// Measured: docs/fused_choices.md, "kDynamicRounds".
constexpr uint64_t kDynamicRounds = 2;

// The kernel's shared memory in shape `s` (the kernel lays it out in this order).
template <int W, EpiCost E>
constexpr size_t smem_bytes(Shape s, int layers) {
  using G = Geometry<W, E>;  // for what does not depend on the shape
  const size_t per_warpgroup = size_t(s.stages + (G::kStageInSlot ? 0 : 1)) * G::kTileBytes;
  return size_t{1024} + size_t(layers) * G::kLayerBytes + size_t(s.warpgroups) * per_warpgroup +
         G::bias_bytes(layers, s.warpgroups) +
         size_t(s.warpgroups) * size_t(s.stages) * (8 + 4);  // barriers, then tile numbers
}
// fused_sm90_max_layers (buffers.h), by which the planner cuts deep MLPs into kernels, is what
// fits the smallest opt-in limit of a Hopper GPU (227 KB), in every shape fused_shape gives.
template <int W, EpiCost E>
constexpr bool max_layers_fit() {
  constexpr int n = fused_sm90_max_layers(W);
  for (const double tiles_a_sm : {0.0, 1e9}) {
    for (int layers = 1; layers <= n; ++layers)
      if (smem_bytes<W, E>(fused_shape(W, E, layers, tiles_a_sm), layers) > kFusedSmemLimit)
        return false;
    if (n < FusedMlpSm90::kMaxLayers &&
        smem_bytes<W, E>(fused_shape(W, E, n + 1, tiles_a_sm), n + 1) <= kFusedSmemLimit)
      return false;
  }
  return true;
}
template <int W>
constexpr bool max_layers_fit() {
  return max_layers_fit<W, EpiCost::kLight>() && max_layers_fit<W, EpiCost::kHalf>() &&
         max_layers_fit<W, EpiCost::kFloat>() && max_layers_fit<W, EpiCost::kFloatGelu>();
}
static_assert(max_layers_fit<16>() && max_layers_fit<32>() && max_layers_fit<48>() &&
              max_layers_fit<64>() && max_layers_fit<96>() && max_layers_fit<128>());

// f.template operator()<W>() for the kernels' width W (applies() admits no other).
template <typename F>
auto dispatch_width(int width, F&& f) {
  switch (width) {
    case 16:
      return f.template operator()<16>();
    case 32:
      return f.template operator()<32>();
    case 48:
      return f.template operator()<48>();
    case 64:
      return f.template operator()<64>();
    case 96:
      return f.template operator()<96>();
    default:
      return f.template operator()<128>();
  }
}

size_t smem_bytes(int width, EpiCost e, Shape shape, int layers) {
  return dispatch_width(width, [&]<int W>() {
    switch (e) {
      case EpiCost::kLight:
        return smem_bytes<W, EpiCost::kLight>(shape, layers);
      case EpiCost::kHalf:
        return smem_bytes<W, EpiCost::kHalf>(shape, layers);
      case EpiCost::kFloat:
        return smem_bytes<W, EpiCost::kFloat>(shape, layers);
      default:
        return smem_bytes<W, EpiCost::kFloatGelu>(shape, layers);
    }
  });
}

#ifdef FS_SM90A
#include "wgmma_m64n128k16.inc"
#include "wgmma_m64n48k16.inc"
#include "wgmma_m64n64k16.inc"
#include "wgmma_m64n96k16.inc"
#include "wgmma_narrow.inc"
using namespace sm90;

// Byte offset of k16 slice kk in a K-major operand of 128-byte rows grouped in 64-column atoms
// of `atom_bytes` each.
__device__ __forceinline__ uint32_t slice_at(int kk, uint32_t atom_bytes) {
  return (kk / 4) * atom_bytes + (kk % 4) * 32;
}

// One layer's product into the accumulator d, A from shared memory (layer 0, descriptor x) or
// from registers a (later layers), B the layer's weight (descriptor w): every k16 slice on all
// columns, or per diagonal block of a packed width W, its W / 16 slices on its W columns.
// Descriptors are the low words (smem_desc_lo) of the operands' first bytes; every offset below
// is a constant, so a layer costs one add per operand rather than a descriptor rebuilt from a
// pointer (the kernel is issue-bound at narrow widths).
template <int W>
__device__ __forceinline__ uint32_t weight_slice(uint32_t w, int kk) {
  using G = Geometry<W>;
  if constexpr (G::kCols == 128) {
    return w + slice_at(kk, G::kWeightRows * 128) / 16;
  } else if constexpr (!G::kPacked) {
    return w + kk * 2;
  } else {
    return w + (kk % (W / 16)) * 2;  // every diagonal block's weight is the one block
  }
}
// Acc: float (fp32 accumulators, kAcc of them) or uint32_t (fp16 ones, packed pairs: kAcc / 2).
template <typename Acc, int W>
using AccArray = Acc[std::is_same_v<Acc, float> ? Geometry<W>::kAcc : Geometry<W>::kAcc / 2];
// kOnto: the product is added to what d holds (fp16 accumulators preloaded with the biases).
template <typename T, int W, typename Acc, bool kOnto = false>
__device__ __forceinline__ void layer_mma_ss(AccArray<Acc, W>& d, uint32_t x, uint32_t w) {
  using G = Geometry<W>;
  constexpr bool kF16 = std::is_same_v<Acc, uint32_t>;
#pragma unroll
  for (int kk = 0; kk < G::kSlices; ++kk) {
    const uint64_t da = smem_desc_from_lo(x + slice_at(kk, 64 * 128) / 16);
    const uint64_t db = smem_desc_from_lo(weight_slice<W>(w, kk));
    if constexpr (kF16 && W == 128) {
      wgmma_m64n128k16_ss_f16acc(d, da, db, kOnto || kk > 0);
    } else if constexpr (kF16 && W == 32) {
      wgmma_m64n32k16_f16acc_ss(d + 8 * (kk / 2), da, db, kOnto || kk % 2);
    } else if constexpr (kF16 && W == 16) {
      wgmma_m64n16k16_f16acc_ss(d + 4 * kk, da, db, kOnto);  // one k16 slice a block
    } else if constexpr (kF16) {
      wgmma_m64n64k16_ss_f16acc(d, da, db, kOnto || kk > 0);
    } else if constexpr (W == 128) {
      wgmma_m64n128k16_ss<T>(d, da, db, kOnto || kk > 0);
    } else if constexpr (W == 64) {
      wgmma_m64n64k16_ss<T>(d, da, db, kOnto || kk > 0);
    } else {
      const int b = kk * 16 / W;
      if constexpr (W == 32)
        wgmma_m64n32k16_ss<T>(d + 16 * b, da, db, kOnto || kk % 2);
      else
        wgmma_m64n16k16_ss<T>(d + 8 * b, da, db, kOnto);
    }
  }
}
template <typename T, int W, typename Acc, bool kOnto = false>
__device__ __forceinline__ void layer_mma_rs(AccArray<Acc, W>& d,
                                             const uint32_t (&a)[Geometry<W>::kSlices][4],
                                             uint32_t w) {
  using G = Geometry<W>;
  constexpr bool kF16 = std::is_same_v<Acc, uint32_t>;
#pragma unroll
  for (int kk = 0; kk < G::kSlices; ++kk) {
    const uint64_t db = smem_desc_from_lo(weight_slice<W>(w, kk));
    // 96 and 48 wide: no work on the padding columns (n96 measured 9% faster than n128; n48
    // faster than n64 or level).
    // Measured: docs/fused_choices.md, "layer_mma_rs".
    if constexpr (kF16 && W == 96) {
      wgmma_m64n96k16_rs_f16acc(d, a[kk], db, kOnto || kk > 0);
    } else if constexpr (kF16 && W == 48) {
      wgmma_m64n48k16_rs_f16acc(d, a[kk], db, kOnto || kk > 0);
    } else if constexpr (kF16 && W == 128) {
      wgmma_m64n128k16_rs_f16acc(d, a[kk], db, kOnto || kk > 0);
    } else if constexpr (kF16 && W == 32) {
      wgmma_m64n32k16_f16acc_rs(d + 8 * (kk / 2), a[kk], db, kOnto || kk % 2);
    } else if constexpr (kF16 && W == 16) {
      wgmma_m64n16k16_f16acc_rs(d + 4 * kk, a[kk], db, kOnto);
    } else if constexpr (kF16) {
      wgmma_m64n64k16_rs_f16acc(d, a[kk], db, kOnto || kk > 0);
    } else if constexpr (W == 96) {
      wgmma_m64n96k16_rs<T>(d, a[kk], db, kOnto || kk > 0);
    } else if constexpr (W == 48) {
      wgmma_m64n48k16_rs<T>(d, a[kk], db, kOnto || kk > 0);
    } else if constexpr (G::kCols == 128) {
      wgmma_m64n128k16_rs<T>(d, a[kk], db, kOnto || kk > 0);
    } else if constexpr (!G::kPacked) {
      wgmma_m64n64k16_rs<T>(d, a[kk], db, kOnto || kk > 0);
    } else {
      const int b = kk * 16 / W;
      if constexpr (W == 32)
        wgmma_m64n32k16_rs<T>(d + 16 * b, a[kk], db, kOnto || kk % 2);
      else
        wgmma_m64n16k16_rs<T>(d + 8 * b, a[kk], db, kOnto);
    }
  }
}

// The biases sit in column 0 of a k16 slice (zeros elsewhere): the slice after the weight's
// (W / 16) in its rows (32 wide ReLU and GELU) or its padding (48 and 96 wide), or a slice of the
// bias atoms (Geometry::kBiasAtoms: every 64 columns at once). A wgmma of that slice by an A that
// is 1 in column 0 and 0 elsewhere adds them to the accumulator: one instruction a layer (a
// diagonal block, from the weight's rows) instead of an add an accumulator.
template <int W>
constexpr int kBiasChunk = 2 * (W / 16);  // its first 16-byte chunk in each row
// Acc: float (fp32 accumulators) or uint32_t (fp16 ones, FusedEpilogue::kHiddenF16Acc, whose
// operands are fp16).
template <typename T, int W, bool kAtoms, typename Acc = float>
__device__ __forceinline__ void bias_mma(AccArray<Acc, W>& d, const uint32_t (&one)[4],
                                         uint32_t w) {
  constexpr bool kF16 = std::is_same_v<Acc, uint32_t>;
  if constexpr (kAtoms) {  // w: the slice itself, in the bias atoms (all 64 columns)
    if constexpr (kF16)
      wgmma_m64n64k16_rs_f16acc(d, one, smem_desc_from_lo(w), 1);
    else
      wgmma_m64n64k16_rs<T>(d, one, smem_desc_from_lo(w), 1);
  } else if constexpr (W == 48 || W == 96) {  // the padding slice after the weight's W / 16
    const uint64_t db = smem_desc_from_lo(weight_slice<W>(w, W / 16));
    if constexpr (kF16 && W == 96)
      wgmma_m64n96k16_rs_f16acc(d, one, db, 1);
    else if constexpr (kF16)
      wgmma_m64n48k16_rs_f16acc(d, one, db, 1);
    else if constexpr (W == 96)
      wgmma_m64n96k16_rs<T>(d, one, db, 1);
    else
      wgmma_m64n48k16_rs<T>(d, one, db, 1);
  } else {
#pragma unroll
    for (int b = 0; b < 64 / W; ++b) {
      const uint64_t db = smem_desc_from_lo(w + kBiasChunk<W>);  // 16 bytes a descriptor unit
      if constexpr (kF16 && W == 32)
        wgmma_m64n32k16_f16acc_rs(d + 8 * b, one, db, 1);
      else if constexpr (kF16)
        wgmma_m64n16k16_f16acc_rs(d + 4 * b, one, db, 1);
      else if constexpr (W == 32)
        wgmma_m64n32k16_rs<T>(d + 16 * b, one, db, 1);
      else
        wgmma_m64n16k16_rs<T>(d + 8 * b, one, db, 1);
    }
  }
}

// 16-bit biases (kHalfBias) up to 64 wide in shared memory: the pair of columns n, n + 1 (n
// even) of layer l at this 32-bit word. A thread reads the pairs 8 j + 2 (lane % 4) of every
// chunk j, so they sit together, chunk after chunk, for 16-byte loads: two loads a layer where
// there were eight. Not at 128 wide, where four loads for sixteen measured slower.
// Measured: docs/fused_choices.md, "half_bias_word".
template <int kCols>
__device__ __forceinline__ int half_bias_word(int l, int n) {
  return l * (kCols / 2) + ((n % 8) / 2) * (kCols / 8) + n / 8;
}
// FusedEpilogue::kBiasPreload: the pair n, n + 1 of layer l at this 32-bit word (kCols / 2 a
// layer; packed, the biases repeated across the 64 columns). A thread reads the pairs 8 j + cp of
// chunks j = 4 m .. 4 m + 3 in its m-th 16-byte load, the four threads of a row (cp = 0, 2, 4, 6)
// 64 contiguous bytes (no bank conflicts).
template <int kCols>
__device__ __forceinline__ int preload_bias_word(int l, int n) {
  return l * (kCols / 2) + (n / 32) * 16 + ((n % 8) / 2) * 4 + (n / 8) % 4;
}

// FusedEpilogue::kHiddenF16Acc at 16 wide: column n (below 16) of hidden layer l at this fp16 of
// the pairs. Packed, a thread's chunk j holds columns 8 (j % 2) + cp, cp + 1 of its row, so its
// two pairs (columns cp and 8 + cp) sit together: one 8-byte load a layer.
__device__ __forceinline__ int hidden_pair_half(int l, int n) {
  return l * 16 + ((n % 8) / 2) * 4 + (n / 8) * 2 + n % 2;
}

// Layer 0 of a dense width: the tile's rows as they are ([64 x W], W * 2 bytes apart) read into
// A fragments with ldmatrix (warp w's 16 rows; lanes 16-31 the upper 8 columns of each slice),
// then the register form.
template <typename T, int W, typename Acc, bool kOnto = false>
__device__ __forceinline__ void layer0_mma_dense(AccArray<Acc, W>& d, const uint8_t* x, uint32_t w,
                                                 int warp, int lane) {
  uint32_t a[Geometry<W>::kSlices][4];
  const uint8_t* row = x + (warp * 16 + lane % 16) * (W * 2) + (lane / 16) * 16;
#pragma unroll
  for (int kk = 0; kk < Geometry<W>::kSlices; ++kk) ldmatrix_x4(a[kk], row + kk * 32);
  wgmma_fence();
  layer_mma_rs<T, W, Acc, kOnto>(d, a, w);
}

// Biases for columns c and c + 1, kept as fp32 or (at 128 wide) as 16-bit values.
template <typename T, int W>
__device__ __forceinline__ float2 bias_pair(const uint8_t* biases, int c) {
  if constexpr (Geometry<W>::kBiasBytes == 4) {
    return *reinterpret_cast<const float2*>(biases + 4 * c);
  } else {
    const T* b = reinterpret_cast<const T*>(biases + 2 * c);
    return make_float2(to_float(b[0]), to_float(b[1]));
  }
}

#endif  // FS_SM90A

// kBiases false: an MLP without biases, built where the bias MMA would otherwise add zeros
// (bias_mma_always).
template <typename T, Activation A, int W, int kWg, int kStg, bool kBiases = true>
__global__ void __launch_bounds__(Geometry<W, kEpiCost<T, A>, kWg, kStg>::kThreads, 1)
    fused_mlp_sm90_kernel(const __grid_constant__ CUtensorMap tmap_in,
                          const __grid_constant__ CUtensorMap tmap_out,
                          const __grid_constant__ CUtensorMap tmap_tail_in,
                          const __grid_constant__ CUtensorMap tmap_tail_out, const Params p) {
#ifdef FS_SM90A
  using G = Geometry<W, kEpiCost<T, A>, kWg, kStg>;
  constexpr int kCols = G::kCols, kStages = G::kStages;
  constexpr uint32_t kTileBytes = G::kTileBytes;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // Aligned by an offset from smem_raw, so that every pointer below stays known to be shared
  // memory (plain shared loads, no generic-to-shared conversions in the loops).
  const uint32_t raw_u32 = smem_u32(smem_raw);
  uint8_t* base = smem_raw + (((raw_u32 + 1023) & ~1023u) - raw_u32);
  uint8_t* weights = base;
  uint8_t* tiles = weights + p.layers * G::kLayerBytes;
  uint8_t* biases = tiles + G::kWarpgroups * G::kPerWarpgroup;
  uint64_t* full = reinterpret_cast<uint64_t*>(biases + G::bias_bytes(p.layers));
  // The tile in each stage, written by the warpgroup's thread 0 before it arms the stage's
  // barrier (its arrive releases the write to the threads that wait on the barrier).
  uint32_t* tile_in = reinterpret_cast<uint32_t*>(full + G::kWarpgroups * kStages);

  const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
  const int warp = tid / 32, lane = tid % 32;
  uint8_t* stages = tiles + wg * G::kPerWarpgroup;
  uint64_t* my_full = full + wg * kStages;
  uint32_t* my_tile_in = tile_in + wg * kStages;
  // Workers numbered warpgroup-major, so that the tiles left over after whole rounds (tiles %
  // workers) go one to an SM before any SM takes a second: SMs then differ by at most one tile,
  // where block-major numbering gave the first SMs one tile per warpgroup more than the last.
  const uint32_t first = wg * gridDim.x + blockIdx.x;
  const uint32_t step = gridDim.x * G::kWarpgroups;

  // The tail tile brings its rows (one packed row, zeros past the end) into the tile's row 0,
  // where the swizzle moves nothing; the tile's other rows are computed and never stored.
  auto load = [&](uint32_t tile, uint32_t slot) {
    uint8_t* dst = stages + slot * kTileBytes;
    if (tile == p.tail_tile) {
      mbar_expect_tx(&my_full[slot], kCols * 2);
      tma_load(dst, &tmap_tail_in, &my_full[slot], 0, p.tail_row);
      return;
    }
    mbar_expect_tx(&my_full[slot], G::kLoadBytes);
    // The input is read once: evict-first keeps the L2 for the outputs on their way to memory
    // (measured 6-7% faster from 2 M rows of 16 or 32 up; the output keeps the normal policy,
    // for the kernel that reads it next).
    const auto box = [&](uint8_t* to, int c0) {
      tma_load_hint(smem_u32(to), &tmap_in, smem_u32(&my_full[slot]), c0,
                    static_cast<int>(tile * 64), kL2EvictFirst);
    };
    if constexpr (G::kDense) {
      box(dst, 0);
    } else {
#pragma unroll
      for (int a = 0; a < G::kAtoms; ++a) box(dst + a * 64 * 128, a * 64);
    }
  };
  // Thread 0's sequence of this warpgroup's tiles: in stride below static_tiles, then from the
  // counter, each claim made one tile ahead of its use so that the atomic's round trip is not
  // waited for (the claim ahead is kept as the counter's value and nothing reads it before its
  // use). A value past the tiles ends the sequence.
  uint32_t next_static = first, claimed = 0;
  bool have_claim = false, ended = false;
  const auto claim = [&] { return claim_wrapping(p.counter, p.claims - 1); };
  const auto next_tile = [&] {
    uint32_t t;
    if (next_static < p.static_tiles) {
      t = next_static;
      next_static += step;
    } else if (p.static_tiles >= p.tiles) {
      return p.tiles;
    } else {
      t = p.static_tiles + (have_claim ? claimed : claim());
    }
    have_claim = next_static >= p.static_tiles && t < p.tiles;
    if (have_claim) claimed = claim();
    return t;
  };
  // Fills `slot` with the next tile, or marks the end there (an arrive with no bytes).
  const auto feed = [&](uint32_t slot) {
    if (ended) return;
    const uint32_t t = next_tile();
    my_tile_in[slot] = t;
    if (t < p.tiles) {
      load(t, slot);
    } else {
      ended = true;
      mbar_arrive(&my_full[slot]);
    }
  };
  // Launched after another kernel with programmatic stream serialization, this block may be
  // resident before that kernel has finished: set up what reads nothing it may write, let the
  // next launch in as early, and wait for the one before to finish (and its writes to show)
  // before the first read of global memory. Launched plainly, both are no-ops.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  if (tid == 0) {
    for (int j = 0; j < kStages; ++j) mbar_init(&my_full[j], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    for (const CUtensorMap* m : {&tmap_in, &tmap_out})
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(m)) : "memory");
  }
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  // Every global read of the set-up is issued before any is waited for: the biases now, the
  // weights below. Loaded then stored one at a time, the biases waited for the memory once a
  // layer at 16 and 32 wide, behind the first tiles' loads of every SM: Nsight Compute put about
  // a quarter of the 16-wide kernel's warp samples in its set-up.
  constexpr int kBiasLoads = (FusedMlpSm90::kMaxLayers * kCols + G::kThreads - 1) / G::kThreads;
  // Layer i / kCols, column i % kCols, for i = threadIdx.x + k kThreads.
  uint16_t bias_bits[kBiasLoads];
#pragma unroll
  for (int k = 0; k < kBiasLoads; ++k) {
    const int i = threadIdx.x + k * G::kThreads, l = i / kCols, n = i % kCols;
    const uint16_t* b = i < p.layers * kCols ? static_cast<const uint16_t*>(p.biases[l]) : nullptr;
    bias_bits[k] = b && (G::kPacked || n < W) ? b[n % W] : uint16_t{0};
  }

  using E = FusedEpilogue<T, A, W, kWg, kStg>;  // how the biases and activation are applied
  constexpr bool kBiasMma = E::kBiasMma, kHalfBias = E::kHalfBias, kF16Acc = E::kF16Acc;
  constexpr bool kFold = E::kFold, kFold32 = E::kFold32, kBiasVec = E::kBiasVec;
  constexpr bool kBiasInAcc = E::kBiasInAcc, kFoldMma = E::kFoldMma;
  constexpr bool kBiasPreload = E::kBiasPreload;
  using Acc = std::conditional_t<kF16Acc, uint32_t, float>;
  const auto bias_factor = [&](int l) { return E::bias_factor(l, p); };
  const auto weight_factor = [&](int l) { return E::weight_factor(l, p); };

  // Weights into shared memory once, each layer [kCols out][kCols in] in 64-column atoms, with
  // 16-byte chunk c of row n at chunk c ^ (n % 8) (128-byte swizzle); packed, the one W x W
  // block (kWeightRows). Biases repeated when packed (zeros without bias), and at 32 wide also in
  // the weight (kBiasChunk). Asynchronous copies (zero-filled past a padded width), all in flight
  // at once: a load-then-store loop waited for the L2 once per pass, several microseconds of a
  // kernel that moves the whole input in ~100.
  // 16-byte chunk c of row n of layer l's weight.
  const auto weight_chunk = [&](int l, int n, int c) {
    return weights + l * G::kLayerBytes + (c / 8) * (G::kWeightRows * 128) + swizzled(n, c % 8);
  };
  const auto stage_weights = [&] {
    constexpr int kRows = G::kWeightRows, kChunks = G::kWeightChunks;
    for (int i = threadIdx.x; i < p.layers * kRows * kChunks; i += G::kThreads) {
      const int l = i / (kRows * kChunks), n = (i / kChunks) % kRows, c = i % kChunks;
      const T* src = static_cast<const T*>(p.weights[l]);
      // the bias slice of a dense width's padding is written below
      if constexpr (kBiasMma && G::kDense)
        if (c == kBiasChunk<W> || c == kBiasChunk<W> + 1) continue;
      const bool data = G::kPacked || (n < W && c * 8 < W);  // else the padding: zeros
      cp_async_16(weight_chunk(l, n, c), data ? src + (n % W) * W + c * 8 % W : src, data ? 16 : 0);
    }
    cp_async_commit();
  };
  // Up to 64 columns a thread copies a few chunks, so the weights go ahead of the first tiles in
  // the memory's queues; at 128 it copies forty, and the first tiles go first.
  if constexpr (kCols == 64) stage_weights();
  if (tid == 0) {
    if constexpr (G::kDeferStore)
      feed(0);
    else
      for (uint32_t j = 0; j + 1 < kStages; ++j) feed(j);
  }
  if constexpr (kCols != 64) stage_weights();
#pragma unroll
  for (int k = 0; k < kBiasLoads; ++k) {
    const int i = threadIdx.x + k * G::kThreads, l = i / kCols, n = i % kCols;
    if (i >= p.layers * kCols) break;
    T bias;
    static_assert(sizeof(T) == sizeof(uint16_t));
    memcpy(&bias, &bias_bits[k], sizeof bias);
    float v = to_float(bias);
    if constexpr (kFold || kFold32 || kFoldMma || kBiasPreload) v *= bias_factor(l);
    if constexpr (kBiasMma) {  // bf16: the bias in the weight too, its slice after W's
      uint16_t bits;
      // with its factor (kFoldMma), rounded to 16 bits: fp16 in the hidden layers (kHalfHidden)
      if (E::kHalfHidden && l > 0)
        bits = __half_as_ushort(from_float<__half>(v));
      else
        bits = __bfloat16_as_ushort(from_float<__nv_bfloat16>(v));
      if constexpr (G::kBiasAtoms) {  // no bias array: the atoms hold them
        uint8_t* atom = biases + (l / 4) * 8192;
        *reinterpret_cast<uint4*>(atom + swizzled(n, 2 * (l % 4))) = make_uint4(bits, 0u, 0u, 0u);
        *reinterpret_cast<uint4*>(atom + swizzled(n, 2 * (l % 4) + 1)) = make_uint4(0u, 0u, 0u, 0u);
      } else if (n < W) {
        *reinterpret_cast<uint4*>(weight_chunk(l, n, kBiasChunk<W>)) = make_uint4(bits, 0u, 0u, 0u);
        *reinterpret_cast<uint4*>(weight_chunk(l, n, kBiasChunk<W> + 1)) =
            make_uint4(0u, 0u, 0u, 0u);
      }
      continue;  // the epilogue reads no bias array (bias_of)
    }
    if constexpr (kBiasPreload && G::kPreloadF32) {  // [l][chunk][cp / 2][b0 b1 b0 b1]
      static_assert(G::kSlices * 16 == kCols);       // no padding columns
      float* at =
          reinterpret_cast<float*>(biases) + l * G::kSlices * 32 + (n / 8) * 16 + (n % 8) / 2 * 4;
      at[n % 2] = at[n % 2 + 2] = to_float(from_float<T>(v));
      if constexpr (E::kHiddenF16Acc)  // and as fp16, for the hidden layers' sums
        if (n < W)
          reinterpret_cast<__half*>(biases + p.layers * G::kSlices * 128)[hidden_pair_half(l, n)] =
              __float2half_rn(v);
    } else if constexpr (kBiasPreload) {  // in the order the threads read them (preload_biases)
      // fp16 for the fp16 sums of the layers after the first (kHiddenF16Preload)
      const T t = from_float<T>(v);
      uint16_t bits;
      memcpy(&bits, &t, sizeof bits);
      if (E::kHiddenF16Preload && l > 0) bits = __half_as_ushort(__float2half_rn(v));
      reinterpret_cast<uint16_t*>(biases)[2 * preload_bias_word<kCols>(l, n) + n % 2] = bits;
    } else if constexpr (kBiasVec)  // in the order the threads read them (load_biases)
      reinterpret_cast<T*>(biases)[2 * half_bias_word<kCols>(l, n) + n % 2] = from_float<T>(v);
    else if constexpr (kHalfBias)
      reinterpret_cast<T*>(biases)[i] = from_float<T>(v);
    else if constexpr (G::kBiasBytes == 4)
      reinterpret_cast<float*>(biases)[i] = v;
    else
      reinterpret_cast<T*>(biases)[i] = from_float<T>(v);
  }
  cp_async_wait<0>();
  if constexpr (kFold || kFoldMma || kBiasPreload) {  // each thread scales the chunks it copied,
                                                      // each rounded once
    constexpr int kRows = G::kWeightRows, kChunks = G::kWeightChunks;
    for (int i = threadIdx.x; i < p.layers * kRows * kChunks; i += G::kThreads) {
      const int l = i / (kRows * kChunks), n = (i / kChunks) % kRows, c = i % kChunks;
      const float f = weight_factor(l);
      const bool to_half = E::kHalfHidden && l > 0;
      if (f == 1.f && !to_half) continue;
      if constexpr (kBiasMma && G::kDense)
        if (c * 8 >= W) continue;  // the padding, and the biases (scaled above)
      uint4* chunk = reinterpret_cast<uint4*>(weight_chunk(l, n, c));
      uint4 v = *chunk;
      for (uint32_t* word : {&v.x, &v.y, &v.z, &v.w}) {
        const float2 x = make_float2(to_float(reinterpret_cast<const T*>(word)[0]),
                                     to_float(reinterpret_cast<const T*>(word)[1]));
        *word = to_half ? pack2<__half>(x.x * f, x.y * f) : pack2<T>(x.x * f, x.y * f);
      }
      *chunk = v;
    }
  }
  fence_proxy_async();  // wgmma reads what these threads wrote
  __syncthreads();

  // Descriptors' low words of layer 0's weights and of the first stage (smem_desc_lo).
  const uint32_t weights_desc = smem_desc_lo(smem_u32(weights));
  // bias_mma's operand for layer l: its weight (the bias slice follows the weight's), or its
  // slice of the bias atoms (Geometry::kBiasAtoms).
  [[maybe_unused]] const uint32_t bias_atoms_desc = smem_desc_lo(smem_u32(biases));
  const auto bias_desc = [&](int l) {
    if constexpr (G::kBiasAtoms)
      return bias_atoms_desc + (l / 4) * (8192 / 16) + (l % 4) * 2;
    else
      return weights_desc + l * (G::kLayerBytes / 16);
  };
  const uint32_t stages_desc = smem_desc_lo(smem_u32(stages));
  const auto act = [](float v) { return epilogue_act<A>(v); };
  const int cp = 2 * (lane % 4);  // accumulator columns 8j + cp, 8j + cp + 1
  // bias_mma's A is 1 in column 0 of its k16 slice: this thread's low half of registers 0 and 1
  // where lane % 4 == 0.
  const bool bias_by_mma = kBiasMma && kBiases && (bias_mma_always(W) || p.biases[0] != nullptr);
  const auto ones = [&](bool half, uint32_t(&out)[4]) {
    const uint32_t bits = lane % 4 == 0 ? (half ? 0x3C00u : 0x3F80u) : 0u;
    out[0] = out[1] = bits, out[2] = out[3] = 0u;
  };
  uint32_t one[4];
  ones(std::is_same_v<T, __half>, one);
  using Hidden = typename E::Hidden;  // the hidden layers' A and weights
  uint32_t hidden_one[4];             // bias_mma's A for the hidden layers
  ones(std::is_same_v<Hidden, __half>, hidden_one);
  constexpr int kChunks = 2 * G::kSlices;  // accumulator chunks of 8 columns with data
  // Layer l's 16-bit bias pairs (kHalfBias) for this thread's columns, chunk by chunk.
  const auto read_half_biases = [&](int l, uint32_t(&out)[kChunks]) {
    if constexpr (kBiasVec) {  // this thread's pairs adjacent: 16-byte loads
      const uint8_t* mine = biases + 4 * half_bias_word<kCols>(l, cp);
#pragma unroll
      for (int j = 0; j < kChunks; j += 4) {
        if (j + 4 <= kChunks) {
          const uint4 v = *reinterpret_cast<const uint4*>(mine + 4 * j);
          out[j] = v.x, out[j + 1] = v.y, out[j + 2] = v.z, out[j + 3] = v.w;
        } else {
          const uint2 v = *reinterpret_cast<const uint2*>(mine + 4 * j);
          out[j] = v.x, out[j + 1] = v.y;
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < kChunks; ++j)
        out[j] = *reinterpret_cast<const uint32_t*>(biases + 2 * (l * kCols + 8 * j + cp));
    }
  };
  // Layer l's 16-bit bias pairs as preload_bias_word stores them, a 16-byte load per four
  // chunks: f(j, the pair of columns 8 j + cp).
  [[maybe_unused]] const auto each_bias_pair = [&](int l, auto&& f) {
    const uint4* mine = reinterpret_cast<const uint4*>(biases) + l * (kCols / 8) + lane % 4;
#pragma unroll
    for (int m = 0; m < kChunks / 4; ++m) {
      const uint4 v = mine[4 * m];
      const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) f(4 * m + i, w[i]);
    }
  };
  // kBiasPreload: layer l's biases into the fp32 accumulators, rows r and r + 8 of chunk j from
  // the pair of columns 8 j + cp: as fp32, a 16-byte load a chunk (Geometry::kPreloadF32), or as
  // 16-bit pairs (each_bias_pair) widened by integer instructions (a bf16's bits are the high
  // half of its fp32's).
  [[maybe_unused]] const auto preload_biases = [&](float* acc, int l) {
    if constexpr (kBiasPreload && G::kPreloadF32) {
      const float4* mine = reinterpret_cast<const float4*>(biases) + l * kChunks * 4 + lane % 4;
#pragma unroll
      for (int j = 0; j < kChunks; ++j) {
        const float4 v = mine[4 * j];
        acc[4 * j] = v.x, acc[4 * j + 1] = v.y, acc[4 * j + 2] = v.z, acc[4 * j + 3] = v.w;
      }
    } else if constexpr (kBiasPreload) {
      static_assert(!std::is_same_v<T, __half>);
      each_bias_pair(l, [&](int j, uint32_t w) {
        acc[4 * j] = acc[4 * j + 2] = __uint_as_float(w << 16);
        acc[4 * j + 1] = acc[4 * j + 3] = __uint_as_float(w & 0xFFFF0000u);
      });
    }
  };
  // kHiddenF16Preload: layer l's fp16 bias pairs as the fp16 sums' start (rows r and r + 8 of
  // chunk j alike).
  [[maybe_unused]] const auto preload_half_biases = [&](uint32_t* acc, int l) {
    each_bias_pair(l, [&](int j, uint32_t w) { acc[2 * j] = acc[2 * j + 1] = w; });
  };
  // kHiddenF16Acc at 16 wide: hidden layer l's two fp16 bias pairs for this thread are
  // hidden_pairs[4 l] (columns cp, cp + 1 and 8 + cp, 9 + cp).
  [[maybe_unused]] const uint2* hidden_pairs =
      reinterpret_cast<const uint2*>(biases + p.layers * G::kSlices * 128) + lane % 4;
  // kBiasInAcc: layer 0's biases, the same for every tile, kept in registers.
  uint32_t bias0[kBiasInAcc ? kChunks : 1];
  if constexpr (kBiasInAcc) read_half_biases(0, bias0);
  // kBiasInAcc: the accumulators of rows r and r + 8 of chunk j start from its bias pair.
  const auto preload = [](uint32_t* acc, const uint32_t(&b)[kChunks]) {
#pragma unroll
    for (int j = 0; j < kChunks; ++j) acc[2 * j] = acc[2 * j + 1] = b[j];
  };
  // Four 8 x 8 matrices a stmatrix: rows r and r + 8 of chunks j and j + 1, lanes 8i..8i+7
  // giving the addresses of matrix i's rows; dense rows as they are (W * 2 bytes apart),
  // otherwise 128-byte-swizzled 64-column atoms.
  const auto chunk_pair_at = [&](uint32_t staging_u32, int j) {
    const uint32_t srow = warp * 16 + ((lane >> 3) & 1) * 8 + (lane & 7);
    const int chunk = j + (lane >> 4);
    if constexpr (G::kDense)
      return staging_u32 + srow * W * 2 + chunk * 16;
    else
      return staging_u32 + (chunk / 8) * (64 * 128) + swizzled(srow, chunk % 8);
  };
  constexpr int kOutChunks = G::kDense ? W / 8 : G::kAcc / 4;  // 8-column chunks of a tile's output
  // Thread 0: the staged output of `tile` out by TMA.
  const auto store_tile = [&](uint8_t* staging, uint32_t tile) {
    const uint32_t staging_u32 = smem_u32(staging);
    if (tile == p.tail_tile) {
      tma_store(&tmap_tail_out, staging, 0, p.tail_row);
    } else if constexpr (G::kDense) {
      tma_store(&tmap_out, staging_u32, 0, static_cast<int>(tile * 64));
    } else {
#pragma unroll
      for (int a = 0; a < G::kAtoms; ++a)
        tma_store(&tmap_out, staging_u32 + a * 64 * 128, a * 64, static_cast<int>(tile * 64));
    }
    bulk_commit();
  };
  // kDeferStore: the last tile's output as the 16-bit pairs stmatrix takes (rows r and r + 8 of
  // chunk j at 2 j and 2 j + 1), held until the next tile's layer 0 has read the only stage;
  // then written there and stored, and the stage refilled while the later layers run. Fed only
  // after the store, every warpgroup waited for its next tile's load.
  // Measured: docs/fused_choices.md, "kDeferStore".
  uint32_t held[G::kDeferStore ? 2 * kOutChunks : 1];
  uint32_t held_tile = p.tiles;  // none
  const auto store_held = [&] {
    uint8_t* stage = stages;
    named_sync(1 + wg);  // every warp's layer 0 has read the stage
#pragma unroll
    for (int j = 0; j < kOutChunks; j += 2)
      stmatrix_x4(chunk_pair_at(smem_u32(stage), j), held[2 * j], held[2 * j + 1], held[2 * j + 2],
                  held[2 * j + 3]);
    fence_proxy_async();
    named_sync(1 + wg);
    if (tid == 0) store_tile(stage, held_tile);
  };
  for (uint32_t i = 0;; ++i) {
    const uint32_t slot = i % kStages;
    mbar_wait(&my_full[slot], (i / kStages) & 1);
    const uint32_t tile = my_tile_in[slot];
    if (tile >= p.tiles) break;

    float d[kF16Acc ? 1 : G::kAcc];                             // fp32 accumulators,
    uint32_t h[kF16Acc || E::kHiddenF16Acc ? G::kAcc / 2 : 1];  // or fp16 ones (packed pairs)
    uint8_t* x = stages + slot * kTileBytes;
    if constexpr (kBiasInAcc) preload(h, bias0);
    if constexpr (G::kDense && kF16Acc) {
      layer0_mma_dense<T, W, Acc, kBiasInAcc>(h, x, weights_desc, warp, lane);
    } else if constexpr (G::kDense) {
      if constexpr (kBiasPreload) preload_biases(d, 0);
      layer0_mma_dense<T, W, Acc, kBiasPreload>(d, x, weights_desc, warp, lane);
      if constexpr (kBiasMma)
        if (bias_by_mma) bias_mma<T, W, G::kBiasAtoms>(d, one, bias_desc(0));
    } else if constexpr (kF16Acc) {
      wgmma_fence();
      layer_mma_ss<T, W, Acc, kBiasInAcc>(h, stages_desc + slot * (kTileBytes / 16), weights_desc);
    } else {
      if constexpr (kBiasPreload) preload_biases(d, 0);
      wgmma_fence();
      layer_mma_ss<T, W, Acc, kBiasPreload>(d, stages_desc + slot * (kTileBytes / 16),
                                            weights_desc);
      if constexpr (kBiasMma)
        if (bias_by_mma) bias_mma<T, W, G::kBiasAtoms>(d, one, bias_desc(0));
    }
    // Up to 64 wide, each layer's biases are read while its wgmma runs, not after it: the
    // shared-memory latency left the bias add waiting on the critical path of every layer. At
    // 96 and 128 wide the registers that takes in fp32 cost more than it saves (21% slower at
    // 128); the 16-bit pairs (kHalfBias), half the registers, are read ahead at every width.
    constexpr bool kPrefetch = kCols == 64 && !kBiasMma;
    float2 bv[kPrefetch && !kHalfBias ? kChunks : 1];
    uint32_t hbv[kHalfBias ? kChunks : 1];  // 16-bit pairs
    int bias_layer = 0;
    [[maybe_unused]] uint2 hb{};  // kHiddenF16Acc at 16 wide: this hidden layer's fp16 pairs
    const auto load_biases = [&](int l) {
      bias_layer = l;
      if constexpr (kHalfBias) {
        read_half_biases(l, hbv);
      } else if constexpr (kPrefetch) {
#pragma unroll
        for (int j = 0; j < kChunks; ++j)
          bv[j] = bias_pair<T, W>(biases + l * kCols * G::kBiasBytes, 8 * j + cp);
      }
    };
    const auto bias_of = [&](int j) {
      if constexpr (kBiasMma || kHalfBias || kBiasPreload)
        return make_float2(0.f, 0.f);  // not read: see biased, bias_act2 and preload_biases
      else if constexpr (kPrefetch)
        return bv[j];
      else
        return bias_pair<T, W>(biases + bias_layer * kCols * G::kBiasBytes, 8 * j + cp);
    };
    // v plus its bias, unless a wgmma added it (no add of zero: the compiler may not drop one).
    const auto biased = [&](float v, float b) {
      if constexpr (kBiasMma)
        return v;
      else
        return v + b;
    };
    wgmma_commit();
    // The slot of tile i - 1 is free (its wgmma completed, and its staged output, if it held it,
    // was read): fill it with tile i + kStages - 1, while layer 0 runs. Fed before layer 0, the
    // other warps waited at its wgmma for thread 0's claim and wait for the store.
    // Measured: docs/fused_choices.md, "feed".
    if (!G::kDeferStore && tid == 0 && !ended) {
      if constexpr (G::kStageInSlot) bulk_wait_read_all();
      feed((i + kStages - 1) % kStages);
    }
    // kBiasInAcc: the next layer's biases, moved into the accumulators before its MMAs.
    if constexpr (kBiasInAcc) {
      if (p.layers > 1) load_biases(1);
    } else if constexpr (!kBiasMma && !kBiasPreload) {
      load_biases(0);
    }
    wgmma_wait<0>();
    bool fed = !G::kDeferStore;
    // kDeferStore: the stage refilled once the store has read it, while a later layer's MMAs
    // run (thread 0 waits for that read; the other warps do not).
    const auto feed_after_store = [&] {
      if (tid == 0 && !ended) {
        bulk_wait_read_all();
        feed(0);
      }
      fed = true;
    };
    if constexpr (G::kDeferStore) {
      if (held_tile < p.tiles)
        store_held();
      else
        named_sync(1 + wg);  // every warp has read my_tile_in[0] before thread 0 refills it
    }

    // Layer l's bias, activation and the next layer's MMAs; kFromHalf: from the fp16
    // accumulators (kHiddenF16Acc, the layers after the first); kIntoLast: the next layer is
    // the last (16 wide: into fp32).
    const auto step = [&]<bool kFromHalf, bool kIntoLast = false>(int l) {
      [[maybe_unused]] const float k = weight_factor(l);  // kFold32
      // Bias, activation, and the next layer's A fragments: k16 slice t is accumulator chunks
      // 2t (columns 16t..16t+7) and 2t + 1. These instructions compete with wgmma for issue
      // slots (the kernel is issue-bound once its loads are hidden): ReLU goes into the bias's
      // fma or the conversion, the others take one hardware tanh.
      uint32_t a[G::kSlices][4];
#pragma unroll
      for (int t = 0; t < G::kSlices; ++t) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int j = 2 * t + hh;  // rows r (a[t][2 hh]) and r + 8 (a[t][2 hh + 1]) of chunk j
          if constexpr (kFromHalf && E::kHiddenF16Acc) {  // the fp16 sums
            const auto act_pair = [&](int q) {
              uint32_t y = h[q];
              if constexpr (E::kHiddenF16FromZero)  // chunk q / 2's biases (else in the sums)
                asm("add.rn.f16x2 %0, %0, %1;" : "+r"(y) : "r"((q / 2) % 2 ? hb.y : hb.x));
              return E::poly_pair(q) ? act_poly_f16x2<A, E::kPolyLow>(y) : act_f16x2<A, true>(y);
            };
            a[t][2 * hh] = act_pair(2 * j);
            a[t][2 * hh + 1] = act_pair(2 * j + 1);
            continue;
          }
          if constexpr (kF16Acc) {
            // Pair q by the tanh or the polynomial (a constant once the loops are unrolled).
            const auto act_pair = [&](int q) {
              if constexpr (kBiasInAcc)
                return E::poly_pair(q) ? act2_f16<A, kFold, E::kPolyEvery != 0>(h[q])
                                       : act2_f16<A, kFold>(h[q]);
              else
                return E::poly_pair(q)
                           ? bias_act2<T, A, kFold, E::kPolyEvery != 0>(h[q], hbv[q / 2])
                           : bias_act2<T, A, kFold>(h[q], hbv[q / 2]);
            };
            a[t][2 * hh] = act_pair(2 * j);
            a[t][2 * hh + 1] = act_pair(2 * j + 1);
          } else if constexpr (kHalfBias) {
            a[t][2 * hh] = bias_act2<T, A, kFold>(pack2<T>(d[4 * j], d[4 * j + 1]), hbv[j]);
            a[t][2 * hh + 1] = bias_act2<T, A, kFold>(pack2<T>(d[4 * j + 2], d[4 * j + 3]), hbv[j]);
          } else {
            const float2 b = bias_of(j);
            if constexpr (kFoldMma || kBiasPreload) {  // the accumulator is the argument
              const auto pair32 = [&](int q, float y0, float y1) {
                if constexpr (E::kHalfHidden) {  // fp16's form on the pair rounded to fp16
                  const uint32_t y = pack2<__half>(y0, y1);
                  return E::poly_pair(q) ? act_poly_f16x2<A, E::kPolyLow>(y)
                                         : act_f16x2<A, true>(y);
                } else {
                  return pack2<T>(act_folded_f32<A>(y0), act_folded_f32<A>(y1));
                }
              };
              a[t][2 * hh] = pair32(2 * j, d[4 * j], d[4 * j + 1]);
              a[t][2 * hh + 1] = pair32(2 * j + 1, d[4 * j + 2], d[4 * j + 3]);
              continue;
            }
            if constexpr (kFold32) {
              a[t][2 * hh] = pack2<T>(act_folded_f32<A>(fmaf(d[4 * j], k, b.x)),
                                      act_folded_f32<A>(fmaf(d[4 * j + 1], k, b.y)));
              a[t][2 * hh + 1] = pack2<T>(act_folded_f32<A>(fmaf(d[4 * j + 2], k, b.x)),
                                          act_folded_f32<A>(fmaf(d[4 * j + 3], k, b.y)));
              continue;
            }
            a[t][2 * hh] = pack2_act<T, A>(biased(d[4 * j], b.x), biased(d[4 * j + 1], b.y), act);
            a[t][2 * hh + 1] =
                pack2_act<T, A>(biased(d[4 * j + 2], b.x), biased(d[4 * j + 3], b.y), act);
          }
        }
      }
      if constexpr (kBiasInAcc) preload(h, hbv);
      // 16 wide GELU: a hidden layer's fp16 sums start from zero (biases added after)
      constexpr bool kIntoHalf = E::kHiddenF16FromZero && !kIntoLast;
      if constexpr (E::kHiddenF16Preload)
        preload_half_biases(h, l + 1);
      else if constexpr (kBiasPreload && !kIntoHalf)
        preload_biases(d, l + 1);
      wgmma_fence();
      if constexpr (kF16Acc) {
        layer_mma_rs<T, W, Acc, kBiasInAcc>(h, a, weights_desc + (l + 1) * (G::kLayerBytes / 16));
      } else if constexpr (E::kHiddenF16Preload) {
        layer_mma_rs<__half, W, uint32_t, true>(h, a,
                                                weights_desc + (l + 1) * (G::kLayerBytes / 16));
      } else if constexpr (E::kHiddenF16FromZero) {
        if constexpr (kIntoHalf)
          layer_mma_rs<__half, W, uint32_t>(h, a, weights_desc + (l + 1) * (G::kLayerBytes / 16));
        else
          layer_mma_rs<__half, W, float, true>(d, a,
                                               weights_desc + (l + 1) * (G::kLayerBytes / 16));
      } else if constexpr (E::kHiddenF16Acc) {
        layer_mma_rs<__half, W, uint32_t>(h, a, weights_desc + (l + 1) * (G::kLayerBytes / 16));
        if (bias_by_mma)
          bias_mma<Hidden, W, G::kBiasAtoms, uint32_t>(h, hidden_one, bias_desc(l + 1));
      } else {
        layer_mma_rs<Hidden, W, Acc, kBiasPreload>(d, a,
                                                   weights_desc + (l + 1) * (G::kLayerBytes / 16));
      }
      if constexpr (kBiasMma && !E::kHiddenF16Acc)
        if (bias_by_mma) bias_mma<Hidden, W, G::kBiasAtoms>(d, hidden_one, bias_desc(l + 1));
      wgmma_commit();
      if (!fed) feed_after_store();
      if constexpr (kBiasInAcc) {
        if (l + 2 < p.layers) load_biases(l + 2);
      } else if constexpr (!kBiasMma && !kBiasPreload) {
        load_biases(l + 1);
      }
      if constexpr (kIntoHalf) hb = hidden_pairs[4 * (l + 1)];  // read while the MMAs run
      wgmma_wait<0>();
    };
    // The last layer's output, from d or (kFromHalf) from h, staged and stored (or held).
    const auto finish = [&]<bool kFromHalf>() {
      if (!fed) feed_after_store();  // a single layer

      // Last layer: bias, then out through the staging buffer once the previous store read it
      // (staged in the tile's own stage, it is free: layer 0 was its last reader), or into `held`.
      uint8_t* staging = G::kStageInSlot ? x : stages + kStages * kTileBytes;
      const uint32_t staging_u32 = smem_u32(staging);
      if constexpr (!G::kDeferStore) {
        if (!G::kStageInSlot && tid == 0) bulk_wait_read_all();
        named_sync(1 + wg);
      }
      // Biased, and activated too when this kernel is a segment of a longer MLP: one branch a
      // tile, not one a pair (the kernel is issue-bound).
      [[maybe_unused]] const float k_last = weight_factor(p.layers - 1);  // kFold32
      auto stage_out = [&]<bool kAct, bool kHalfOut>() {
        [[maybe_unused]] constexpr Activation kOutAct = kAct ? A : Activation::kNone;
        // The output: SiLU's last layer is halved when activated, GELU's is x itself (kFold).
        [[maybe_unused]] constexpr bool kOutFolded = kFold && kAct && A == Activation::kSilu;
        auto out = [&](int j, int i) -> uint32_t {  // row r (i = 0) or r + 8 (i = 2) of chunk j
          if constexpr (kBiasInAcc) {
            return act2_f16<kOutAct, kOutFolded>(h[2 * j + i / 2]);
          } else if constexpr (kF16Acc) {
            return bias_act2<T, kOutAct, kOutFolded>(h[2 * j + i / 2], hbv[j]);
          } else if constexpr (kHalfBias) {
            return bias_act2<T, kOutAct, kOutFolded>(pack2<T>(d[4 * j + i], d[4 * j + i + 1]),
                                                     hbv[j]);
          } else {
            const float2 b = bias_of(j);
            // The last layer's factor (in its weights with kFoldMma); SiLU's x / 2 when activated.
            if constexpr (kFold32 || kFoldMma || kBiasPreload) {
              constexpr bool kBiased = kFoldMma || kBiasPreload;
              float x0, x1;
              if constexpr (kHalfOut && E::kHiddenF16Acc) {  // widened from the fp16 sums
                const float2 v =
                    __half22float2(*reinterpret_cast<const __half2*>(&h[2 * j + i / 2]));
                x0 = v.x, x1 = v.y;
              } else {
                x0 = kBiased ? d[4 * j + i] : fmaf(d[4 * j + i], k_last, b.x);
                x1 = kBiased ? d[4 * j + i + 1] : fmaf(d[4 * j + i + 1], k_last, b.y);
              }
              if constexpr (kAct && A == Activation::kSilu)
                return pack2<T>(act_folded_f32<A>(x0), act_folded_f32<A>(x1));
              else if constexpr (kAct)
                return pack2_act<T, A>(x0, x1, act);
              else
                return pack2<T>(x0, x1);
            }
            const float x0 = biased(d[4 * j + i], b.x), x1 = biased(d[4 * j + i + 1], b.y);
            if constexpr (kAct)
              return pack2_act<T, A>(x0, x1, act);
            else
              return pack2<T>(x0, x1);
          }
        };
#pragma unroll
        for (int j = 0; j < kOutChunks; j += 2) {
          if constexpr (G::kDeferStore) {
            held[2 * j] = out(j, 0), held[2 * j + 1] = out(j, 2);
            held[2 * j + 2] = out(j + 1, 0), held[2 * j + 3] = out(j + 1, 2);
          } else {
            stmatrix_x4(chunk_pair_at(staging_u32, j), out(j, 0), out(j, 2), out(j + 1, 0),
                        out(j + 1, 2));
          }
        }
      };
      if (p.act_out)
        stage_out.template operator()<true, kFromHalf>();
      else
        stage_out.template operator()<false, kFromHalf>();
      if constexpr (G::kDeferStore) {
        held_tile = tile;
        return;
      }
      fence_proxy_async();
      named_sync(1 + wg);
      if (tid == 0) store_tile(staging, tile);
    };
    if constexpr (E::kHiddenF16Acc) {
      // d is read only by layer 0's epilogue or by a single layer's output, so from layer 1
      // on its registers are free for h.
      if (p.layers > 1) {
        if constexpr (E::kHiddenF16FromZero) {
          // the last layer in fp32, its step on its own (in the loop, ptxas kept the fp32
          // accumulators live through it, and spilled)
          if (p.layers == 2) {
            step.template operator()<false, true>(0);
          } else {
            step.template operator()<false>(0);
            for (int l = 1; l + 2 < p.layers; ++l) step.template operator()<true>(l);
            step.template operator()<true, true>(p.layers - 2);
          }
          finish.template operator()<false>();
        } else {
          step.template operator()<false>(0);
          for (int l = 1; l + 1 < p.layers; ++l) step.template operator()<true>(l);
          finish.template operator()<true>();
        }
      } else {
        finish.template operator()<false>();
      }
    } else {
      // The test at the top, as the loop always had it: written as a plain for loop, ptxas
      // allocated registers differently for other kernels (2 to 22 more or fewer).
      for (int l = 0;; ++l) {
        if (l + 1 == p.layers) break;
        step.template operator()<false>(l);
      }
      finish.template operator()<false>();
    }
  }
  // kDeferStore: the last tile's output (the stage is free: the end mark brought no data).
  if constexpr (G::kDeferStore)
    if (held_tile < p.tiles) store_held();
  if (tid == 0) bulk_wait_all();
#endif  // FS_SM90A
}

using KernelFn = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, Params);

// f.template operator()<T, A, W, kWg, kStg>() for the kernel built for this dtype, activation,
// width and shape (one of shapes_built's); nothing where none is built.
template <typename F>
void with_built_kernel(DType dtype, Activation act, int width, Shape shape, F&& f) {
  dispatch_width(width, [&]<int W>() {
    dispatch_activation(act, [&]<Activation A>() {
      const auto with_dtype = [&]<typename T>() {
        static constexpr Shapes kBuilt = shapes_built(W, kEpiCost<T, A>);
        [&]<size_t... I>(std::index_sequence<I...>) {
          (
              [&] {
                constexpr Shape k = kBuilt.at[I];
                if (k == shape) f.template operator()<T, A, W, k.warpgroups, k.stages>();
              }(),
              ...);
        }
        (std::make_index_sequence<size_t(kBuilt.n)>{});
      };
      if (dtype == DType::kBf16) with_dtype.template operator()<__nv_bfloat16>();
      if (dtype == DType::kFp16) with_dtype.template operator()<__half>();
    });
  });
}

// The kernel of this shape; without biases, the bias-less kernel where one is built.
KernelFn pick(DType dtype, Activation act, int width, Shape shape, bool biases) {
  KernelFn f = nullptr;
  with_built_kernel(
      dtype, act, width, shape, [&]<typename T, Activation A, int W, int kWg, int kStg>() {
        f = &fused_mlp_sm90_kernel<T, A, W, kWg, kStg>;
        if constexpr (bias_mma_always(W) && FusedEpilogue<T, A, W, kWg, kStg>::kBiasMma)
          if (!biases) f = &fused_mlp_sm90_kernel<T, A, W, kWg, kStg, false>;
      });
  if (!f) throw CudaError("fully-fused (sm_90a): fp16 or bf16 only");
  return f;
}

// What the run's plan says of a kernel's epilogue: one activated pair in poly_every takes the
// polynomial instead of the tanh (0: none; FusedEpilogue::kPolyEvery), and whether its hidden
// layers are fp16 (FusedEpilogue::kHalfHidden) and accumulate in fp16
// (FusedEpilogue::kHiddenF16Acc).
struct EpilogueFacts {
  int poly_every = 0;
  bool half_hidden = false, hidden_f16_acc = false;
  bool last_f32 = false;  // with hidden_f16_acc: the last layer accumulates in fp32 (16 wide)
};
EpilogueFacts epilogue_facts(DType dtype, Activation act, int width, Shape shape) {
  EpilogueFacts facts;
  with_built_kernel(
      dtype, act, width, shape, [&]<typename T, Activation A, int W, int kWg, int kStg>() {
        using E = FusedEpilogue<T, A, W, kWg, kStg>;
        facts = {E::kPolyEvery, E::kHalfHidden, E::kHiddenF16Acc, E::kHiddenF16FromZero};
      });
  return facts;
}

}  // namespace

struct FusedMlpSm90::State {
  std::vector<const void*> weights, biases;
  KernelFn kernel = nullptr;
  size_t smem = 0;
  unsigned blocks = 0, threads = 0;
  Shape shape{};  // warpgroups a block, stages a warpgroup
  int width = 64, cols = 64, pack = 1;
  bool dense = false;        // 48 or 96 wide: rows as they are
  uint64_t packed_rows = 0;  // full rows of the (packed) view
  uint32_t full_tiles = 0;   // 64-row tiles of the packed view
  int tail_row = 0;          // the first row past the packed view's (rows when none is left)
  bool tail = false;         // rows are left over: one more tile
  bool act_out = false;      // the activation on the last layer too
  std::map<const void*, std::pair<CUtensorMap, CUtensorMap>> in, out;  // packed view, tail rows
  uint32_t static_tiles = 0;  // tiles dealt in stride; the rest are taken from the counter
  uint32_t claims = 1;        // claims on the counter a launch makes
  DeviceBuffer counter;       // claims made so far, by every launch
};

bool FusedMlpSm90::applies(const MlpConfig& c, int device) {
  if (c.dtype != DType::kFp16 && c.dtype != DType::kBf16) return false;
  const int layers = static_cast<int>(c.widths.size()) - 1;
  if (layers < 1 || layers > kMaxLayers) return false;
  const int64_t w0 = c.widths.front();
  if (fused_sm90_max_layers(w0) == 0) return false;  // not a width it takes
  for (auto w : c.widths)
    if (w != w0) return false;
  if (!hopper_gemm_available(device)) return false;
  // Every layer's weights stay in shared memory: at 128 wide, up to 5 layers fit.
  int optin = 0;
  if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
      cudaSuccess)
    return false;
  // In the shapes of few tiles and of many (the pass's depends on the SMs the run finds).
  const EpiCost e = epi_cost(c.dtype, c.activation);
  const int width = static_cast<int>(w0);
  return std::max(smem_bytes(width, e, fused_shape(width, e, layers, 0), layers),
                  smem_bytes(width, e, fused_shape(width, e, layers, 1e9), layers)) <=
         static_cast<size_t>(optin);
}

FusedMlpSm90::FusedMlpSm90(const MlpConfig& c, std::vector<const void*> weights,
                           std::vector<const void*> biases, int device, bool activate_output)
    : config_(c), state_(std::make_unique<State>()) {
  State& s = *state_;
  s.act_out = activate_output;
  s.weights = std::move(weights);
  s.biases = std::move(biases);
  const int layers = static_cast<int>(s.weights.size());
  if (layers < 1 || layers > kMaxLayers) throw CudaError("fully-fused (sm_90a): 1 to 8 layers");
  s.width = static_cast<int>(c.widths.front());
  s.cols = s.width <= 64 ? 64 : 128;
  s.pack = s.width < 64 ? 64 / s.width : 1;
  s.dense = s.width == 48 || s.width == 96;
  int sms = 0;
  FS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  s.packed_rows = static_cast<uint64_t>(c.rows) / static_cast<uint64_t>(s.pack);
  s.tail_row = static_cast<int>(s.packed_rows * static_cast<uint64_t>(s.pack));
  s.tail = static_cast<uint64_t>(s.tail_row) < static_cast<uint64_t>(c.rows);
  s.full_tiles = static_cast<uint32_t>((s.packed_rows + 63) / 64);
  const uint64_t tiles = uint64_t{s.full_tiles} + (s.tail ? 1 : 0);
  const EpiCost e = epi_cost(c.dtype, c.activation);
  s.shape = fused_shape(s.width, e, layers, double(tiles) / double(sms));
  // As the kernel reads them: biases for every layer or none (Params::biases).
  const bool has_biases = !s.biases.empty() && s.biases[0] != nullptr;
  s.kernel = pick(c.dtype, c.activation, s.width, s.shape, has_biases);
  s.smem = smem_bytes(s.width, e, s.shape, layers);
  s.threads = 128 * static_cast<unsigned>(s.shape.warpgroups);
  // The attribute belongs to the kernel, which MLPs of other depths (the segments of a deeper
  // one, or other MLPs of this process) launch too: allow the device's maximum, never less than
  // one of them needs.
  int optin = 0;
  FS_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (s.smem > static_cast<size_t>(optin))
    throw CudaError("fully-fused (sm_90a): needs " + std::to_string(s.smem >> 10) +
                    " KiB of shared memory; this device allows " + std::to_string(optin >> 10));
  FS_CUDA(cudaFuncSetAttribute(s.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  const uint64_t warpgroups = s.threads / 128;
  // A block on every SM while there are as many tiles, though some of its warpgroups may get
  // none: tiles are dealt warpgroup-major (the kernel's first), so the SMs share them evenly. Fewer
  // blocks, all of their warpgroups busy, left SMs idle (six warpgroups a block at 16 wide, 128 K
  // rows: 86 of 132 SMs, 8.3 us against 7.3).
  s.blocks = static_cast<unsigned>(std::min<uint64_t>(static_cast<uint64_t>(sms), tiles));
  const uint64_t workers = uint64_t{s.blocks} * warpgroups;
  // Every tile claimed but the first feeds (kDynamicRounds).
  const uint64_t first_feeds = uint64_t(std::max(s.shape.stages - 1, 1)) * workers;
  s.static_tiles = static_cast<uint32_t>(claims_every_tile(s.width)
                                             ? std::min(tiles, first_feeds)
                                             : tiles - std::min(tiles, kDynamicRounds * workers));
  s.claims = static_cast<uint32_t>(tiles - s.static_tiles + workers);
  s.counter = DeviceBuffer(sizeof(unsigned));
  FS_CUDA(cudaMemset(s.counter.get(), 0, s.counter.bytes()));
}

FusedMlpSm90::~FusedMlpSm90() = default;

std::string FusedMlpSm90::describe() const {
  const State& s = *state_;
  const std::string packed = s.pack > 1 ? ", " + std::to_string(s.pack) + " rows of " +
                                              std::to_string(s.width) + " packed per 64-wide row"
                             : s.dense
                                 ? ", " + std::to_string(s.width) + "-wide rows as they are, n" +
                                       std::to_string(s.width) + " MMAs"
                                 : "";
  // fp16 kernels accumulate in fp16 (kF16Acc), bf16 ones in fp32.
  const char* acc = config_.dtype == DType::kFp16 ? "fp16" : "fp32";
  const bool activates = s.weights.size() > 1 || s.act_out;
  const EpilogueFacts facts = epilogue_facts(config_.dtype, config_.activation, s.width, s.shape);
  const int poly = activates ? facts.poly_every : 0;
  const bool hidden = s.weights.size() > 1;
  const std::string half_hidden =
      !facts.half_hidden || !hidden ? ""
      : facts.last_f32
          ? ", hidden activations and weights in fp16, fp16 accumulators in the hidden layers"
      : facts.hidden_f16_acc
          ? ", hidden activations and weights in fp16, fp16 accumulators after the first layer"
          : ", hidden activations and weights in fp16";
  const std::string act =
      poly ? ", 1 activated pair in " + std::to_string(poly) + " by polynomial, the rest by tanh"
           : "";
  return "fully fused MLP: wgmma + TMA (sm_90a)" + packed + ", " + acc + " accumulators" +
         half_hidden + act + ", " + std::to_string(s.shape.warpgroups) + " warpgroups of " +
         std::to_string(s.shape.stages) + (s.shape.stages == 1 ? " stage" : " stages") + " x " +
         std::to_string(s.blocks) + " blocks";
}

void FusedMlpSm90::run(const void* input, void* output, cudaStream_t stream) {
  State& s = *state_;
  const uint64_t rows = static_cast<uint64_t>(config_.rows);
  // Per buffer: the packed view (when it has a full row) and the tail's rows (when there are
  // any; otherwise a copy of the first, never used).
  auto maps = [&](const void* base) {
    std::pair<CUtensorMap, CUtensorMap> m{};
    if (s.dense)
      m.first = encode_tma_map_rows(base, rows, static_cast<uint64_t>(s.width), 64);
    else if (s.packed_rows > 0)
      m.first = encode_tma_map_128b(base, s.packed_rows, static_cast<uint64_t>(s.cols), 64);
    if (s.tail)
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
  p.tiles = s.full_tiles + (s.tail ? 1 : 0);
  p.tail_tile = s.tail ? s.full_tiles : kNoTail;
  p.tail_row = s.tail_row;
  p.act_out = s.act_out ? 1 : 0;
  p.static_tiles = s.static_tiles;
  p.claims = s.claims;
  p.counter = s.counter.as<unsigned>();
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(s.blocks);
  cfg.blockDim = dim3(s.threads);
  cfg.dynamicSmemBytes = s.smem;
  cfg.stream = stream;
  // Programmatic dependent launch: the blocks of this launch may become resident on the SMs the
  // kernel before it has left, and start the moment it finishes, instead of after the launch
  // that follows its end (1.0-1.4 us a pass at every width on the H100, with no event between
  // passes; nothing in a CUDA graph, whose launches are already close).
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  FS_CUDA(cudaLaunchKernelEx(&cfg, s.kernel, in->second.first, out->second.first, in->second.second,
                             out->second.second, p));
  FS_CUDA_LAUNCHED("fused_mlp_sm90");
}

}  // namespace fusionscope::kernels::detail
