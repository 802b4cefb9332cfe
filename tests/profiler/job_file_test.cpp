#include <gtest/gtest.h>

#include "fusionscope/lab/job_file.h"

namespace fusionscope::lab {
namespace {

using kernels::ConfigError;
using kernels::Variant;

TEST(JobFile, PresetsConfigurationsAndVariants) {
  const std::string linear = kernels::to_json(*kernels::find_preset("linear-post"));
  const JobFile f = parse_job_file(R"({
    "session": "post workloads",
    "warmup": 3, "iterations": 7, "graph": true,
    "variants": ["eager", "pointwise-fused"],
    "configurations": [
      "geglu-post",
      {"preset": "swiglu-post", "variants": "all"},
      )" + linear.substr(0, linear.size() - 1) +
                                   R"(, "variants": ["epilogue"]}
    ]
  })");
  EXPECT_EQ(f.session_name, "post workloads");
  EXPECT_EQ(f.job.warmup, 3);
  EXPECT_EQ(f.job.iterations, 7);
  EXPECT_TRUE(f.job.cuda_graph);
  EXPECT_FALSE(f.job.verify);
  ASSERT_GE(f.job.runs.size(), 4u);
  EXPECT_EQ(f.job.runs[0], (RunSpec{*kernels::find_preset("geglu-post"), Variant::kEager}));
  EXPECT_EQ(f.job.runs[1],
            (RunSpec{*kernels::find_preset("geglu-post"), Variant::kPointwiseFused}));
  EXPECT_EQ(f.job.runs[2].config.name, "swiglu-post");
  EXPECT_EQ(f.job.runs.back(), (RunSpec{*kernels::find_preset("linear-post"), Variant::kEpilogue}));
  // swiglu-post in "all" variants: those that do not apply are listed, not run.
  for (const auto& r : f.job.runs) {
    std::string why;
    EXPECT_TRUE(kernels::supports(r.config, r.variant, &why)) << why;
  }
}

TEST(JobFile, DefaultsAreAllVariantsAndTheLabsIterationCounts) {
  const JobFile f = parse_job_file(R"({"configurations": ["mlp-narrow"]})");
  EXPECT_EQ(f.rounds, 1);
  EXPECT_EQ(parse_job_file(R"({"rounds": 4, "configurations": ["mlp-narrow"]})").rounds, 4);
  const CaptureJob defaults;
  EXPECT_EQ(f.job.warmup, defaults.warmup);
  EXPECT_EQ(f.job.iterations, defaults.iterations);
  EXPECT_EQ(f.job.runs.size() + f.skipped.size(), kernels::all_variants().size());
}

TEST(JobFile, MistakesAreNamed) {
  auto error_of = [](const std::string& text) {
    try {
      parse_job_file(text);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[]").find("JSON object"), std::string::npos);
  EXPECT_NE(
      error_of(R"({"configurations": ["geglu-post"], "iters": 3})").find("unknown key \"iters\""),
      std::string::npos);
  EXPECT_NE(error_of(R"({"configurations": []})").find("non-empty"), std::string::npos);
  EXPECT_NE(error_of(R"({"configurations": ["nope"]})").find("no preset named \"nope\""),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"configurations": ["geglu-post"], "variants": ["fastest"]})").find("fastest"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"configurations": ["geglu-post"], "iterations": 0})").find("between 1"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"configurations": ["geglu-post"], "rounds": 0})").find("rounds"),
            std::string::npos);
  EXPECT_NE(
      error_of(
          R"({"configurations": [{"kind": "linear", "rows": 0, "widths": [4, 4], "dtype": "bf16"}]})")
          .find("configurations[0]"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"configurations": [{"preset": "geglu-post", "rows": 4}]})").find("only"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"configurations": ["linear-post"], "variants": ["gated-gemm"]})")
                .find("no configuration supports"),
            std::string::npos);
}

TEST(JobFile, VariantLists) {
  EXPECT_EQ(parse_variant_list("all"), kernels::all_variants());
  EXPECT_EQ(parse_variant_list("eager, gated-gemm"),
            (std::vector<Variant>{Variant::kEager, Variant::kGatedGemm}));
  EXPECT_THROW(parse_variant_list(""), ConfigError);
  EXPECT_THROW(parse_variant_list("eager,bogus"), ConfigError);
}

TEST(JobFile, MissingFileSaysWhich) {
  try {
    load_job_file("/nonexistent/job.json");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/job.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace fusionscope::lab
