// Which ops of one run a fused op of the other covers. The kernels' plans name a fused op by
// joining the ops it replaces (kernels/src/plan.cpp): "gate_up+gelu-tanh*mul" covers gate, up,
// gelu-tanh and mul; "gelu-tanh*mul" covers gelu-tanh and mul; "layer0.linear+relu" covers
// layer0.linear and layer0.relu; a fully fused MLP's one op "mlp" (or its kernels' ops
// "mlp.layers1-5", "mlp.layers6-8" when its weights take several) covers every op. The
// comparison uses it to show "gate, gelu-tanh, up, mul -> gated GEMM" as one row instead of four
// ops "only in A" and one "only in B".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fusionscope/analysis/compare.h"

namespace fusionscope::analysis {

// The plan ops an op name stands for: split at '+', '*' and '_', a "layerN." prefix carried to
// every part ("layer1.bias+relu" -> layer1.bias, layer1.relu). Names outside the plans'
// vocabulary (anything but letters, digits, '.', '-', '+', '*', '_', e.g. "aten::mm") stay whole.
std::vector<std::string> op_parts(std::string_view op);

// Ops whose name stands for the whole network (a fully fused MLP): "mlp", "mlp.layersA-B".
bool covers_everything(std::string_view op);

// Groups of ops that appear in only one of two runs, joined when they share a part (or one side
// covers everything): each group is a set of A ops and a set of B ops doing the same work.
struct FusionGroup {
  std::vector<size_t> a;  // indexes into the `only_a` list given
  std::vector<size_t> b;  // indexes into `only_b`
};
std::vector<FusionGroup> fusion_groups(const std::vector<std::string>& only_a,
                                       const std::vector<std::string>& only_b);

// A comparison's op rows with fused ops merged: each group with ops on both sides becomes one row
// (Presence::kFused, at the place of its first A op) listing the ops of A and of B and the kernels
// of both; ops in both runs and ops without a counterpart keep their rows.
std::vector<OpDiff> fusion_aware_ops(const std::vector<OpDiff>& ops);

}  // namespace fusionscope::analysis
