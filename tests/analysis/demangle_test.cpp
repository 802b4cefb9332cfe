#include "fusionscope/analysis/demangle.h"

#include <gtest/gtest.h>

namespace fusionscope::analysis {
namespace {

TEST(Demangle, MangledTemplateKernel) {
  EXPECT_EQ(demangle("_ZN11fusionscope7kernels9gelu_tanhI13__nv_bfloat16EEvPKT_PS3_l"),
            "void fusionscope::kernels::gelu_tanh<__nv_bfloat16>(__nv_bfloat16 const*, "
            "__nv_bfloat16*, long)");
}

TEST(Demangle, PlainNamesComeBackUnchanged) {
  EXPECT_EQ(demangle("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"),
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT");
  EXPECT_EQ(demangle("triton_poi_fused_gelu_mul_0"), "triton_poi_fused_gelu_mul_0");
  EXPECT_EQ(demangle(""), "");
  EXPECT_EQ(demangle("_Z"), "_Z");
}

TEST(Demangle, InvalidManglingComesBackUnchanged) {
  EXPECT_EQ(demangle("_Zgarbage!!"), "_Zgarbage!!");
}

TEST(ShortName, MangledKernel) {
  EXPECT_EQ(short_name("_ZN11fusionscope7kernels9gelu_tanhI13__nv_bfloat16EEvPKT_PS3_l"),
            "gelu_tanh");
  EXPECT_EQ(short_name("_ZN11fusionscope7kernels19gated_gemm_gelu_mulI13__nv_bfloat16Li128ELi128"
                       "ELi64EEEvPKT_S5_PS3_iii"),
            "gated_gemm_gelu_mul");
}

TEST(ShortName, DemangledPyTorchKernel) {
  // As the PyTorch profiler records it: return type, namespaces, lambdas in the arguments.
  const char* name =
      "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl("
      "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#1}::operator()() const::"
      "{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, "
      "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#1}"
      "::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, "
      "std::array<char*, 2ul>)";
  EXPECT_EQ(short_name(name), "vectorized_elementwise_kernel");
}

TEST(ShortName, ExternCNamesStay) {
  EXPECT_EQ(short_name("nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN"),
            "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN");
  EXPECT_EQ(short_name("triton_poi_fused__unsafe_view_gelu_mul_0"),
            "triton_poi_fused__unsafe_view_gelu_mul_0");
}

TEST(ShortName, SimpleForms) {
  EXPECT_EQ(short_name("void foo(int)"), "foo");
  EXPECT_EQ(short_name("ns::bar<float>"), "bar");
  EXPECT_EQ(short_name("void ns::K<4>::run(float const*) const"), "run");
  EXPECT_EQ(short_name(""), "");
  // Unbalanced brackets never lose the name.
  EXPECT_FALSE(short_name("broken<(").empty());
}

}  // namespace
}  // namespace fusionscope::analysis
