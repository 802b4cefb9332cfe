// The Hopper GEMM tuner's rule (hopper_gemm.h): the default stays unless another candidate is
// clearly faster, so that the clock's noise between launches does not pick a worse one.
#include <gtest/gtest.h>

#include <vector>

#include "hopper_gemm.h"

namespace fd = fusionscope::kernels::detail;

TEST(HopperTuning, TheDefaultStaysUnlessAnotherIsClearlyFaster) {
  EXPECT_EQ(fd::pick_candidate({100.0, 99.0, 98.5}, 0.98), 0u);  // 1.5% is noise
  EXPECT_EQ(fd::pick_candidate({100.0, 97.0, 99.0}, 0.98), 1u);
  EXPECT_EQ(fd::pick_candidate({100.0, 97.0, 90.0, 95.0}, 0.98), 2u);  // the fastest clear win
  EXPECT_EQ(fd::pick_candidate({100.0, 120.0, 150.0}, 0.98), 0u);
  EXPECT_EQ(fd::pick_candidate({100.0}, 0.98), 0u);
}

TEST(HopperTuning, TheDefaultIsTheFirstCandidate) {
  const auto c = fd::hopper_gemm_candidates(fusionscope::kernels::Activation::kSilu);
  ASSERT_FALSE(c.empty());
  const fd::HopperGemmConfig d = fd::default_hopper_config();
  EXPECT_EQ(d.schedule, c.front().schedule);
  EXPECT_EQ(d.cluster, c.front().cluster);
  EXPECT_EQ(d.group_m, c.front().group_m);
  EXPECT_EQ(d.k_serpentine, c.front().k_serpentine);
  EXPECT_EQ(d.hint_a, c.front().hint_a);
  EXPECT_EQ(d.tile_n, c.front().tile_n);
  const auto plain = fd::hopper_gemm_candidates(fusionscope::kernels::Activation::kNone);
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(plain.front().tile_n, d.tile_n);
  for (const auto& g : c) EXPECT_NE(g.tile_n, 192) << "192-wide tiles are plain only";
  for (const auto& g : fd::hopper_gemm_candidates(fusionscope::kernels::Activation::kSilu, true))
    if (g.dynamic_tiles) {  // where the kernel takes them
      EXPECT_EQ(g.schedule, fd::HopperSchedule::kCooperative);
      EXPECT_EQ(g.cluster, 2);
      EXPECT_EQ(g.cluster_n, 1);
    }
}

TEST(HopperTuning, PastTheL2TheDefaultTakesItsTilesInOrder) {
  using fusionscope::kernels::Activation;
  for (Activation act : {Activation::kSilu, Activation::kNone}) {
    const auto in_l2 = fd::hopper_gemm_candidates(act);
    const auto past = fd::hopper_gemm_candidates(act, true);
    ASSERT_EQ(past.size(), in_l2.size() + 1);
    EXPECT_TRUE(past.front().dynamic_tiles);
    EXPECT_EQ(fd::to_string(past[1]), fd::to_string(in_l2.front()));  // the static one next
    fd::HopperGemmConfig dynamic = in_l2.front();
    dynamic.dynamic_tiles = true;
    EXPECT_EQ(fd::to_string(past.front()), fd::to_string(dynamic));
    for (const auto& g : in_l2) EXPECT_FALSE(g.dynamic_tiles);
  }
}
