// The Hopper GEMM in every configuration the tuner may pick (both schedules, clusters of 1 and 2,
// several tile orders) on shapes that fit no tile, against the fp32 reference: fresh random
// inputs, the output poisoned with NaN first (label gpu; skips off sm_90).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <initializer_list>

#include "buffers.h"
#include "cuda_check.h"
#include "device_buffer.h"
#include "gpu_guard.h"
#include "hopper_gemm.h"
#include "pointwise.h"
#include "reference.h"

namespace fk = fusionscope::kernels;
namespace fd = fusionscope::kernels::detail;

namespace {

struct Shape {
  bool gated;
  uint64_t rows, k, n;  // gated: n is hidden (the GEMM is 2n wide)
  fk::DType dtype;
  fk::Activation act;
};

// ||out - ref|| / ||ref|| over the whole output; non_finite counts NaN/Inf (unwritten) outputs.
double relative_error(const Shape& s, const fd::HopperGemmConfig& cfg, uint64_t seed,
                      uint64_t& non_finite, uint32_t* split = nullptr) {
  const uint64_t wide = s.gated ? 2 * s.n : s.n;
  fd::DeviceBuffer x(s.rows * s.k * 2), w(wide * s.k * 2), out(s.rows * s.n * 2);
  fd::DeviceBuffer wg(s.n * s.k * 2), wu(s.n * s.k * 2);
  fd::DeviceBuffer ref(s.rows * s.n * 4), ref2(s.rows * s.n * 4);
  fd::DeviceBuffer partials(fd::kCheckBlocks * 5 * sizeof(double));
  const float wb = std::sqrt(6.f / static_cast<float>(s.k));
  fd::launch_fill_uniform(x.get(), s.rows * s.k, s.dtype, -1.f, 1.f, seed, 1, nullptr);
  if (s.gated) {
    fd::launch_fill_uniform(wg.get(), s.n * s.k, s.dtype, -wb, wb, seed, 2, nullptr);
    fd::launch_fill_uniform(wu.get(), s.n * s.k, s.dtype, -wb, wb, seed, 3, nullptr);
    fd::launch_interleave_gate_up(wg.get(), wu.get(), w.get(), s.n, s.k, s.act, s.dtype, nullptr);
    fd::launch_reference_linear(x.get(), s.dtype, wg.get(), nullptr, s.dtype, ref.as<float>(),
                                s.rows, s.n, s.k, fk::Activation::kNone, nullptr);
    fd::launch_reference_linear(x.get(), s.dtype, wu.get(), nullptr, s.dtype, ref2.as<float>(),
                                s.rows, s.n, s.k, fk::Activation::kNone, nullptr);
    fd::launch_reference_act_mul(ref.as<float>(), ref2.as<float>(), s.rows * s.n, s.act, nullptr);
  } else {
    fd::launch_fill_uniform(w.get(), s.n * s.k, s.dtype, -wb, wb, seed, 4, nullptr);
    fd::launch_reference_linear(x.get(), s.dtype, w.get(), nullptr, s.dtype, ref.as<float>(),
                                s.rows, s.n, s.k, fk::Activation::kNone, nullptr);
  }
  FS_CUDA(cudaMemset(out.get(), 0xFF, s.rows * s.n * 2));
  fd::HopperGemm g(s.dtype, s.gated ? s.act : fk::Activation::kNone, s.rows, wide, s.k, w.get(),
                   cfg, 0);
  if (split) *split = g.split();
  // Twice, the output poisoned again in between: what one launch leaves behind (the dynamic
  // tiles' counter, the split tail's counts) must serve the next.
  g.run(x.get(), out.get(), nullptr);
  FS_CUDA(cudaMemset(out.get(), 0xFF, s.rows * s.n * 2));
  g.run(x.get(), out.get(), nullptr);
  FS_CUDA(cudaGetLastError());
  fd::launch_compare(out.get(), s.dtype, ref.as<float>(), s.rows * s.n, partials.as<double>(),
                     nullptr);
  const fd::ErrorSums e = fd::finish_compare(partials.as<double>(), nullptr);
  non_finite = e.non_finite;
  return std::sqrt(e.sum_sq_error / e.sum_sq_reference);
}

// Each configuration is refused when the GEMM is made, with the reason.
void expect_refused(std::initializer_list<fd::HopperGemmConfig> configs) {
  fd::DeviceBuffer w(512 * 128 * 2);
  for (const fd::HopperGemmConfig& cfg : configs)
    EXPECT_THROW(
        fd::HopperGemm(fk::DType::kBf16, fk::Activation::kGeluTanh, 256, 512, 128, w.get(), cfg, 0),
        fd::CudaError)
        << fd::to_string(cfg);
}

TEST(HopperGemmGpu, EveryConfigurationOnOddShapes) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (!fd::hopper_gemm_available(0)) GTEST_SKIP() << "needs an sm_90 GPU and sm_90a code";
  const Shape shapes[] = {
      {true, 300, 200, 328, fk::DType::kBf16, fk::Activation::kGeluTanh},
      {true, 1000, 776, 3000, fk::DType::kFp16, fk::Activation::kSilu},  // several tiles per CTA
      {true, 136, 64, 136, fk::DType::kBf16, fk::Activation::kRelu},
      // One k-block a tile and several tiles a CTA: each tile's stores wait for the next tile.
      {true, 2000, 64, 3000, fk::DType::kBf16, fk::Activation::kGeluTanh},
      {false, 300, 328, 200, fk::DType::kFp16, fk::Activation::kNone},
      {false, 1000, 3000, 776, fk::DType::kBf16, fk::Activation::kNone},
      // A last cluster-row of at most 128 rows, whose pairs work side by side: alone (100
      // rows), and after four whole ones with an odd number of column tiles (23 and 3).
      {true, 100, 264, 1000, fk::DType::kFp16, fk::Activation::kSilu},
      {true, 1100, 776, 2904, fk::DType::kBf16, fk::Activation::kGeluTanh},
      {false, 1100, 3000, 600, fk::DType::kFp16, fk::Activation::kNone},
      // Warpgroups whose 64 rows all lie past the last row: the second of a side-by-side pair's
      // (1064 rows) and of a cluster's second CTA (1200).
      {true, 1064, 520, 1304, fk::DType::kBf16, fk::Activation::kSilu},
      {false, 1200, 1000, 776, fk::DType::kBf16, fk::Activation::kNone},
  };
  uint64_t seed = 7;
  for (const auto& s : shapes) {
    // The tuner's candidates (past the L2 too) and every tile width in a cluster of 1 and of 2.
    auto configs = fd::hopper_gemm_candidates(s.act, true);
    // A cluster along N (A multicast, tiles of 128 rows) at every tile width.
    for (int tile_n : {128, 160, 192, 224, 256})
      if (s.gated || (tile_n != 160 && tile_n != 224))
        configs.push_back({.cluster = 1,
                           .group_m = 3,
                           .cluster_n = 2,
                           .k_serpentine = true,
                           .hint_a = fd::L2Hint::kEvictLast,
                           .tile_n = tile_n});
    for (int tile_n : {128, 160, 192, 224})
      for (int cluster : {1, 2})
        if (s.gated || (tile_n != 160 && tile_n != 224))
          configs.push_back(
              {.cluster = cluster, .group_m = 3, .k_serpentine = cluster == 1, .tile_n = tile_n});
    // The default in clusters of 2 x 2, which the tuner makes the gated default where it fills
    // as few waves as pairs.
    if (s.gated) {
      fd::HopperGemmConfig quad = fd::default_hopper_config();
      quad.cluster_n = 2;
      configs.push_back(quad);
    }
    // Dynamic tiles, at every tile width.
    for (int tile_n : {128, 192, 256})
      configs.push_back({.cluster = 2,
                         .group_m = 2,
                         .k_serpentine = tile_n != 128,
                         .dynamic_tiles = true,
                         .tile_n = tile_n});
    // 192 x 192 gated tiles (three consumer warpgroups) beyond the tuner's: dynamic tiles, and
    // a cluster of 1 walking along N.
    if (s.gated) {
      configs.push_back(
          {.cluster = 2, .group_m = 2, .dynamic_tiles = true, .tile_n = 192, .tile_m = 192});
      configs.push_back(
          {.cluster = 1, .group_m = 3, .raster_n = true, .tile_n = 192, .tile_m = 192});
    }
    for (const auto& cfg : configs) {
      uint64_t bad = 0;
      const double rel = relative_error(s, cfg, ++seed, bad);
      std::printf("  %s %llu x %llu -> %llu %s: %s rel %.2e\n", s.gated ? "gated" : "plain",
                  static_cast<unsigned long long>(s.rows), static_cast<unsigned long long>(s.k),
                  static_cast<unsigned long long>(s.n), std::string(fk::to_string(s.dtype)).c_str(),
                  fd::to_string(cfg).c_str(), rel);
      EXPECT_EQ(bad, 0u) << fd::to_string(cfg);
      EXPECT_LE(rel, fk::tolerance(s.dtype)) << fd::to_string(cfg);
    }
  }
}

