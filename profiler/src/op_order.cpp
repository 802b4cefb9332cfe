#include "fusionscope/profiler/op_order.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace fusionscope::profiler {

bool looks_like_gemm(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // Inductor's pointwise and reduction kernels are never products, whatever their fused ops
  // ("triton_poi_fused_addmm_relu_0" adds a bias to an mm's output).
  if (lower.starts_with("triton_poi_") || lower.starts_with("triton_red_") ||
      lower.starts_with("triton_per_"))
    return false;
  static constexpr std::array<std::string_view, 9> kMarks = {
      "gemm", "nvjet", "cutlass", "xmma", "triton_tem_", "matmul", "wgmma", "hmma", "_mm_"};
  return std::any_of(kMarks.begin(), kMarks.end(),
                     [&](std::string_view m) { return lower.find(m) != std::string::npos; });
}

std::optional<std::vector<std::string>> ops_by_launch_order(std::span<const std::string> kernels,
                                                            std::span<const PlannedOp> plan,
                                                            std::string* why) {
  auto fail = [&](std::string text) -> std::optional<std::vector<std::string>> {
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  if (kernels.size() != plan.size())
    return fail(std::to_string(kernels.size()) + " kernels for the plan's " +
                std::to_string(plan.size()) + " ops");
  std::vector<bool> gemm(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) gemm[i] = looks_like_gemm(kernels[i]);
  std::vector<std::string> ops(kernels.size());
  bool in_order = true;
  for (size_t i = 0; i < kernels.size(); ++i) in_order = in_order && gemm[i] == plan[i].gemm;
  if (in_order) {
    for (size_t i = 0; i < kernels.size(); ++i) ops[i] = plan[i].name;
    return ops;
  }
  // By kind: the k-th GEMM kernel is the k-th GEMM op, likewise for the others.
  size_t next[2] = {0, 0};
  for (size_t i = 0; i < kernels.size(); ++i) {
    size_t& j = next[gemm[i] ? 1 : 0];
    while (j < plan.size() && plan[j].gemm != gemm[i]) ++j;
    if (j == plan.size())
      return fail("kernel " + std::to_string(i) + " (" + kernels[i] + ") is " +
                  (gemm[i] ? "a GEMM" : "not a GEMM") + " beyond the plan's " +
                  (gemm[i] ? "GEMM ops" : "other ops"));
    ops[i] = plan[j++].name;
  }
  return ops;
}

}  // namespace fusionscope::profiler
