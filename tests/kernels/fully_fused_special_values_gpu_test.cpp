// The fully fused Hopper MLP on special values (label gpu; skips off sm_90): NaN comes out NaN
// through every activation form (the fp32 tanh, and fp16's f16x2 tanh and polynomial, which bf16
// takes too where its hidden layers are fp16), and the rows packed beside a NaN row at 16 and 32
// wide stay finite.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "device_buffer.h"
#include "fully_fused_mlp_sm90.h"
#include "gpu_guard.h"
#include "pointwise.h"

namespace fk = fusionscope::kernels;
namespace fd = fusionscope::kernels::detail;

namespace {

bool is_nan(uint16_t v, fk::DType d) {
  return d == fk::DType::kBf16 ? (v & 0x7F80) == 0x7F80 && (v & 0x7F) != 0
                               : (v & 0x7C00) == 0x7C00 && (v & 0x3FF) != 0;
}
bool is_finite(uint16_t v, fk::DType d) {
  return d == fk::DType::kBf16 ? (v & 0x7F80) != 0x7F80 : (v & 0x7C00) != 0x7C00;
}
uint16_t nan_bits(fk::DType d) {
  return d == fk::DType::kBf16 ? 0x7FC0 : 0x7E00;
}

struct Case {
  int64_t width;
  fk::DType dtype;
  fk::Activation act;
  const char* form;  // the activation forms the kernel takes, for messages
};
// Every activation form: fp16's f16x2 tanh and polynomial, in bf16 kernels with fp16 hidden
// layers (GELU, 16 wide SiLU) and in fp16 ones, and bf16's fp32 tanh (SiLU from 32 wide).
constexpr Case kCases[] = {
    {16, fk::DType::kBf16, fk::Activation::kGeluTanh, "fp16 hidden: f16x2 tanh, polynomial"},
    {16, fk::DType::kBf16, fk::Activation::kSilu, "fp16 hidden: f16x2 tanh, polynomial"},
    {32, fk::DType::kBf16, fk::Activation::kGeluTanh, "fp16 hidden: f16x2 tanh, polynomial"},
    {64, fk::DType::kBf16, fk::Activation::kGeluTanh, "fp16 hidden: f16x2 tanh, polynomial"},
    {64, fk::DType::kBf16, fk::Activation::kSilu, "fp32 tanh"},
    {16, fk::DType::kFp16, fk::Activation::kGeluTanh, "f16x2 tanh, polynomial"},
    {48, fk::DType::kFp16, fk::Activation::kSilu, "f16x2 tanh, polynomial"},
};
constexpr int64_t kRows = 1000;
constexpr int kLayers = 5;

fk::MlpConfig config_of(const Case& k) {
  fk::MlpConfig c;
  c.name = "special values";
  c.kind = fk::MlpKind::kMlp;
  c.rows = kRows;
  c.widths = std::vector<int64_t>(kLayers + 1, k.width);
  c.bias = true;
  c.dtype = k.dtype;
  c.activation = k.act;
  return c;
}

// A 5-layer MLP of one case with random weights, biases and input on the device.
struct Net {
  fk::MlpConfig config;
  std::vector<fd::DeviceBuffer> weights, biases;
  fd::DeviceBuffer in, out;
  std::string what;