// Shapes whose last wave of tiles fills a quarter of the clusters (a tile in up to 4 pieces
// along K), two thirds of them (each cluster's run ends one tile and starts the next), or whose
// tiles do not fill one wave; odd rows, a k that ends mid-block, and a last column of tiles
// that the output only partly covers.
TEST(HopperGemmGpu, SplitTailOnAPartialWave) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (!fd::hopper_gemm_available(0)) GTEST_SKIP() << "needs an sm_90 GPU and sm_90a code";
  int sms = 0;
  FS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  uint64_t seed = 101;
  for (int cluster : {1, 2}) {
    // At most sms / cluster clusters fit (fewer where the GPCs leave some SMs out of clusters);
    // a quarter more tiles than that leaves a partial last wave either way.
    const uint64_t clusters = static_cast<uint64_t>(sms / cluster);
    // Tiles along N, one cluster-row of them.
    for (uint64_t cols : {clusters + clusters / 4, clusters + 2 * clusters / 3, clusters / 3}) {
      const fd::HopperGemmConfig cfg{.cluster = cluster,
                                     .group_m = 8,
                                     .k_serpentine = true,
                                     .hint_a = fd::L2Hint::kEvictLast,
                                     .split_tail = true};
      const uint64_t rows = 128 * static_cast<uint64_t>(cluster) - 37;
      const Shape shapes[] = {
          {true, rows, 1000, cols * 128 - 40, fk::DType::kBf16, fk::Activation::kGeluTanh},
          {true, rows, 4096, cols * 128, fk::DType::kFp16, fk::Activation::kSilu},
          {false, rows, 776, cols * 256 - 8, fk::DType::kFp16, fk::Activation::kNone},
      };
      for (const auto& s : shapes) {
        uint64_t bad = 0;
        uint32_t split = 0;
        const double rel = relative_error(s, cfg, ++seed, bad, &split);
        std::printf("  %s %llu x %llu -> %llu, cluster %d: split %u, rel %.2e\n",
                    s.gated ? "gated" : "plain", static_cast<unsigned long long>(s.rows),
                    static_cast<unsigned long long>(s.k), static_cast<unsigned long long>(s.n),
                    cluster, split, rel);
        EXPECT_GE(split, 2u) << "the last wave was meant to split";
        EXPECT_EQ(bad, 0u);
        EXPECT_LE(rel, fk::tolerance(s.dtype));
      }
    }
  }
}

