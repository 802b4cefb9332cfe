// Plans: which launches each variant makes and the work each does, without a GPU.
#include <gtest/gtest.h>

#include <set>

#include "buffers.h"
#include "fusionscope/kernels/plan.h"

namespace fk = fusionscope::kernels;

namespace {

fk::MlpConfig preset(const char* name) {
  return fk::find_preset(name).value();
}

std::vector<std::string> ops(const fk::Plan& p) {
  std::vector<std::string> out;
  for (const auto& l : p.launches) out.push_back(l.op);
  return out;
}

TEST(Plan, GegluEagerIsFiveKernelsInPyTorchOrder) {
  const auto p = fk::make_plan(preset("geglu-post"), fk::Variant::kEager);
  EXPECT_EQ(ops(p), (std::vector<std::string>{"gate", "gelu-tanh", "up", "mul", "down"}));
}

TEST(Plan, GegluFusedVariantsLaunchFewerKernels) {
  const auto c = preset("geglu-post");
  EXPECT_EQ(ops(fk::make_plan(c, fk::Variant::kEpilogue)),
            (std::vector<std::string>{"gate+gelu-tanh", "up", "mul", "down"}));
  EXPECT_EQ(ops(fk::make_plan(c, fk::Variant::kPointwiseFused)),
            (std::vector<std::string>{"gate", "up", "gelu-tanh*mul", "down"}));
  EXPECT_EQ(ops(fk::make_plan(c, fk::Variant::kGatedGemm)),
            (std::vector<std::string>{"gate_up+gelu-tanh*mul", "down"}));
}

TEST(Plan, GegluFlopsAndBytes) {
  const auto c = preset("geglu-post");
  const double m = 8192, d = 768, h = 3072, e = 2;
  const double gemm_flops = 3 * 2 * m * d * h;
  for (auto v : {fk::Variant::kEager, fk::Variant::kEpilogue, fk::Variant::kPointwiseFused,
                 fk::Variant::kGatedGemm}) {
    const auto p = fk::make_plan(c, v);
    // The GEMMs dominate; pointwise work adds at most ~1%.
    EXPECT_GE(p.flops(), gemm_flops) << fk::to_string(v);
    EXPECT_LT(p.flops(), gemm_flops * 1.01) << fk::to_string(v);
  }
  const auto eager = fk::make_plan(c, fk::Variant::kEager);
  const double gate_bytes = (m * d + h * d + m * h) * e;
  EXPECT_DOUBLE_EQ(eager.launches[0].min_bytes, gate_bytes);
  EXPECT_DOUBLE_EQ(eager.launches[0].flops, 2 * m * d * h);
  EXPECT_DOUBLE_EQ(eager.launches[1].min_bytes, 2 * m * h * e);  // gelu reads and writes
  EXPECT_DOUBLE_EQ(eager.launches[3].min_bytes, 3 * m * h * e);  // mul reads two, writes one
  // The gated GEMM never writes gate and up: ~140 MB in all (the post says the same).
  const auto fused = fk::make_plan(c, fk::Variant::kGatedGemm);
  EXPECT_DOUBLE_EQ(fused.launches[0].min_bytes, (m * d + 2 * h * d + m * h) * e);
  EXPECT_LT(fused.min_bytes(), 0.5 * eager.min_bytes());
  EXPECT_GT(fused.min_bytes(), 130e6);
  EXPECT_LT(fused.min_bytes(), 150e6);
  // Of those bytes, each launch's output: what may stay in the L2 when it ends.
  EXPECT_DOUBLE_EQ(eager.launches[0].min_write_bytes, m * h * e);
  EXPECT_DOUBLE_EQ(eager.launches[3].min_write_bytes, m * h * e);
  EXPECT_DOUBLE_EQ(eager.launches[4].min_write_bytes, m * d * e);
  EXPECT_DOUBLE_EQ(fused.launches[0].min_write_bytes, m * h * e);
  for (const auto& l : eager.launches) EXPECT_LT(l.min_write_bytes, l.min_bytes) << l.op;
}

TEST(Plan, LinearIsOneGemmWithBiasEpilogue) {
  const auto c = preset("linear-post");
  for (auto v : {fk::Variant::kEager, fk::Variant::kEpilogue}) {
    const auto p = fk::make_plan(c, v);
    ASSERT_EQ(p.launches.size(), 1u);
    EXPECT_EQ(p.launches[0].op, "linear");
    EXPECT_NE(p.launches[0].kernel.find("bias"), std::string::npos);
    EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 1024 * 32 * 64 + 1024 * 64);
  }
  const auto ff = fk::make_plan(c, fk::Variant::kFullyFused);
  ASSERT_EQ(ff.launches.size(), 1u);
  EXPECT_THROW(fk::make_plan(c, fk::Variant::kPointwiseFused), fk::ConfigError);
  EXPECT_THROW(fk::make_plan(c, fk::Variant::kGatedGemm), fk::ConfigError);
}

