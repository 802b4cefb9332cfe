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

TEST(HopperTuning, ASplitTailSharesAPartialWavesKBlocksOverTheClusters) {
  // 1024 x 4096 -> 2 x 3072 on 66 clusters: 96 tiles, 30 past the full wave, each in 2 pieces
  // of 32 k-blocks on 60 clusters.
  fd::SplitTail t = fd::plan_split_tail(96, 66, 64);
  EXPECT_EQ(t.dp_tiles, 66u);
  EXPECT_EQ(t.units, 30u * 64);
  EXPECT_EQ(t.sk_clusters, 60u);
  EXPECT_EQ(t.clusters, 66u);
  EXPECT_EQ(t.split, 2u);
  // A quarter wave: as many pieces as clusters allow, at most kMaxSplit.
  t = fd::plan_split_tail(66 + 16, 66, 64);
  EXPECT_EQ(t.sk_clusters, 64u);
  EXPECT_EQ(t.split, 4u);
  EXPECT_EQ(t.clusters, 66u);
  // Less than a wave: every tile split, on only the clusters the pieces need.
  t = fd::plan_split_tail(20, 66, 64);
  EXPECT_EQ(t.dp_tiles, 0u);
  EXPECT_EQ(t.split, 3u);
  EXPECT_EQ(t.sk_clusters, 60u);
  EXPECT_EQ(t.clusters, 60u);
  // Pieces of at least kMinSplitKblocks k-blocks.
  t = fd::plan_split_tail(66 + 10, 66, 9);
  EXPECT_EQ(t.split, 2u);
  EXPECT_EQ(t.sk_clusters, 20u);
  // 1024 x 3584 -> 2 x 3400: 108 tiles, a last wave of 42 (more than half): runs of 35-36
  // k-blocks on every cluster, each the end of one tile and the start of the next.
  t = fd::plan_split_tail(108, 66, 56);
  EXPECT_EQ(t.dp_tiles, 66u);
  EXPECT_EQ(t.units, 42u * 56);
  EXPECT_EQ(t.sk_clusters, 66u);
  EXPECT_EQ(t.split, 3u);
  // Nothing to gain: whole waves, a last wave more than 3/4 full, too few k-blocks.
  for (const auto& [tiles, kblocks] : {std::pair<uint64_t, uint32_t>{132, 64},
                                       {66 + 54, 64},
                                       {66, 64},
                                       {66 + 16, 7},
                                       {66 + 1, 4}}) {
    t = fd::plan_split_tail(tiles, 66, kblocks);
    EXPECT_EQ(t.split, 1u) << tiles << " tiles, " << kblocks << " k-blocks";
    EXPECT_EQ(t.dp_tiles, tiles);
    EXPECT_EQ(t.sk_clusters, 0u);
    EXPECT_EQ(t.clusters, std::min<uint64_t>(tiles, 66));
  }
  // Everywhere: at most kMaxSplit pieces a tile, runs of at least kMinSplitKblocks, more
  // clusters than tail tiles.
  for (uint64_t clusters : {1u, 7u, 60u, 66u, 132u})
    for (uint64_t tiles = 1; tiles < 400; tiles += 7)
      for (uint32_t kblocks : {1u, 4u, 9u, 12u, 56u, 64u, 224u}) {
        t = fd::plan_split_tail(tiles, clusters, kblocks);
        EXPECT_LE(t.split, fd::kMaxSplit);
        if (t.split > 1) {
          EXPECT_GT(t.sk_clusters, tiles - t.dp_tiles);
          EXPECT_LE(t.sk_clusters, clusters);
          EXPECT_EQ(t.units, (tiles - t.dp_tiles) * kblocks);
          EXPECT_GE(t.units / t.sk_clusters, fd::kMinSplitKblocks);
        }
      }
}

TEST(HopperTuning, TheSplitTailCandidateIsTheDefaultSplit) {
  using fusionscope::kernels::Activation;
  for (Activation act : {Activation::kGeluTanh, Activation::kNone}) {
    const auto c = fd::hopper_gemm_candidates(act);
    int splits = 0;
    for (const auto& g : c)
      if (g.split_tail) {
        ++splits;
        fd::HopperGemmConfig whole = g;
        whole.split_tail = false;
        EXPECT_EQ(fd::to_string(whole), fd::to_string(c.front()));
      }
    EXPECT_EQ(splits, 1);
    EXPECT_FALSE(c.front().split_tail);
  }
}
