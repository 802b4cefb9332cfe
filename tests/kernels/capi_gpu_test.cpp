// The C interface on a GPU (label gpu): a variant set up through it runs on the caller's stream,
// matches the fp32 reference, and runs the kernels it was pinned to.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

#include "fusionscope_mlp.h"
#include "gpu_guard.h"

namespace {

// Shapes that fit no tile: 200 rows, dim 136, hidden 328.
constexpr const char* kGated =
    R"({"activation":"silu","bias":false,"dtype":"bf16","kind":"gated","name":"t","rows":200,)"
    R"("widths":[136,328]})";

TEST(MlpCApiGpu, EveryGatedVariantRunsOnTheCallersStreamAndMatchesTheReference) {
  FUSIONSCOPE_REQUIRE_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (const char* variant : {"eager", "pointwise-fused", "gated-gemm"}) {
    char error[512] = "";
    ASSERT_EQ(fs_mlp_supports(kGated, variant, error, sizeof error), 1) << variant << ": " << error;
    fs_mlp* m = fs_mlp_create(kGated, variant, "", 0, error, sizeof error);
    ASSERT_NE(m, nullptr) << variant << ": " << error;
    EXPECT_GE(fs_mlp_input_sets(m), 1);
    EXPECT_GE(fs_mlp_kernels(m), 2) << variant;
    EXPECT_STRNE(fs_mlp_kernel_path(m), "") << variant;
    for (int s = 0; s < fs_mlp_input_sets(m); ++s)
      ASSERT_EQ(fs_mlp_forward(m, s, stream, error, sizeof error), 0) << variant << ": " << error;
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_NE(fs_mlp_forward(m, fs_mlp_input_sets(m), stream, error, sizeof error), 0);
    EXPECT_NE(std::string(error).find("input copy"), std::string::npos) << error;
    double rel = -1;
    int passed = 0;
    ASSERT_EQ(fs_mlp_check(m, 0, &rel, &passed, error, sizeof error), 0) << error;
    EXPECT_TRUE(passed) << variant << ": rel " << rel;
    EXPECT_GT(rel, 0.0) << variant;  // bf16 rounding: an exact match would mean no check ran
    fs_mlp_destroy(m);
  }
  cudaStreamDestroy(stream);
}

TEST(MlpCApiGpu, AVariantThatDoesNotApplyIsRefusedWithItsReason) {
  FUSIONSCOPE_REQUIRE_GPU();
  char error[512] = "";
  EXPECT_EQ(fs_mlp_supports(kGated, "epilogue", error, sizeof error), 0);  // SiLU: no epilogue
  EXPECT_EQ(fs_mlp_create(kGated, "epilogue", "", 0, error, sizeof error), nullptr);
  EXPECT_NE(std::string(error).find("SiLU"), std::string::npos) << error;
}

TEST(MlpCApiGpu, PinnedKernelsAreTheOnesRun) {
  FUSIONSCOPE_REQUIRE_GPU();
  int major = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  if (major != 9) FUSIONSCOPE_GPU_TEST_CANNOT_RUN("the pinned Hopper GEMM needs an sm_90 GPU");
  char error[512] = "";
  const char* pins = "gated=coop:1:4:ms:ln:0 down=cublaslt";
  fs_mlp* m = fs_mlp_create(kGated, "gated-gemm", pins, 2, error, sizeof error);
  ASSERT_NE(m, nullptr) << error;
  EXPECT_EQ(fs_mlp_input_sets(m), 2);
  EXPECT_STREQ(fs_mlp_kernel_choices(m), pins);
  ASSERT_EQ(fs_mlp_forward(m, 1, nullptr, error, sizeof error), 0) << error;
  double rel = -1;
  int passed = 0;
  ASSERT_EQ(fs_mlp_check(m, 0, &rel, &passed, error, sizeof error), 0) << error;
  EXPECT_TRUE(passed) << "rel " << rel;
  fs_mlp_destroy(m);
}

}  // namespace
