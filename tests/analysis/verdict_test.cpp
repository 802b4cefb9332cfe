#include "fusionscope/analysis/verdict.h"

#include <gtest/gtest.h>

namespace fusionscope::analysis {
namespace {

RunComparison pair(double a_ns, double b_ns, uint64_t a_kernels, uint64_t b_kernels) {
  RunComparison c;
  c.a.iterations = c.b.iterations = 10;
  c.a.timed_kernels = a_kernels * 10;
  c.b.timed_kernels = b_kernels * 10;
  c.a.timed_kernel_time_ns = static_cast<int64_t>(a_ns * 10);
  c.b.timed_kernel_time_ns = static_cast<int64_t>(b_ns * 10);
  c.a.kernels = c.a.timed_kernels;
  c.b.kernels = c.b.timed_kernels;
  c.kernel_time_speedup = a_ns / b_ns;
  return c;
}

TEST(Verdict, SaysWhoIsFasterAndWhy) {
  EXPECT_EQ(comparison_verdict(pair(250e3, 180e3, 5, 2), 490e6, 169e6),
            "B is 1.39x faster: 3 fewer kernels, 2.9x fewer DRAM bytes");
  EXPECT_EQ(comparison_verdict(pair(180e3, 250e3, 2, 5), std::nullopt, std::nullopt),
            "B is 1.39x slower: 3 more kernels");
  EXPECT_EQ(comparison_verdict(pair(100e3, 100e3, 4, 4), std::nullopt, std::nullopt),
            "A and B take the same GPU time");
}

}  // namespace
}  // namespace fusionscope::analysis
