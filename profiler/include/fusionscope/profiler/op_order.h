// Ops for kernels that no NVTX op range encloses, from the order they were launched in: a program
// compiled whole (torch.compile of a module) runs its kernels inside one range per iteration, so
// the ranges cannot say which kernel is which op. The plan of the variant can: Inductor keeps the
// module's order (gate GEMM, up GEMM, the fused activation*multiply, down GEMM), so the kernels of
// one iteration, in launch order, are the plan's ops in order. GEMM kernels are told from the
// others by name (looks_like_gemm), so the mapping is checked, and where a compiler reorders
// independent ops it still holds by kind: the GEMMs take the plan's GEMM ops in order, the other
// kernels the other ops. An iteration that launched other kernels (a different count, or kinds
// that do not fit) gets no ops, with the reason.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fusionscope::profiler {

struct PlannedOp {
  std::string name;   // the op, as the plan names it ("gate", "gelu-tanh*mul", "layer0.linear")
  bool gemm = false;  // a matrix product (cuBLAS, CUTLASS, an Inductor mm template)
};

// Whether a kernel's name (mangled or not) is a matrix product's: cuBLAS's nvjet and xmma/gemm
// kernels, CUTLASS, Triton matmul templates (Inductor's triton_tem_*), fusionscope's own GEMMs.
bool looks_like_gemm(std::string_view kernel_name);

// The op of each of `kernels` (names, in launch order), or nothing when they do not fit `plan`;
// then `why` says how.
std::optional<std::vector<std::string>> ops_by_launch_order(std::span<const std::string> kernels,
                                                            std::span<const PlannedOp> plan,
                                                            std::string* why);

}  // namespace fusionscope::profiler