TEST(Plan, NarrowMlpPerVariant) {
  const auto c = preset("mlp-narrow");
  const auto eager = fk::make_plan(c, fk::Variant::kEager);
  EXPECT_EQ(eager.launches.size(), 9u);  // 5 GEMMs + 4 relus
  EXPECT_EQ(eager.launches[0].op, "layer0.linear");
  EXPECT_EQ(eager.launches[1].op, "layer0.relu");
  EXPECT_EQ(eager.launches.back().op, "layer4.linear");
  EXPECT_EQ(fk::make_plan(c, fk::Variant::kEpilogue).launches.size(), 5u);
  const auto pw = fk::make_plan(c, fk::Variant::kPointwiseFused);
  EXPECT_EQ(pw.launches.size(), 9u);
  EXPECT_EQ(pw.launches[1].op, "layer0.bias+relu");
  const auto ff = fk::make_plan(c, fk::Variant::kFullyFused);
  ASSERT_EQ(ff.launches.size(), 1u);
  EXPECT_EQ(ff.launches[0].op, "mlp");
  // One pass over input and output, plus the weights: ~268 MB.
  const double rows = 1048576;
  EXPECT_NEAR(ff.min_bytes(), rows * 128 * 2, 1e6);
  EXPECT_GT(eager.min_bytes(), 8 * ff.min_bytes());
  EXPECT_NEAR(ff.flops(), eager.flops(), 1e-9 * eager.flops());
}

TEST(Plan, OpNamesAreUniqueWithinAPlan) {
  for (const auto& preset_entry : fk::presets()) {
    for (auto v : fk::all_variants()) {
      if (!fk::supports(preset_entry.config, v)) continue;
      const auto p = fk::make_plan(preset_entry.config, v);
      EXPECT_EQ(p.variant, v);
      EXPECT_FALSE(p.launches.empty());
      std::set<std::string> seen;
      for (const auto& l : p.launches) {
        EXPECT_TRUE(seen.insert(l.op).second) << preset_entry.name << " repeats " << l.op;
        EXPECT_FALSE(l.kernel.empty());
        EXPECT_GT(l.min_bytes, 0);
      }
    }
  }
}

TEST(Plan, UnsupportedVariantThrowsWithReason) {
  try {
    fk::make_plan(preset("swiglu-post"), fk::Variant::kEpilogue);
    FAIL();
  } catch (const fk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("SiLU"), std::string::npos);
  }
}

}  // namespace

// Layers whose weights do not fit in one block's shared memory take several fully fused kernels,
// each as many layers as fit; the activations between them make one more round trip each.
TEST(Plan, DeepWideFullyFusedTakesSeveralKernels) {
  auto c = preset("mlp-narrow");
  c.widths = std::vector<int64_t>(9, 128);  // 8 layers of 128: 5 fit one block
  const auto segments = fk::detail::fused_segments(c);
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_EQ(segments[0].first, 0u);
  EXPECT_EQ(segments[0].last, 5u);
  EXPECT_EQ(segments[1].last, 8u);
  const auto ff = fk::make_plan(c, fk::Variant::kFullyFused);
  EXPECT_EQ(ops(ff), (std::vector<std::string>{"mlp.layers1-5", "mlp.layers6-8"}));
  const double rows = 1048576, e = 2;
  // Input, output and one activation written and read back, plus the weights.
  EXPECT_NEAR(ff.min_bytes(), rows * 128 * e * 4, 1e6);
  EXPECT_DOUBLE_EQ(ff.flops(), fk::make_plan(c, fk::Variant::kEager).flops());
  // One buffer between the two kernels; three kernels share two in turn.
  auto scratch = [](const fk::MlpConfig& cfg) {
    int n = 0;
    for (const auto& b : fk::detail::buffer_specs(cfg, fk::Variant::kFullyFused, 1))
      n += b.name.starts_with("scratch");
    return n;
  };
  EXPECT_EQ(scratch(c), 1);
  c.widths = std::vector<int64_t>(12, 128);
  EXPECT_EQ(fk::detail::fused_segments(c).size(), 3u);
  EXPECT_EQ(scratch(c), 2);
  EXPECT_EQ(fk::detail::fused_segments(preset("mlp-narrow")).size(), 1u);
  EXPECT_EQ(scratch(preset("mlp-narrow")), 0);
  // A width the Hopper kernel takes is cut where that kernel's shared memory is full, even
  // where the mma.sync kernel would hold more (96 wide: 5 layers), and not before (16 wide: 8).
  c.widths = std::vector<int64_t>(9, 96);
  const auto wide = fk::detail::fused_segments(c);
  ASSERT_EQ(wide.size(), 2u);
  EXPECT_EQ(wide[0].last, 5u);
  EXPECT_EQ(wide[1].last, 8u);
  c.widths = std::vector<int64_t>(9, 16);
  EXPECT_EQ(fk::detail::fused_segments(c).size(), 1u);
  // A run of one width ahead of another is cut the same way; the rest is one mma.sync kernel.
  c.widths = {96, 96, 96, 96, 96, 96, 96, 80};
  const auto mixed = fk::detail::fused_segments(c);
  ASSERT_EQ(mixed.size(), 2u);
  EXPECT_EQ(mixed[0].last, 5u);
  EXPECT_EQ(mixed[1].last, 7u);
  // Mixed widths split where they stop fitting too: every layer lands in exactly one kernel.
  c.widths = {64, 128, 128, 128, 128, 128, 128, 32};
  size_t next = 0;
  for (const auto& s : fk::detail::fused_segments(c)) {
    EXPECT_EQ(s.first, next);
    EXPECT_GT(s.last, s.first);
    next = s.last;
  }
  EXPECT_EQ(next, 7u);
}
