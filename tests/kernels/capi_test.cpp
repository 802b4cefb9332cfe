// The C interface (kernels/capi/fusionscope_mlp.h) refuses what it cannot run with a sentence,
// before it touches a device.
#include <gtest/gtest.h>

#include <string>

#include "fusionscope_mlp.h"

namespace {

constexpr const char* kGated =
    R"({"activation":"silu","bias":false,"dtype":"bf16","kind":"gated","name":"t","rows":200,)"
    R"("widths":[136,328]})";

std::string refusal(const char* json, const char* variant, const char* pins = "") {
  char error[256] = "untouched";
  fs_mlp* m = fs_mlp_create(json, variant, pins, 0, error, sizeof error);
  EXPECT_EQ(m, nullptr);
  fs_mlp_destroy(m);
  return error;
}

TEST(MlpCApi, RefusesWhatItCannotRunAndSaysWhy) {
  EXPECT_NE(refusal("{not json", "eager").find("JSON"), std::string::npos);
  EXPECT_NE(refusal(kGated, "warp-speed").find("warp-speed"), std::string::npos);
  EXPECT_NE(refusal(kGated, "torch-compile").find("PyTorch"), std::string::npos);
  EXPECT_NE(refusal(nullptr, "eager").find("configuration"), std::string::npos);
  EXPECT_NE(refusal(kGated, "gated-gemm", "gated=warp:2:16").find("kernel pin"), std::string::npos);
}

TEST(MlpCApi, CopiesNothingWithoutAnMlp) {
  char error[256] = "untouched";
  char dst[4];
  EXPECT_NE(fs_mlp_copy_data(nullptr, "weight0", dst, sizeof dst, error, sizeof error), 0);
  EXPECT_NE(std::string(error).find("no MLP"), std::string::npos) << error;
}

TEST(MlpCApi, SaysWhichVariantsApplyWithoutADevice) {
  char error[256] = "";
  EXPECT_EQ(fs_mlp_supports(kGated, "gated-gemm", error, sizeof error), 1);
  EXPECT_EQ(fs_mlp_supports(kGated, "eager", error, sizeof error), 1);
  EXPECT_EQ(fs_mlp_supports(kGated, "fully-fused", error, sizeof error), 0);
  EXPECT_NE(std::string(error), "");
  EXPECT_EQ(fs_mlp_supports("{not json", "eager", error, sizeof error), -1);
  EXPECT_EQ(fs_mlp_supports(kGated, "warp-speed", error, sizeof error), -1);
}

TEST(MlpCApi, TruncatesMessagesToTheCallersBuffer) {
  char error[8];
  EXPECT_EQ(fs_mlp_create("{not json", "eager", "", 0, error, sizeof error), nullptr);
  EXPECT_EQ(std::string(error).size(), sizeof error - 1);
  EXPECT_EQ(fs_mlp_create("{not json", "eager", "", 0, nullptr, 0), nullptr);  // no buffer: fine
}

TEST(MlpCApi, ANullHandleIsRefusedNotFollowed) {
  char error[64] = "";
  EXPECT_NE(fs_mlp_forward(nullptr, 0, nullptr, error, sizeof error), 0);
  EXPECT_EQ(std::string(error), "no MLP");
  double rel = -1;
  int passed = -1;
  EXPECT_NE(fs_mlp_check(nullptr, 0, &rel, &passed, error, sizeof error), 0);
  EXPECT_EQ(fs_mlp_input_sets(nullptr), 0);
  EXPECT_EQ(fs_mlp_kernels(nullptr), 0);
  EXPECT_STREQ(fs_mlp_kernel_choices(nullptr), "");
  fs_mlp_destroy(nullptr);
}

}  // namespace
