// Named workloads: the reference post's two, their larger relatives from the team's reference
// table, and a narrow MLP that a fully fused kernel can hold on chip.
#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels {
namespace {

MlpConfig make(std::string name, MlpKind kind, int64_t rows, std::vector<int64_t> widths, bool bias,
               DType dtype, Activation act) {
  MlpConfig c;
  c.name = std::move(name);
  c.kind = kind;
  c.rows = rows;
  c.widths = std::move(widths);
  c.bias = bias;
  c.dtype = dtype;
  c.activation = act;
  return c;
}

std::vector<Preset> build() {
  using A = Activation;
  using D = DType;
  using K = MlpKind;
  return {
      {"linear-post", "nn.Linear(32, 64) with bias on 1024 rows, bf16 (the post's first example)",
       make("linear-post", K::kLinear, 1024, {32, 64}, true, D::kBf16, A::kNone)},
      {"geglu-post",
       "GeGLU MLP down(gelu_tanh(gate(x)) * up(x)), 8192 tokens, 768 -> 3072 -> 768, bf16 (the "
       "post's MLP)",
       make("geglu-post", K::kGated, 8192, {768, 3072}, false, D::kBf16, A::kGeluTanh)},
      {"swiglu-post", "SwiGLU variant of geglu-post: down(silu(gate(x)) * up(x)), bf16",
       make("swiglu-post", K::kGated, 8192, {768, 3072}, false, D::kBf16, A::kSilu)},
      {"geglu-large", "GeGLU MLP at Llama-3-8B widths: 8192 tokens, 4096 -> 14336 -> 4096, bf16",
       make("geglu-large", K::kGated, 8192, {4096, 14336}, false, D::kBf16, A::kGeluTanh)},
      {"mlp-wide", "MLP 1024 -> 4096 -> 4096 -> 1024 with bias and relu, 8192 rows, bf16",
       make("mlp-wide", K::kMlp, 8192, {1024, 4096, 4096, 1024}, true, D::kBf16, A::kRelu)},
      {"mlp-narrow",
       "5 layers of 64 wide with bias and relu between them, 1,048,576 rows, fp16 (a fully fused "
       "MLP's home ground)",
       make("mlp-narrow", K::kMlp, 1 << 20, {64, 64, 64, 64, 64, 64}, true, D::kFp16, A::kRelu)},
  };
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> kPresets = build();
  return kPresets;
}

std::optional<MlpConfig> find_preset(std::string_view name) {
  for (const auto& p : presets())
    if (p.name == name) return p.config;
  return std::nullopt;
}

}  // namespace fusionscope::kernels
