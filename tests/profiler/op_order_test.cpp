// Ops by launch order for a program compiled whole (torch.compile of a module): the kernels of an
// iteration against the variant's plan.
#include "fusionscope/profiler/op_order.h"

#include <gtest/gtest.h>

namespace fusionscope::profiler {
namespace {

const std::vector<PlannedOp> kGeglu = {
    {"gate", true}, {"up", true}, {"gelu-tanh*mul", false}, {"down", true}};

TEST(OpOrder, TellsGemmsByName) {
  EXPECT_TRUE(looks_like_gemm("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"));
  EXPECT_TRUE(looks_like_gemm("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"));
  EXPECT_TRUE(looks_like_gemm("_ZN7cutlass7Kernel2INS_4gemm6kernel13GemmUniversal"));
  EXPECT_TRUE(looks_like_gemm("triton_tem_fused_mm_0"));
  EXPECT_FALSE(looks_like_gemm("triton_poi_fused_gelu_mul_0"));
  EXPECT_FALSE(looks_like_gemm("triton_poi_fused_addmm_relu_0"));
  EXPECT_FALSE(looks_like_gemm(
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIN3c108BFloat16"));
}

TEST(OpOrder, InductorsGegluMapsInOrder) {
  const std::vector<std::string> kernels = {"nvjet_a", "nvjet_a", "triton_poi_fused_gelu_mul_0",
                                            "nvjet_b"};
  std::string why;
  const auto ops = ops_by_launch_order(kernels, kGeglu, &why);
  ASSERT_TRUE(ops) << why;
  EXPECT_EQ(*ops, (std::vector<std::string>{"gate", "up", "gelu-tanh*mul", "down"}));
}

TEST(OpOrder, AReorderedScheduleStillMapsByKind) {
  // A compiler that launched the fused kernel before the last GEMM of the same kind.
  const std::vector<PlannedOp> plan = {{"layer0.linear", true},
                                       {"layer0.bias+relu", false},
                                       {"layer1.linear", true},
                                       {"layer1.bias+relu", false}};
  const std::vector<std::string> kernels = {"nvjet_a", "nvjet_b", "triton_poi_fused_addmm_relu_0",
                                            "triton_poi_fused_addmm_relu_1"};
  std::string why;
  const auto ops = ops_by_launch_order(kernels, plan, &why);
  ASSERT_TRUE(ops) << why;
  EXPECT_EQ(*ops, (std::vector<std::string>{"layer0.linear", "layer1.linear", "layer0.bias+relu",
                                            "layer1.bias+relu"}));
}

TEST(OpOrder, OtherKernelsAreNotForcedOntoThePlan) {
  std::string why;
  EXPECT_FALSE(
      ops_by_launch_order(std::vector<std::string>{"nvjet", "nvjet", "nvjet"}, kGeglu, &why));
  EXPECT_EQ(why, "3 kernels for the plan's 4 ops");
  EXPECT_FALSE(ops_by_launch_order(std::vector<std::string>{"nvjet", "nvjet", "nvjet", "nvjet"},
                                   kGeglu, &why));
  EXPECT_NE(why.find("is a GEMM beyond the plan's GEMM ops"), std::string::npos) << why;
}

}  // namespace
}  // namespace fusionscope::profiler