  explicit Net(const Case& k) : config(config_of(k)) {
    const int64_t w = k.width;
    what = std::string(fk::to_string(k.dtype)) + " " + std::string(fk::to_string(k.act)) + " " +
           std::to_string(w) + " wide (" + k.form + ")";
    const float scale = 6.f / float(w);
    for (int l = 0; l < kLayers; ++l) {
      weights.emplace_back(uint64_t(w * w * 2));
      biases.emplace_back(uint64_t(w * 2));
      fd::launch_fill_uniform(weights.back().get(), w * w, k.dtype, -scale, scale, 7, l, nullptr);
      fd::launch_fill_uniform(biases.back().get(), w, k.dtype, -0.1f, 0.1f, 7, 100 + l, nullptr);
    }
    in = fd::DeviceBuffer(uint64_t(kRows * w * 2));
    out = fd::DeviceBuffer(uint64_t(kRows * w * 2));
    fd::launch_fill_uniform(in.get(), kRows * w, k.dtype, -2.f, 2.f, 7, 1000, nullptr);
  }
  // The output as 16-bit words, poisoned with NaN first (an unwritten output reads NaN).
  std::vector<uint16_t> run(int device) {
    std::vector<const void*> wp, bp;
    for (int l = 0; l < kLayers; ++l) wp.push_back(weights[l].get()), bp.push_back(biases[l].get());
    const uint64_t bytes = out.bytes();
    EXPECT_EQ(cudaMemset(out.get(), 0xFF, bytes), cudaSuccess);
    fd::FusedMlpSm90 mlp(config, wp, bp, device);
    mlp.run(in.get(), out.get(), nullptr);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what << ": " << mlp.describe();
    std::vector<uint16_t> host(bytes / 2);
    EXPECT_EQ(cudaMemcpy(host.data(), out.get(), bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
};

// body(case, net, device) for each case the Hopper kernel takes on this device; how many ran.
template <typename F>
int for_each_case(F&& body) {
  int device = 0;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  int ran = 0;
  for (const Case& k : kCases) {
    if (!fd::FusedMlpSm90::applies(config_of(k), device)) continue;
    ++ran;
    Net net(k);
    body(k, net, device);
  }
  return ran;
}
constexpr const char* kNeedsSm90 = "the Hopper fully fused kernel needs an sm_90 GPU";

TEST(FullyFusedSpecialValues, ANanRowStaysNanAndItsNeighboursFinite) {
  FUSIONSCOPE_REQUIRE_GPU();
  const int ran = for_each_case([](const Case& k, Net& net, int device) {
    const int64_t w = k.width;
    const int64_t nan_rows[] = {1, 777};  // inside packed rows, with neighbours on both sides
    const std::vector<uint16_t> nan_row(w, nan_bits(k.dtype));
    for (const int64_t r : nan_rows)
      ASSERT_EQ(
          cudaMemcpy(net.in.as<uint16_t>() + r * w, nan_row.data(), w * 2, cudaMemcpyHostToDevice),
          cudaSuccess);
    const std::vector<uint16_t> out = net.run(device);
    int64_t nan_missing = 0, non_finite = 0;
    for (int64_t r = 0; r < kRows; ++r) {
      const bool nan_input = r == nan_rows[0] || r == nan_rows[1];
      for (int64_t j = 0; j < w; ++j) {
        if (nan_input && !is_nan(out[r * w + j], k.dtype)) ++nan_missing;
        if (!nan_input && !is_finite(out[r * w + j], k.dtype)) ++non_finite;
      }
    }
    EXPECT_EQ(nan_missing, 0) << net.what << ": outputs of NaN rows that are not NaN";
    EXPECT_EQ(non_finite, 0) << net.what << ": non-finite outputs of finite rows";
  });
  if (ran == 0) FUSIONSCOPE_GPU_TEST_CANNOT_RUN(kNeedsSm90);
}

// A NaN bias in one column of the first layer makes that column's pre-activation NaN in every row,
// so every output is NaN after the next layer, whichever activation form each row's pair of that
// column takes (a form that turned NaN into a number would leave rows finite).
TEST(FullyFusedSpecialValues, ANanInOneColumnReachesEveryOutput) {
  FUSIONSCOPE_REQUIRE_GPU();
  const int ran = for_each_case([](const Case& k, Net& net, int device) {
    const uint16_t nan = nan_bits(k.dtype);
    for (int64_t c = 0; c < k.width; ++c) {
      fd::launch_fill_uniform(net.biases[0].get(), k.width, k.dtype, -0.1f, 0.1f, 7, 100, nullptr);
      ASSERT_EQ(cudaMemcpy(net.biases[0].as<uint16_t>() + c, &nan, 2, cudaMemcpyHostToDevice),
                cudaSuccess);
      const std::vector<uint16_t> out = net.run(device);
      int64_t not_nan = 0;
      for (const uint16_t v : out) not_nan += !is_nan(v, k.dtype);
      EXPECT_EQ(not_nan, 0) << net.what << ": a NaN bias in column " << c << " left " << not_nan
                            << " outputs a number";
    }
  });
  if (ran == 0) FUSIONSCOPE_GPU_TEST_CANNOT_RUN(kNeedsSm90);
}

}  // namespace
