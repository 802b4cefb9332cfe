#include "fusionscope/kernels/config.h"

#include <algorithm>
#include <array>
#include <limits>
#include <sstream>

#include "buffers.h"

namespace fusionscope::kernels {
namespace {

constexpr std::array<std::pair<MlpKind, std::string_view>, 3> kKinds{{
    {MlpKind::kLinear, "linear"},
    {MlpKind::kMlp, "mlp"},
    {MlpKind::kGated, "gated"},
}};
constexpr std::array<std::pair<DType, std::string_view>, 3> kDTypes{{
    {DType::kFp32, "fp32"},
    {DType::kFp16, "fp16"},
    {DType::kBf16, "bf16"},
}};
constexpr std::array<std::pair<Activation, std::string_view>, 4> kActivations{{
    {Activation::kNone, "none"},
    {Activation::kRelu, "relu"},
    {Activation::kGeluTanh, "gelu-tanh"},
    {Activation::kSilu, "silu"},
}};
constexpr std::array<std::pair<Variant, std::string_view>, 7> kVariants{{
    {Variant::kEager, "eager"},
    {Variant::kEpilogue, "epilogue"},
    {Variant::kPointwiseFused, "pointwise-fused"},
    {Variant::kGatedGemm, "gated-gemm"},
    {Variant::kFullyFused, "fully-fused"},
    {Variant::kTorchEager, "torch-eager"},
    {Variant::kTorchCompile, "torch-compile"},
}};

template <typename E, size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [value, name] : table)
    if (value == e) return name;
  return "unknown";
}

template <typename E, size_t N>
E parse_name(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s,
             std::string_view what) {
  for (const auto& [value, name] : table)
    if (name == s) return value;
  std::string msg = "unknown " + std::string(what) + " '" + std::string(s) + "' (expected one of:";
  for (const auto& entry : table) msg += " " + std::string(entry.second);
  throw ConfigError(msg + ")");
}

// Largest rows/widths the kernels index with 32-bit GEMM dimensions (cuBLAS takes int).
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxWidth = int64_t{1} << 20;
// Every row stays 16-byte aligned for vector loads, TMA and cuBLASLt's fast paths.
constexpr int64_t kWidthMultiple = 8;

std::string bytes_text(uint64_t b) {
  std::ostringstream out;
  out.precision(3);
  if (b >= (1ull << 30)) {
    out << static_cast<double>(b) / static_cast<double>(1ull << 30) << " GiB";
  } else {
    out << static_cast<double>(b) / static_cast<double>(1ull << 20) << " MiB";
  }
  return out.str();
}

bool fail(std::string* why, std::string msg) {
  if (why) *why = std::move(msg);
  return false;
}

}  // namespace

std::string_view to_string(MlpKind k) {
  return name_of(kKinds, k);
}
std::string_view to_string(DType d) {
  return name_of(kDTypes, d);
}
std::string_view to_string(Activation a) {
  return name_of(kActivations, a);
}
std::string_view to_string(Variant v) {
  return name_of(kVariants, v);
}
MlpKind parse_kind(std::string_view s) {
  return parse_name(kKinds, s, "MLP kind");
}
DType parse_dtype(std::string_view s) {
  return parse_name(kDTypes, s, "dtype");
}
Activation parse_activation(std::string_view s) {
  return parse_name(kActivations, s, "activation");
}
Variant parse_variant(std::string_view s) {
  return parse_name(kVariants, s, "variant");
}

std::vector<Variant> all_variants() {
  std::vector<Variant> out;
  for (const auto& entry : kVariants)
    if (!is_torch_variant(entry.first)) out.push_back(entry.first);
  return out;
}

std::vector<Variant> torch_variants() {
  return {Variant::kTorchEager, Variant::kTorchCompile};
}

bool is_torch_variant(Variant v) {
  return v == Variant::kTorchEager || v == Variant::kTorchCompile;
}

size_t dtype_bytes(DType d) {
  return d == DType::kFp32 ? 4 : 2;
}

