// The C interface on a GPU (label gpu): a variant set up through it runs on the caller's stream,
// matches the fp32 reference, runs the kernels it was pinned to, and hands out the numbers it
// computes on.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

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

// The bytes of `name` copied out of m through device memory, or empty with a failure recorded.
std::vector<uint16_t> copied(const fs_mlp* m, const char* name, size_t elems) {
  std::vector<uint16_t> host(elems);
  void* dev = nullptr;
  EXPECT_EQ(cudaMalloc(&dev, elems * 2), cudaSuccess);
  char error[512] = "";
  const int rc = fs_mlp_copy_data(m, name, dev, elems * 2, error, sizeof error);
  EXPECT_EQ(rc, 0) << name << ": " << error;
  EXPECT_EQ(cudaMemcpy(host.data(), dev, elems * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(dev);
  return rc == 0 ? host : std::vector<uint16_t>{};
}

float bf16_value(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f = 0;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

// bench_vs_torch.py runs PyTorch on our numbers: every variant of a configuration must hold the
// same ones, in nn.Linear's layout, and a wrong name or size must be refused, not half-copied.
TEST(MlpCApiGpu, EveryVariantHandsOutTheSameNumbers) {
  FUSIONSCOPE_REQUIRE_GPU();
  char error[512] = "";
  fs_mlp* eager = fs_mlp_create(kGated, "eager", "", 1, error, sizeof error);
  ASSERT_NE(eager, nullptr) << error;
  fs_mlp* gated = fs_mlp_create(kGated, "gated-gemm", "", 1, error, sizeof error);
  ASSERT_NE(gated, nullptr) << error;
  const size_t rows = 200, dim = 136, hidden = 328;
  for (const auto& [name, elems] : {std::pair<const char*, size_t>{"weight0", hidden * dim},
                                    {"weight1", hidden * dim},
                                    {"weight2", dim * hidden},
                                    {"input", rows * dim}}) {
    const auto a = copied(eager, name, elems), b = copied(gated, name, elems);
    ASSERT_EQ(a.size(), elems) << name;
    EXPECT_EQ(a, b) << name;
    // He-uniform weights (bound sqrt(6 / in)) and inputs in [-1, 1), never all the same value.
    const float bound = std::string(name) == "input"     ? 1.0f
                        : std::string(name) == "weight2" ? std::sqrt(6.0f / hidden)
                                                         : std::sqrt(6.0f / dim);
    float lo = 0, hi = 0;
    for (uint16_t v : a) {
      lo = std::min(lo, bf16_value(v));
      hi = std::max(hi, bf16_value(v));
    }
    EXPECT_LE(hi, bound * 1.01f) << name;
    EXPECT_GE(lo, -bound * 1.01f) << name;
    EXPECT_GT(hi - lo, bound) << name;
  }
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, hidden * dim * 2), cudaSuccess);
  EXPECT_NE(fs_mlp_copy_data(gated, "weight0", dev, hidden * dim * 2 - 2, error, sizeof error), 0);
  EXPECT_NE(std::string(error).find("bytes"), std::string::npos) << error;
  EXPECT_NE(fs_mlp_copy_data(gated, "weight_gate_up", dev, hidden * dim * 2, error, sizeof error),
            0);
  EXPECT_NE(std::string(error).find("no data named"), std::string::npos) << error;
  EXPECT_NE(fs_mlp_copy_data(gated, "bias0", dev, 2, error, sizeof error), 0);  // no biases
  cudaFree(dev);
  fs_mlp_destroy(eager);
  fs_mlp_destroy(gated);
}

}  // namespace
