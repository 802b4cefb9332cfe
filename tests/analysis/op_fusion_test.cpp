#include "fusionscope/analysis/op_fusion.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fusionscope/kernels/config.h"
#include "fusionscope/kernels/plan.h"
#include "sample/run_builder.h"

namespace fusionscope::analysis {
namespace {

using Parts = std::vector<std::string>;

TEST(OpParts, SplitAsThePlansJoin) {
  EXPECT_EQ(op_parts("gate_up+gelu-tanh*mul"), (Parts{"gate", "up", "gelu-tanh", "mul"}));
  EXPECT_EQ(op_parts("gelu-tanh*mul"), (Parts{"gelu-tanh", "mul"}));
  EXPECT_EQ(op_parts("gate+silu"), (Parts{"gate", "silu"}));
  EXPECT_EQ(op_parts("layer0.linear+relu"), (Parts{"layer0.linear", "layer0.relu"}));
  EXPECT_EQ(op_parts("layer12.bias+relu"), (Parts{"layer12.bias", "layer12.relu"}));
  EXPECT_EQ(op_parts("down"), (Parts{"down"}));
  EXPECT_EQ(op_parts("aten::mm"), (Parts{"aten::mm"}));  // not a plan name: whole
  EXPECT_EQ(op_parts("+"), (Parts{"+"}));
}

// The ops of a preset's plan in one variant, as the runner names its NVTX ranges.
std::vector<std::string> plan_ops(const char* preset, kernels::Variant v) {
  std::vector<std::string> ops;
  for (const auto& l : kernels::make_plan(*kernels::find_preset(preset), v).launches)
    ops.push_back(l.op);
  return ops;
}

// A run with one kernel per op of the plan, named after the op.
storage::RunData run_of(const std::vector<std::string>& ops, const char* kernel_prefix) {
  sample::RunBuilder b;
  int64_t t = 0;
  uint32_t corr = 1;
  for (const std::string& op : ops) {
    b.kernel(t, t + 100, std::string(kernel_prefix) + op, op, 7, corr++);
    t += 110;
  }
  return b.finish();
}

std::vector<OpDiff> rows(const char* preset, kernels::Variant a, kernels::Variant b) {
  return fusion_aware_ops(
      compare_runs(run_of(plan_ops(preset, a), "a_"), run_of(plan_ops(preset, b), "b_")).ops);
}

TEST(Fusion, GatedGemmCoversGateGeluUpAndMulOfEager) {
  const auto r = rows("geglu-post", kernels::Variant::kEager, kernels::Variant::kGatedGemm);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].presence, Presence::kFused);
  EXPECT_EQ(r[0].a_ops, (Parts{"gate", "gelu-tanh", "up", "mul"}));
  EXPECT_EQ(r[0].b_ops, (Parts{"gate_up+gelu-tanh*mul"}));
  EXPECT_EQ(r[0].op, "gate, gelu-tanh, up, mul");
  EXPECT_EQ(r[0].a.size(), 4u);
  EXPECT_EQ(r[0].a_total_ns, 400);
  EXPECT_EQ(r[0].a_count, 4u);
  ASSERT_EQ(r[0].b.size(), 1u);
  EXPECT_EQ(r[0].b[0].name, "b_gate_up+gelu-tanh*mul");
  EXPECT_EQ(r[0].b_total_ns, 100);
  EXPECT_EQ(r[1].op, "down");
  EXPECT_EQ(r[1].presence, Presence::kBoth);
}

TEST(Fusion, PointwiseFusionCoversGeluAndMul) {
  const auto r = rows("geglu-post", kernels::Variant::kEager, kernels::Variant::kPointwiseFused);
  // gate (both), gelu-tanh + mul -> gelu-tanh*mul (fused, at gelu's place), up (both), down.
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].op, "gate");
  EXPECT_EQ(r[1].presence, Presence::kFused);
  EXPECT_EQ(r[1].a_ops, (Parts{"gelu-tanh", "mul"}));
  EXPECT_EQ(r[1].b_ops, (Parts{"gelu-tanh*mul"}));
  EXPECT_EQ(r[2].op, "up");
  EXPECT_EQ(r[3].op, "down");
}