double tolerance(DType d) {
  switch (d) {
    case DType::kFp32:
      return 1e-4;
    case DType::kFp16:
      return 5e-3;
    case DType::kBf16:
      return 2e-2;
  }
  return 0;
}

int layer_count(const MlpConfig& c) {
  switch (c.kind) {
    case MlpKind::kLinear:
      return 1;
    case MlpKind::kMlp:
      return c.widths.size() < 2 ? 0 : static_cast<int>(c.widths.size() - 1);
    case MlpKind::kGated:
      return 3;
  }
  return 0;
}

std::string describe(const MlpConfig& c) {
  std::ostringstream out;
  out << to_string(c.kind) << " " << c.rows << " x ";
  for (size_t i = 0; i < c.widths.size(); ++i) out << (i ? " -> " : "") << c.widths[i];
  if (c.kind == MlpKind::kGated && !c.widths.empty()) out << " -> " << c.widths.front();
  if (c.activation != Activation::kNone) out << ", " << to_string(c.activation);
  if (c.bias) out << ", bias";
  out << ", " << to_string(c.dtype);
  return out.str();
}

void validate_shape(const MlpConfig& c) {
  const std::string who = c.name.empty() ? std::string("configuration") : "'" + c.name + "'";
  if (c.rows <= 0)
    throw ConfigError(who + ": rows must be positive (got " + std::to_string(c.rows) + ")");
  if (c.rows > kMaxDim)
    throw ConfigError(who + ": rows " + std::to_string(c.rows) + " exceed the GEMM limit of " +
                      std::to_string(kMaxDim));
  switch (c.kind) {
    case MlpKind::kLinear:
      if (c.widths.size() != 2)
        throw ConfigError(who + ": a linear configuration has widths {in, out} (got " +
                          std::to_string(c.widths.size()) + " widths)");
      if (c.activation != Activation::kNone)
        throw ConfigError(who + ": a linear configuration has no activation; use kind mlp");
      break;
    case MlpKind::kMlp:
      if (c.widths.size() < 2)
        throw ConfigError(who + ": an mlp has widths {in, hidden..., out}: at least 2 (got " +
                          std::to_string(c.widths.size()) + ")");
      break;
    case MlpKind::kGated:
      if (c.widths.size() != 2)
        throw ConfigError(who + ": a gated MLP has widths {dim, hidden} (got " +
                          std::to_string(c.widths.size()) + " widths)");
      if (c.activation == Activation::kNone)
        throw ConfigError(who +
                          ": a gated MLP needs an activation for its gate (gelu-tanh for GeGLU, "
                          "silu for SwiGLU, relu for ReGLU)");
      if (c.bias)
        throw ConfigError(who +
                          ": gated MLPs here are bias-free (as in Llama and Gemma); set "
                          "bias to false");
      break;
  }
  for (size_t i = 0; i < c.widths.size(); ++i) {
    const int64_t w = c.widths[i];
    const std::string where = who + ": width " + std::to_string(i) + " (" + std::to_string(w) + ")";
    if (w <= 0) throw ConfigError(where + " must be positive");
    if (w > kMaxWidth)
      throw ConfigError(where + " exceeds the limit of " + std::to_string(kMaxWidth));
    if (w % kWidthMultiple != 0)
      throw ConfigError(where + " must be a multiple of " + std::to_string(kWidthMultiple) +
                        " (keeps every row 16-byte aligned)");
  }
  // Sizes that overflow 64-bit byte counts are refused here rather than wrapped.
  (void)detail::buffer_specs(c, Variant::kEager, 1);
}

