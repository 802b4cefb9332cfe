// The device buffers a configuration needs in one variant. The runner allocates exactly this
// list, and device_bytes_needed() sums it, so the up-front memory check cannot drift from what
// is allocated. CPU-only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels::detail {

struct BufferSpec {
  std::string name;
  uint64_t bytes = 0;
};

// cuBLASLt workspace, as PyTorch gives it on Hopper.
inline constexpr uint64_t kCublasWorkspaceBytes = 32ull << 20;

// Every width of a fully fused MLP is a multiple of this, within [kFusedMinWidth, kFusedMaxWidth].
inline constexpr int64_t kFusedWidthStep = 16;
inline constexpr int64_t kFusedMinWidth = 16;
inline constexpr int64_t kFusedMaxWidth = 128;
inline constexpr int kFusedMaxLayers = 32;  // layer widths travel in the kernel's parameters
// Warps per block: the runner picks, between these, the count that fits most warps on an SM.
inline constexpr int kFusedMaxWarps = 16;
inline constexpr int kFusedMinWarps = 4;
inline constexpr int kFusedRowPad = 8;  // halves of padding per shared-memory row (banks)
inline constexpr uint64_t kFusedSmemLimit = 227ull << 10;  // Hopper's per-block maximum

// Rows each warp of the fully fused kernel carries through the layers at once: 32 (two m16
// tiles sharing every weight fragment) up to 64 wide, 16 beyond (register budget).
constexpr int fused_rows_per_warp(int64_t widest) {
  return widest <= 64 ? 32 : 16;
}

// Shared memory the fully fused kernel needs with `warps` warps per block: every layer's weights
// (padded rows) and biases, and two row tiles per warp (input prefetch, output staging).
uint64_t fused_smem_bytes(const MlpConfig& c, int warps);

// Layers of width w that the Hopper fully fused kernel (fully_fused_mlp_sm90.cu, which checks
// this against its shared-memory layout) holds in one launch, 0 for a width it does not take.
// Segments of such a width are cut at this many layers even where the mma.sync kernel would
// hold more: on Hopper two wgmma kernels beat one mma.sync kernel (96 wide, 8 layers: ~3x).
constexpr int fused_sm90_max_layers(int64_t w) {
  if (w == 96 || w == 128) return 5;
  return w == 16 || w == 32 || w == 48 || w == 64 ? 8 : 0;
}

// The layers [first, last) of one fully fused kernel. An MLP whose weights do not all fit in one
// block's shared memory runs as several kernels, each taking as many layers as fit, with the
// activations between them in device memory. Empty when a single layer does not fit.
struct FusedSegment {
  size_t first = 0, last = 0;
};
std::vector<FusedSegment> fused_segments(const MlpConfig& c);
// The configuration of the layers [first, last) of c (its widths first..last).
MlpConfig fused_segment_config(const MlpConfig& c, const FusedSegment& s);

// Throws ConfigError on overflow.
uint64_t checked_mul(uint64_t a, uint64_t b);
uint64_t checked_add(uint64_t a, uint64_t b);

std::vector<BufferSpec> buffer_specs(const MlpConfig& c, Variant v, int input_sets);

// Width of each GEMM: {in, out} per layer in launch order of the reference (gated: gate, up, down).
struct LayerShape {
  int64_t in = 0;
  int64_t out = 0;
};
std::vector<LayerShape> layer_shapes(const MlpConfig& c);

}  // namespace fusionscope::kernels::detail