TEST(Fusion, OverlappingFusionsOfBothSidesJoinInOneRow) {
  // Epilogue (gate+gelu-tanh, up, mul) against pointwise (gate, up, gelu-tanh*mul): gate+gelu
  // and mul of A do what gate and gelu*mul of B do.
  const auto r = rows("geglu-post", kernels::Variant::kEpilogue, kernels::Variant::kPointwiseFused);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].presence, Presence::kFused);
  EXPECT_EQ(r[0].a_ops, (Parts{"gate+gelu-tanh", "mul"}));
  EXPECT_EQ(r[0].b_ops, (Parts{"gate", "gelu-tanh*mul"}));
  EXPECT_EQ(r[1].op, "up");
  EXPECT_EQ(r[1].presence, Presence::kBoth);
  EXPECT_EQ(r[2].op, "down");
}

TEST(Fusion, FusedRunAsAStillMapsOntoTheUnfusedB) {
  const auto r = rows("geglu-post", kernels::Variant::kGatedGemm, kernels::Variant::kEager);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].presence, Presence::kFused);
  EXPECT_EQ(r[0].a_ops, (Parts{"gate_up+gelu-tanh*mul"}));
  EXPECT_EQ(r[0].b_ops, (Parts{"gate", "gelu-tanh", "up", "mul"}));
}

TEST(Fusion, EpilogueMlpLayersAndFullyFused) {
  // mlp-wide: layer0.linear + layer0.relu -> layer0.linear+relu, per hidden layer.
  auto r = rows("mlp-wide", kernels::Variant::kEager, kernels::Variant::kEpilogue);
  for (const OpDiff& d : r) {
    if (d.presence != Presence::kFused) continue;
    ASSERT_EQ(d.b_ops.size(), 1u);
    ASSERT_EQ(d.a_ops.size(), 2u);
    EXPECT_EQ(d.b_ops[0], d.a_ops[0] + "+relu") << d.op;
  }
  size_t fused = 0;
  for (const OpDiff& d : r) fused += d.presence == Presence::kFused;
  EXPECT_EQ(fused, 2u);  // two hidden layers with an activation
  for (const OpDiff& d : r) EXPECT_NE(d.presence, Presence::kOnlyA) << d.op;

  // mlp-narrow fully fused: its one op "mlp" covers every op of eager.
  r = rows("mlp-narrow", kernels::Variant::kEager, kernels::Variant::kFullyFused);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].presence, Presence::kFused);
  EXPECT_EQ(r[0].a_ops, plan_ops("mlp-narrow", kernels::Variant::kEager));
  EXPECT_EQ(r[0].b_ops, (Parts{"mlp"}));

  // 8 layers of 128 fully fused take two kernels, "mlp.layers1-5" and "mlp.layers6-8": together
  // they still cover every op of eager, in one row.
  auto deep = *kernels::find_preset("mlp-narrow");
  deep.widths = std::vector<int64_t>(9, 128);
  std::vector<std::string> eager_ops, fused_ops;
  for (const auto& l : kernels::make_plan(deep, kernels::Variant::kEager).launches)
    eager_ops.push_back(l.op);
  for (const auto& l : kernels::make_plan(deep, kernels::Variant::kFullyFused).launches)
    fused_ops.push_back(l.op);
  ASSERT_EQ(fused_ops, (Parts{"mlp.layers1-5", "mlp.layers6-8"}));
  r = fusion_aware_ops(compare_runs(run_of(eager_ops, "a_"), run_of(fused_ops, "b_")).ops);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].presence, Presence::kFused);
  EXPECT_EQ(r[0].b_ops, fused_ops);
}

TEST(Fusion, UnrelatedOpsStayOnlyInTheirRun) {
  const auto r = fusion_aware_ops(
      compare_runs(run_of({"gate", "aten::mm", ""}, "a_"), run_of({"gate", "aten::addmm"}, "b_"))
          .ops);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].presence, Presence::kBoth);
  EXPECT_EQ(r[1].presence, Presence::kOnlyA);
  EXPECT_EQ(r[2].presence, Presence::kOnlyA);  // kernels outside any op: never fused
  EXPECT_EQ(r[3].presence, Presence::kOnlyB);
}

TEST(Fusion, GroupsAreConnectedBySharedParts) {
  const auto g = fusion_groups({"a", "b", "c"}, {"a*b", "x"});
  size_t with_both = 0;
  for (const FusionGroup& x : g) {
    if (x.a.empty() || x.b.empty()) continue;
    ++with_both;
    EXPECT_EQ(x.a, (std::vector<size_t>{0, 1}));
    EXPECT_EQ(x.b, (std::vector<size_t>{0}));
  }
  EXPECT_EQ(with_both, 1u);
}

}  // namespace
}  // namespace fusionscope::analysis
