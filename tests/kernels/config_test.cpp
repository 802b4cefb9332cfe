// Configurations: names, JSON round trip, presets and validation, all without a GPU.
#include <gtest/gtest.h>

#include "fusionscope/kernels/config.h"

namespace fk = fusionscope::kernels;

namespace {

fk::MlpConfig preset(const char* name) {
  auto c = fk::find_preset(name);
  EXPECT_TRUE(c.has_value()) << name;
  return c.value_or(fk::MlpConfig{});
}

// The ConfigError message of validate(), or "" when it passes.
std::string validation_error(const fk::MlpConfig& c, fk::Variant v,
                             std::optional<uint64_t> free_bytes = {}) {
  try {
    fk::validate(c, v, free_bytes);
  } catch (const fk::ConfigError& e) {
    return e.what();
  }
  return {};
}

TEST(Config, NamesRoundTrip) {
  for (auto k : {fk::MlpKind::kLinear, fk::MlpKind::kMlp, fk::MlpKind::kGated})
    EXPECT_EQ(fk::parse_kind(fk::to_string(k)), k);
  for (auto d : {fk::DType::kFp32, fk::DType::kFp16, fk::DType::kBf16})
    EXPECT_EQ(fk::parse_dtype(fk::to_string(d)), d);
  for (auto a : {fk::Activation::kNone, fk::Activation::kRelu, fk::Activation::kGeluTanh,
                 fk::Activation::kSilu})
    EXPECT_EQ(fk::parse_activation(fk::to_string(a)), a);
  for (auto v : fk::all_variants()) EXPECT_EQ(fk::parse_variant(fk::to_string(v)), v);
  EXPECT_EQ(fk::all_variants().size(), 5u);
  EXPECT_EQ(fk::to_string(fk::Variant::kGatedGemm), "gated-gemm");
  EXPECT_EQ(fk::to_string(fk::Activation::kGeluTanh), "gelu-tanh");
}

TEST(Config, UnknownNamesListTheChoices) {
  try {
    fk::parse_variant("fused");
    FAIL() << "expected ConfigError";
  } catch (const fk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("fully-fused"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fk::parse_dtype("float16"), fk::ConfigError);
  EXPECT_THROW(fk::parse_kind(""), fk::ConfigError);
  EXPECT_THROW(fk::parse_activation("gelu"), fk::ConfigError);
}

TEST(Config, DtypeBytes) {
  EXPECT_EQ(fk::dtype_bytes(fk::DType::kFp32), 4u);
  EXPECT_EQ(fk::dtype_bytes(fk::DType::kFp16), 2u);
  EXPECT_EQ(fk::dtype_bytes(fk::DType::kBf16), 2u);
  EXPECT_LT(fk::tolerance(fk::DType::kFp32), fk::tolerance(fk::DType::kFp16));
  EXPECT_LT(fk::tolerance(fk::DType::kFp16), fk::tolerance(fk::DType::kBf16));
}

TEST(Config, PresetsAreTheReferenceWorkloads) {
  const auto linear = preset("linear-post");
  EXPECT_EQ(linear.kind, fk::MlpKind::kLinear);
  EXPECT_EQ(linear.rows, 1024);
  EXPECT_EQ(linear.widths, (std::vector<int64_t>{32, 64}));
  EXPECT_TRUE(linear.bias);
  EXPECT_EQ(linear.dtype, fk::DType::kBf16);

  const auto geglu = preset("geglu-post");
  EXPECT_EQ(geglu.kind, fk::MlpKind::kGated);
  EXPECT_EQ(geglu.rows, 8192);
  EXPECT_EQ(geglu.widths, (std::vector<int64_t>{768, 3072}));
  EXPECT_EQ(geglu.activation, fk::Activation::kGeluTanh);
  EXPECT_FALSE(geglu.bias);

  const auto narrow = preset("mlp-narrow");
  EXPECT_EQ(narrow.kind, fk::MlpKind::kMlp);
  EXPECT_EQ(narrow.rows, 1048576);
  EXPECT_EQ(narrow.widths.size(), 6u);  // 5 layers
  for (auto w : narrow.widths) EXPECT_EQ(w, 64);
  EXPECT_EQ(narrow.dtype, fk::DType::kFp16);
  EXPECT_EQ(narrow.activation, fk::Activation::kRelu);
  EXPECT_EQ(fk::layer_count(narrow), 5);

  EXPECT_FALSE(fk::find_preset("no-such-preset").has_value());
  for (const auto& p : fk::presets()) {
    EXPECT_EQ(p.name, p.config.name);
    EXPECT_FALSE(p.description.empty());
    EXPECT_NO_THROW(fk::validate_shape(p.config)) << p.name;
    EXPECT_NO_THROW(fk::validate(p.config, fk::Variant::kEager)) << p.name;
  }
}

TEST(Config, JsonRoundTripsEveryPreset) {
  for (const auto& p : fk::presets()) {
    const std::string json = fk::to_json(p.config);
    EXPECT_EQ(fk::config_from_json(json), p.config) << json;
  }
}

TEST(Config, JsonNamesFieldsAsTheParsersDo) {
  const std::string json = fk::to_json(preset("geglu-post"));
  EXPECT_NE(json.find("\"kind\":\"gated\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"activation\":\"gelu-tanh\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"widths\":[768,3072]"), std::string::npos) << json;
}

TEST(Config, JsonDefaultsOptionalFields) {
  const auto c = fk::config_from_json(R"({"kind":"linear","rows":16,"widths":[32,64],
                                          "dtype":"fp16"})");
  EXPECT_EQ(c.kind, fk::MlpKind::kLinear);
  EXPECT_FALSE(c.bias);
  EXPECT_EQ(c.activation, fk::Activation::kNone);
  EXPECT_EQ(c.name, "");
}

TEST(Config, JsonRefusesBadInputWithAReason) {
  const char* bad[] = {
      "",                                                      // empty
      "{",                                                     // truncated
      "[1,2]",                                                 // not an object
      R"({"rows":16,"widths":[32,64],"dtype":"fp16"})",        // no kind
      R"({"kind":"linear","widths":[32,64],"dtype":"fp16"})",  // no rows
      R"({"kind":"linear","rows":"16","widths":[32,64],"dtype":"fp16"})",
      R"({"kind":"linear","rows":16.5,"widths":[32,64],"dtype":"fp16"})",
      R"({"kind":"linear","rows":16,"widths":32,"dtype":"fp16"})",
      R"({"kind":"linear","rows":16,"widths":[32,"x"],"dtype":"fp16"})",
      R"({"kind":"linear","rows":16,"widths":[32,64],"dtype":"fp8"})",
      R"({"kind":"linear","rows":16,"widths":[32,64],"dtype":"fp16","bias":1})",
      R"({"kind":"linear","rows":16,"widths":[32,64],"dtype":"fp16","colour":"red"})",
      R"({"kind":"linear","rows":0,"widths":[32,64],"dtype":"fp16"})",
      R"({"kind":"linear","rows":-5,"widths":[32,64],"dtype":"fp16"})",
      R"({"kind":"linear","rows":16,"widths":[32,-64],"dtype":"fp16"})",
  };
  for (const char* text : bad) {
    try {
      fk::config_from_json(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const fk::ConfigError& e) {
      EXPECT_GT(std::string(e.what()).size(), 10u) << text;
    }
  }
}

TEST(Config, ZeroAndNegativeSizesAreRefused) {
  auto c = preset("geglu-post");
  c.rows = 0;
  EXPECT_NE(validation_error(c, fk::Variant::kEager).find("rows must be positive"),
            std::string::npos);
  c.rows = -1;
  EXPECT_NE(validation_error(c, fk::Variant::kEager).find("rows must be positive"),
            std::string::npos);
  c = preset("geglu-post");
  c.widths[1] = 0;
  EXPECT_NE(validation_error(c, fk::Variant::kEager).find("must be positive"), std::string::npos);
  c.widths[1] = -3072;
  EXPECT_NE(validation_error(c, fk::Variant::kEager).find("must be positive"), std::string::npos);
  c = preset("mlp-narrow");
  c.widths[3] = 60;
  EXPECT_NE(validation_error(c, fk::Variant::kEager).find("multiple of 8"), std::string::npos);
  c.widths = {64};
  EXPECT_NE(validation_error(c, fk::Variant::kEager).find("at least 2"), std::string::npos);
}

TEST(Config, HugeSizesAreRefusedNotWrapped) {
  auto c = preset("geglu-post");
  c.rows = int64_t{1} << 40;
  EXPECT_NE(validation_error(c, fk::Variant::kEager).find("exceed"), std::string::npos);
  c = preset("geglu-post");
  c.widths = {int64_t{1} << 30, 3072};
  EXPECT_NE(validation_error(c, fk::Variant::kEager).find("exceeds the limit"), std::string::npos);
}

TEST(Config, KindRules) {
  auto linear = preset("linear-post");
  linear.activation = fk::Activation::kRelu;
  EXPECT_NE(validation_error(linear, fk::Variant::kEager).find("no activation"), std::string::npos);
  auto gated = preset("geglu-post");
  gated.activation = fk::Activation::kNone;
  EXPECT_NE(validation_error(gated, fk::Variant::kEager).find("needs an activation"),
            std::string::npos);
  gated = preset("geglu-post");
  gated.bias = true;
  EXPECT_NE(validation_error(gated, fk::Variant::kEager).find("bias-free"), std::string::npos);
  gated = preset("geglu-post");
  gated.widths = {768, 3072, 768};
  EXPECT_NE(validation_error(gated, fk::Variant::kEager).find("{dim, hidden}"), std::string::npos);
}

TEST(Config, VariantSupport) {
  const auto geglu = preset("geglu-post");
  const auto narrow = preset("mlp-narrow");
  const auto linear = preset("linear-post");
  std::string why;
  EXPECT_TRUE(fk::supports(geglu, fk::Variant::kGatedGemm, &why)) << why;
  EXPECT_TRUE(fk::supports(geglu, fk::Variant::kEpilogue, &why)) << why;
  EXPECT_TRUE(fk::supports(geglu, fk::Variant::kPointwiseFused, &why)) << why;
  EXPECT_FALSE(fk::supports(geglu, fk::Variant::kFullyFused, &why));
  EXPECT_NE(why.find("not gated"), std::string::npos) << why;

  EXPECT_TRUE(fk::supports(narrow, fk::Variant::kFullyFused, &why)) << why;
  EXPECT_FALSE(fk::supports(narrow, fk::Variant::kGatedGemm, &why));
  EXPECT_NE(why.find("gated MLPs only"), std::string::npos) << why;

  EXPECT_TRUE(fk::supports(linear, fk::Variant::kFullyFused, &why)) << why;
  EXPECT_FALSE(fk::supports(linear, fk::Variant::kPointwiseFused, &why));

  auto swiglu = preset("swiglu-post");
  EXPECT_FALSE(fk::supports(swiglu, fk::Variant::kEpilogue, &why));
  EXPECT_NE(why.find("SiLU"), std::string::npos) << why;
  EXPECT_THROW(fk::validate(swiglu, fk::Variant::kEpilogue), fk::ConfigError);
  EXPECT_NO_THROW(fk::validate(swiglu, fk::Variant::kGatedGemm));
}

TEST(Config, DtypeVariantPairs) {
  auto geglu = preset("geglu-post");
  geglu.dtype = fk::DType::kFp32;
  EXPECT_NE(validation_error(geglu, fk::Variant::kGatedGemm).find("not fp32"), std::string::npos);
  EXPECT_EQ(validation_error(geglu, fk::Variant::kEager), "");
  auto narrow = preset("mlp-narrow");
  narrow.dtype = fk::DType::kFp32;
  EXPECT_NE(validation_error(narrow, fk::Variant::kFullyFused).find("not fp32"), std::string::npos);
  narrow.dtype = fk::DType::kBf16;
  EXPECT_EQ(validation_error(narrow, fk::Variant::kFullyFused), "");
}

TEST(Config, FullyFusedRejectsWidthsItCannotHold) {
  auto c = preset("mlp-narrow");
  c.widths[2] = 256;
  const std::string err = validation_error(c, fk::Variant::kFullyFused);
  EXPECT_NE(err.find("width 2 is 256"), std::string::npos) << err;
  c.widths[2] = 24;  // a multiple of 8 but not of 16
  EXPECT_NE(validation_error(c, fk::Variant::kFullyFused).find("multiples of 16"),
            std::string::npos);
  c = preset("mlp-narrow");
  // 11 layers of 128: their weights exceed one block's shared memory, so they take 3 kernels.
  c.widths = std::vector<int64_t>(12, 128);
  EXPECT_EQ(validation_error(c, fk::Variant::kFullyFused), "");
  c.widths = std::vector<int64_t>(6, 128);
  EXPECT_EQ(validation_error(c, fk::Variant::kFullyFused), "");
  c.widths = std::vector<int64_t>(34, 16);  // 33 layers
  EXPECT_NE(validation_error(c, fk::Variant::kFullyFused).find("at most 32 layers"),
            std::string::npos);
}

TEST(Config, MemoryIsCheckedUpFront) {
  const auto geglu = preset("geglu-post");
  const uint64_t need = fk::device_bytes_needed(geglu, fk::Variant::kEager);
  // At least inputs, weights, the four 8192 x 3072 bf16 intermediates and the output.
  const uint64_t floor = (8192ull * 768 * 2 + 3ull * 768 * 3072 + 4ull * 8192 * 3072) * 2;
  EXPECT_GT(need, floor);
  EXPECT_EQ(validation_error(geglu, fk::Variant::kEager, need), "");
  const std::string err = validation_error(geglu, fk::Variant::kEager, need - 1);
  EXPECT_NE(err.find("of device memory"), std::string::npos) << err;
  EXPECT_NE(err.find("are free"), std::string::npos) << err;
  // Fusion needs fewer intermediates.
  EXPECT_LT(fk::device_bytes_needed(geglu, fk::Variant::kGatedGemm), need);
  // Rotating input sets cost memory.
  EXPECT_GT(fk::device_bytes_needed(geglu, fk::Variant::kEager, 4), need);
  auto big = preset("geglu-large");
  big.rows = int64_t{1} << 30;
  EXPECT_NE(validation_error(big, fk::Variant::kEager, 80ull << 30).find("GiB"), std::string::npos);
}

TEST(Config, DescribeNamesTheShape) {
  EXPECT_EQ(fk::describe(preset("geglu-post")), "gated 8192 x 768 -> 3072 -> 768, gelu-tanh, bf16");
  EXPECT_EQ(fk::describe(preset("linear-post")), "linear 1024 x 32 -> 64, bias, bf16");
}

}  // namespace