TEST(HopperGemmGpu, SplitTailOnlyCooperativeInStride) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (!fd::hopper_gemm_available(0)) GTEST_SKIP() << "needs an sm_90 GPU and sm_90a code";
  expect_refused({{.schedule = fd::HopperSchedule::kPingPong, .split_tail = true},
                  {.dynamic_tiles = true, .split_tail = true},
                  {.stagger = 2, .split_tail = true}});
}

TEST(HopperGemmGpu, TilesOf160And224WideOnlyGatedWholeInStride) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (!fd::hopper_gemm_available(0)) GTEST_SKIP() << "needs an sm_90 GPU and sm_90a code";
  expect_refused({{.schedule = fd::HopperSchedule::kPingPong, .tile_n = 160},
                  {.tile_n = 224, .split_tail = true},
                  {.cluster = 2, .dynamic_tiles = true, .tile_n = 160},
                  {.tile_n = 224, .tile_m = 192},
                  {.tile_n = 176}});
  fd::DeviceBuffer w(512 * 128 * 2);
  for (int tile_n : {160, 224})
    EXPECT_THROW(fd::HopperGemm(fk::DType::kBf16, fk::Activation::kNone, 256, 512, 128, w.get(),
                                {.tile_n = tile_n}, 0),
                 fd::CudaError);
}

