#include "buffers.h"

#include <algorithm>

namespace fusionscope::kernels::detail {

uint64_t checked_mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw ConfigError("configuration too large: buffer sizes overflow 64-bit byte counts");
  return r;
}

uint64_t checked_add(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw ConfigError("configuration too large: buffer sizes overflow 64-bit byte counts");
  return r;
}

std::vector<LayerShape> layer_shapes(const MlpConfig& c) {
  std::vector<LayerShape> out;
  if (c.widths.size() < 2) return out;
  if (c.kind == MlpKind::kGated) {
    const int64_t d = c.widths[0], h = c.widths[1];
    return {{d, h}, {d, h}, {h, d}};
  }
  for (size_t i = 0; i + 1 < c.widths.size(); ++i) out.push_back({c.widths[i], c.widths[i + 1]});
  return out;
}

uint64_t fused_smem_bytes(const MlpConfig& c, int warps) {
  uint64_t bytes = 0;
  int64_t widest = 0;
  for (const auto& l : layer_shapes(c)) {
    bytes += static_cast<uint64_t>(l.out) * static_cast<uint64_t>(l.in + kFusedRowPad) * 2;
    bytes += static_cast<uint64_t>(l.out) * 4;  // bias, kept as fp32
    widest = std::max({widest, l.in, l.out});
  }
  bytes += static_cast<uint64_t>(warps) * 2 * static_cast<uint64_t>(fused_rows_per_warp(widest)) *
           static_cast<uint64_t>(widest + kFusedRowPad) * 2;
  return bytes;
}

MlpConfig fused_segment_config(const MlpConfig& c, const FusedSegment& s) {
  MlpConfig sub = c;
  sub.widths.assign(c.widths.begin() + static_cast<std::ptrdiff_t>(s.first),
                    c.widths.begin() + static_cast<std::ptrdiff_t>(s.last) + 1);
  return sub;
}

std::vector<FusedSegment> fused_segments(const MlpConfig& c) {
  std::vector<FusedSegment> out;
  const size_t layers = layer_shapes(c).size();
  // A run of one width the Hopper kernel takes stops at its layer count.
  const auto hopper_cap = [&](size_t first, size_t last) {
    const int64_t w = c.widths[first];
    for (size_t i = first; i <= last; ++i)
      if (c.widths[i] != w) return false;
    const int cap = fused_sm90_max_layers(w);
    return cap > 0 && last - first > static_cast<size_t>(cap);
  };
  for (size_t first = 0; first < layers;) {
    size_t last = first;
    while (last < layers &&
           fused_smem_bytes(fused_segment_config(c, {first, last + 1}), kFusedMinWarps) <=
               kFusedSmemLimit &&
           !hopper_cap(first, last + 1))
      ++last;
    if (last == first) return {};
    out.push_back({first, last});
    first = last;
  }
  return out;
}

std::vector<BufferSpec> buffer_specs(const MlpConfig& c, Variant v, int input_sets) {
  std::vector<BufferSpec> out;
  if (c.widths.size() < 2 || c.rows <= 0) return out;
  const uint64_t e = dtype_bytes(c.dtype);
  const uint64_t rows = static_cast<uint64_t>(c.rows);
  const uint64_t sets = static_cast<uint64_t>(std::max(1, input_sets));
  auto add = [&](std::string name, uint64_t elements, uint64_t elem_bytes) {
    if (elements > 0) out.push_back({std::move(name), checked_mul(elements, elem_bytes)});
  };
  auto mat = [&](uint64_t r, int64_t cols) { return checked_mul(r, static_cast<uint64_t>(cols)); };

  const auto layers = layer_shapes(c);
  const int64_t in = layers.front().in;
  const int64_t out_w = layers.back().out;
  add("input", checked_mul(sets, mat(rows, in)), e);
  add("output", checked_mul(sets, mat(rows, out_w)), e);
  for (size_t i = 0; i < layers.size(); ++i) {
    add("weight" + std::to_string(i), mat(static_cast<uint64_t>(layers[i].out), layers[i].in), e);
    if (c.bias) add("bias" + std::to_string(i), static_cast<uint64_t>(layers[i].out), e);
  }

  int64_t hidden = 0;  // widest intermediate activation
  if (c.kind == MlpKind::kGated) {
    hidden = c.widths[1];
  } else {
    for (size_t i = 1; i + 1 < c.widths.size(); ++i) hidden = std::max(hidden, c.widths[i]);
  }
  const uint64_t h_elems = mat(rows, hidden);

  int scratch = 0;  // activation-sized intermediates in the dtype
  if (c.kind == MlpKind::kGated) {
    switch (v) {
      case Variant::kEager:
      case Variant::kTorchEager:
        scratch = 4;  // gate, act(gate), up, product
        break;
      case Variant::kEpilogue:
      case Variant::kPointwiseFused:
      case Variant::kTorchCompile:
        scratch = 3;  // gate (or act(gate)), up, product
        break;
      case Variant::kGatedGemm:
        scratch = 1;  // product only
        add("weight_gate_up", mat(2 * static_cast<uint64_t>(hidden), c.widths[0]), e);
        break;
      case Variant::kFullyFused:
        break;
    }
  } else {
    switch (v) {
      case Variant::kEager:
      case Variant::kPointwiseFused:
      case Variant::kTorchEager:
      case Variant::kTorchCompile:
        scratch = 3;  // GEMM output, then two ping-pong activations
        break;
      case Variant::kEpilogue:
        scratch = 2;
        break;
      case Variant::kFullyFused: {
        // Activations between kernels when the layers take several (ping-pong beyond two).
        const size_t kernels = fused_segments(c).size();
        scratch = kernels > 1 ? static_cast<int>(std::min<size_t>(2, kernels - 1)) : 0;
        break;
      }
      default:
        break;
    }
  }
  for (int i = 0; i < scratch; ++i) add("scratch" + std::to_string(i), h_elems, e);
  if (v != Variant::kFullyFused) add("cublaslt_workspace", kCublasWorkspaceBytes, 1);

  // The fp32 reference of the correctness check and its error partial sums.
  add("reference_output", mat(rows, out_w), 4);
  add("reference_a", h_elems, 4);
  add("reference_b", h_elems, 4);
  add("check_partials", 3 * 4096, 8);
  return out;
}

}  // namespace fusionscope::kernels::detail
