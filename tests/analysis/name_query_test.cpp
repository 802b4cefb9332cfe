#include "fusionscope/analysis/name_query.h"

#include <gtest/gtest.h>

namespace fusionscope::analysis {
namespace {

TEST(NameQuery, SubstringIgnoresCaseUnlessAsked) {
  const auto q = NameQuery::make("GEMM", false, false);
  ASSERT_TRUE(q.has_value());
  EXPECT_TRUE(q->matches("gated_gemm_sm90_kernel"));
  EXPECT_FALSE(q->matches("multiply_kernel"));
  const auto exact = NameQuery::make("GEMM", false, true);
  EXPECT_FALSE(exact->matches("gated_gemm_sm90_kernel"));
  EXPECT_TRUE(exact->matches("cuBLAS GEMM"));
}

TEST(NameQuery, RegexSearchesAnywhere) {
  const auto q = NameQuery::make("^nvjet.*_(64|128)x", true, false);
  ASSERT_TRUE(q.has_value());
  EXPECT_TRUE(q->matches("nvjet_sm90_tst_256x128_64x4_1x2"));
  EXPECT_FALSE(q->matches("x_nvjet_sm90_64x"));
  EXPECT_TRUE(NameQuery::make("act.*kernel", true, false)->matches("activation_kernel<bf16>"));
}

TEST(NameQuery, EmptyAndBrokenQueriesAreNone) {
  EXPECT_FALSE(NameQuery::make("", false, false).has_value());
  std::string why;
  EXPECT_FALSE(NameQuery::make("gemm(", true, false, &why).has_value());
  EXPECT_NE(why.find("not a regular expression"), std::string::npos) << why;
  // The same text as a substring is fine.
  EXPECT_TRUE(NameQuery::make("gemm(", false, false)->matches("gemm(a, b)"));
}

}  // namespace
}  // namespace fusionscope::analysis