TEST(HopperGemmGpu, TilesOf192RowsOnlyGatedCooperative192Wide) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (!fd::hopper_gemm_available(0)) GTEST_SKIP() << "needs an sm_90 GPU and sm_90a code";
  expect_refused({{.schedule = fd::HopperSchedule::kPingPong, .tile_m = 192},
                  {.tile_n = 256, .tile_m = 192},
                  {.tile_n = 128, .tile_m = 192},
                  {.cluster_n = 2, .tile_n = 192, .tile_m = 192},
                  {.stagger = 2, .tile_n = 192, .tile_m = 192},
                  {.tile_n = 192, .tile_m = 192, .split_tail = true},
                  {.tile_n = 192, .tile_m = 256}});
  fd::DeviceBuffer w(512 * 128 * 2);
  EXPECT_THROW(fd::HopperGemm(fk::DType::kBf16, fk::Activation::kNone, 256, 512, 128, w.get(),
                              {.tile_n = 192, .tile_m = 192}, 0),
               fd::CudaError);
}

TEST(HopperGemmGpu, DynamicTilesOnlyCooperativeInClustersOfTwo) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (!fd::hopper_gemm_available(0)) GTEST_SKIP() << "needs an sm_90 GPU and sm_90a code";
  expect_refused({{.schedule = fd::HopperSchedule::kPingPong, .cluster = 2, .dynamic_tiles = true},
                  {.cluster = 1, .dynamic_tiles = true},
                  {.cluster = 2, .cluster_n = 2, .dynamic_tiles = true}});
}

// Waves: rounds of whole tiles over the clusters that fit, as the tuner compares pairs and 2 x 2.
TEST(HopperGemmGpu, WavesAreRoundsOfTilesOnTheClustersThatFit) {
  FUSIONSCOPE_REQUIRE_GPU();
  if (!fd::hopper_gemm_available(0)) GTEST_SKIP() << "needs an sm_90 GPU and sm_90a code";
  fd::DeviceBuffer w(2 * 3072 * 4096 * 2);
  fd::HopperGemmConfig pair = fd::default_hopper_config(), quad = pair;
  quad.cluster_n = 2;
  auto waves = [&](uint64_t rows, uint64_t n, uint64_t k, const fd::HopperGemmConfig& c,
                   uint64_t cluster_tiles) {
    const fd::HopperGemm g(fk::DType::kBf16, fk::Activation::kSilu, rows, n, k, w.get(), c, 0);
    const uint64_t clusters = g.grid() / static_cast<unsigned>(c.cluster * c.cluster_n);
    EXPECT_EQ(g.waves(), (cluster_tiles + clusters - 1) / clusters) << fd::to_string(c);
    return g.waves();
  };
  // The post's GeGLU: 32 x 24 pairs of 128 x 256 tiles, 32 x 12 quads.
  const uint64_t post_pairs = waves(8192, 2 * 3072, 768, pair, 32 * 24);
  const uint64_t post_quads = waves(8192, 2 * 3072, 768, quad, 32 * 12);
  // 1280 x 4096 -> 2 x 3072: 5 x 24 pairs, 5 x 12 quads; 2 waves each on 132 SMs.
  const uint64_t pairs = waves(1280, 2 * 3072, 4096, pair, 5 * 24);
  const uint64_t quads = waves(1280, 2 * 3072, 4096, quad, 5 * 12);
  int sms = 0;
  FS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (sms == 132) {  // an H100 or H200 SXM: 66 pairs and 30 quads fit
    EXPECT_EQ(post_pairs, 12u);
    EXPECT_EQ(post_quads, 13u);
    EXPECT_EQ(pairs, 2u);
    EXPECT_EQ(quads, 2u);
  }
  // Fewer tiles than clusters: one wave.
  EXPECT_EQ(waves(128, 2 * 256, 64, pair, 1), 1u);
}

TEST(HopperGemmGpu, OperandsPastTheL2) {
  FUSIONSCOPE_REQUIRE_GPU();
  int l2 = 0;
  FS_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  ASSERT_GT(l2, 0);
  // (rows + n) * k 16-bit values against the L2's bytes, either side of the edge.
  const uint64_t k = 1024, edge = static_cast<uint64_t>(l2) / (2 * k);
  EXPECT_FALSE(fd::operands_exceed_l2(edge - 8, 8, k, 0));
  EXPECT_TRUE(fd::operands_exceed_l2(edge, 8, k, 0));
  EXPECT_FALSE(fd::operands_exceed_l2(8192, 2 * 3072, 768, 0));    // the post's GeGLU
  EXPECT_TRUE(fd::operands_exceed_l2(16384, 2 * 14336, 4096, 0));  // Llama widths
}

}  // namespace