bool supports(const MlpConfig& c, Variant v, std::string* why) {
  try {
    validate_shape(c);
  } catch (const ConfigError& e) {
    return fail(why, e.what());
  }
  const std::string var(to_string(v));
  switch (v) {
    case Variant::kEager:
    case Variant::kTorchEager:
      return true;
    case Variant::kTorchCompile:
      if (c.kind == MlpKind::kLinear)
        return fail(why,
                    "torch-compile: a linear layer has no pointwise op for Inductor to fuse "
                    "(its bias is already in the GEMM epilogue); use torch-eager");
      return true;
    case Variant::kEpilogue:
      if (c.activation == Activation::kSilu)
        return fail(why,
                    "epilogue: cuBLASLt has no SiLU epilogue (it has relu and gelu-tanh); "
                    "use pointwise-fused or gated-gemm");
      return true;
    case Variant::kPointwiseFused:
      if (c.kind == MlpKind::kLinear)
        return fail(why,
                    "pointwise-fused: a linear layer has no pointwise op to fuse (its bias "
                    "is already in the GEMM epilogue); use eager or epilogue");
      return true;
    case Variant::kGatedGemm:
      if (c.kind != MlpKind::kGated)
        return fail(why, "gated-gemm: applies to gated MLPs only (kind " +
                             std::string(to_string(c.kind)) + ")");
      if (c.dtype == DType::kFp32)
        return fail(why, "gated-gemm: runs on tensor cores in fp16 or bf16, not fp32");
      return true;
    case Variant::kFullyFused: {
      if (c.kind == MlpKind::kGated)
        return fail(why, "fully-fused: applies to linear and mlp configurations, not gated");
      if (c.dtype == DType::kFp32)
        return fail(why, "fully-fused: runs on tensor cores in fp16 or bf16, not fp32");
      if (layer_count(c) > detail::kFusedMaxLayers)
        return fail(why, "fully-fused: at most " + std::to_string(detail::kFusedMaxLayers) +
                             " layers (got " + std::to_string(layer_count(c)) + ")");
      for (size_t i = 0; i < c.widths.size(); ++i) {
        const int64_t w = c.widths[i];
        if (w < detail::kFusedMinWidth || w > detail::kFusedMaxWidth ||
            w % detail::kFusedWidthStep != 0)
          return fail(why,
                      "fully-fused: holds activations on chip only for widths that are "
                      "multiples of " +
                          std::to_string(detail::kFusedWidthStep) + " from " +
                          std::to_string(detail::kFusedMinWidth) + " to " +
                          std::to_string(detail::kFusedMaxWidth) + "; width " + std::to_string(i) +
                          " is " + std::to_string(w));
      }
      // Layers whose weights do not all fit in one block run as several kernels; a layer that
      // does not fit alone cannot run at all.
      if (detail::fused_segments(c).empty()) {
        uint64_t smem = 0;
        for (const auto& l : detail::layer_shapes(c)) {
          MlpConfig one;
          one.widths = {l.in, l.out};
          smem = std::max(smem, detail::fused_smem_bytes(one, detail::kFusedMinWarps));
        }
        return fail(why, "fully-fused: one layer's weights and activation tiles need " +
                             std::to_string(smem >> 10) + " KiB of shared memory, more than the " +
                             std::to_string(detail::kFusedSmemLimit >> 10) +
                             " KiB a block can have; use narrower layers");
      }
      return true;
    }
  }
  return fail(why, var + ": unknown variant");
}

uint64_t device_bytes_needed(const MlpConfig& c, Variant v) {
  return device_bytes_needed(c, v, 1);
}

uint64_t device_bytes_needed(const MlpConfig& c, Variant v, int input_sets) {
  uint64_t total = 0;
  for (const auto& b : detail::buffer_specs(c, v, input_sets))
    total = detail::checked_add(total, b.bytes);
  return total;
}

void validate(const MlpConfig& c, Variant v, std::optional<uint64_t> free_device_bytes) {
  validate_shape(c);
  std::string why;
  if (!supports(c, v, &why)) throw ConfigError(why);
  if (free_device_bytes) {
    const uint64_t need = device_bytes_needed(c, v);
    if (need > *free_device_bytes)
      throw ConfigError(std::string(to_string(v)) + " on " + describe(c) + " needs " +
                        bytes_text(need) +
                        " of device memory (weights, activations, workspace and the fp32 "
                        "reference for the check) but only " +
                        bytes_text(*free_device_bytes) + " are free");
  }
}

}  // namespace fusionscope::kernels
