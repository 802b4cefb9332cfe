// The Hopper (sm_90a) GEMM behind the gated-gemm variant: y = epilogue(a[rows, k] b[n, k]^T).
// Two epilogues: gated (b is the gate/up weight interleaved in groups of 8 rows, the output is
// act(g) * u, [rows, n / 2]) and plain (the output is the product itself, [rows, n]; the down
// projection). Persistent CTAs walk a grouped tile order; a producer warpgroup streams TMA loads
// through an mbarrier ring (multicast across a cluster of 2 CTAs); consumer warpgroups issue
// wgmma m64n256k16 and store through shared memory with TMA.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels::detail {

enum class HopperSchedule : uint8_t {
  // Both consumer warpgroups share one 128 x 256 tile (64 rows each): the fewest L2 bytes per
  // FLOP; the epilogue's TMA store overlaps the next tile, its arithmetic does not.
  kCooperative,
  // Each consumer warpgroup owns its own 64 x 256 tile; while one runs its epilogue the other
  // keeps the tensor cores busy.
  kPingPong,
};

enum class L2Hint : uint8_t { kNormal, kEvictFirst, kEvictLast };

struct HopperGemmConfig {
  HopperSchedule schedule = HopperSchedule::kCooperative;
  int cluster = 2;    // CTAs along M sharing each B tile through TMA multicast: 1 or 2
  int group_m = 16;   // tile order: down this many cluster-rows of tiles, then the next column
  int cluster_n = 1;  // CTAs along N sharing each A tile through TMA multicast: 1 or 2
  // Tile order along N instead: across group_m columns of tiles, then the next cluster-row.
  bool raster_n = false;
  // Each CTA walks K forward on one tile and backward on the next, so the k-blocks it read last
  // are the first the next wave reuses, while they are still in L2.
  bool k_serpentine = false;
  // L2 eviction priority of the TMA loads of A and of B.
  L2Hint hint_a = L2Hint::kNormal;
  L2Hint hint_b = L2Hint::kNormal;
  // Cooperative: the second consumer warpgroup starts this many k-blocks behind the first and
  // stays behind, so one's epilogue runs while the other still issues MMAs (0: in step).
  int stagger = 0;
  // Cooperative, clusters of 2 along M: each cluster's first tile dealt, the rest taken in tile
  // order from a counter, so that the tiles in flight stay a compact block of the order (dealt
  // in stride, the clusters drift apart along it). The first candidate where A and B exceed
  // the L2: see docs/kernels.md.
  bool dynamic_tiles = false;
  // Columns of the product a CTA's tile covers: 256, or for the cooperative schedule 128 or 192,
  // so that an output a few tiles wide still spreads over every SM (a gated tile gives half as
  // many output columns); gated cooperative tiles also 160 or 224, so that more shapes' tiles
  // come out in whole waves (whole tiles dealt in stride).
  int tile_n = 256;
  // Rows of a cooperative tile: 128 (two consumer warpgroups), or 192 (three, 96 accumulators
  // each) for gated 192-wide tiles: with B multicast, as few L2 bytes per FLOP as 128 x 256 and
  // 14% fewer than 128 x 192 (at 1536 x 4096 -> 2 x 3072, 2% faster than 128 x 192 at the cap).
  int tile_m = 128;
  // Cooperative, tiles dealt in stride, no stagger: the k-blocks of a last, partial wave's
  // tiles shared out in equal contiguous runs over the clusters (stream-K; plan_split_tail),
  // the pieces' sums added by the piece that starts each tile, through a workspace in global
  // memory.
  bool split_tail = false;
};

// How a split tail shares out `tiles` (in clusters' tiles) over at most `max_clusters` clusters
// with `kblocks` 64-deep k-blocks a tile: the first dp_tiles whole, in whole waves, dealt in
// stride; then the k-blocks of the others, tile after tile (`units` of them), in equal
// contiguous runs, one a cluster, over the first `sk_clusters` clusters. A last wave of at most
// half the clusters has each tile in `split` equal pieces (up to kMaxSplit, of at least
// kMinSplitKblocks); one of more than half and at most 3/4 of them, runs of more than half a
// tile on every cluster, each across a tile's end (split: the most pieces of a tile). split == 1
// (dp_tiles == tiles, sk_clusters == 0): nothing gains from splitting (whole waves, a last wave
// of more than 3/4 of the clusters, or too few k-blocks).
struct SplitTail {
  uint64_t dp_tiles = 0;
  uint64_t units = 0;
  uint32_t sk_clusters = 0;
  uint32_t split = 1;
  uint64_t clusters = 0;
};
inline constexpr uint32_t kMaxSplit = 4;
inline constexpr uint32_t kMinSplitKblocks = 4;
SplitTail plan_split_tail(uint64_t tiles, uint64_t max_clusters, uint32_t kblocks);

std::string to_string(const HopperGemmConfig& c);

// The configuration used when none was measured: cooperative, cluster 2, group 8, K serpentine,
// A loaded evict-last.
HopperGemmConfig default_hopper_config();

// The candidates tune_hopper_gemm() times for a gated (act) or plain (kNone) product; the
// first is the same for both, unless past_l2 (see operands_exceed_l2()): then the first is the
// same with dynamic tiles.
std::vector<HopperGemmConfig> hopper_gemm_candidates(Activation act, bool past_l2 = false);

// True when A [rows, k] and B [n, k] (16-bit) together are more than the device's L2 holds, so
// that how far the tiles in flight spread along the tile order decides the DRAM bytes.
bool operands_exceed_l2(uint64_t rows, uint64_t n, uint64_t k, int device);

// True when the binary holds the sm_90a kernels and the device runs them.
bool hopper_gemm_available(int device);

class HopperGemm {
 public:
  // act == kNone: plain output [rows, n]; otherwise gated output [rows, n / 2] (n even; b
  // interleaved by launch_interleave_gate_up). dtype fp16 or bf16; n, k multiples of 8.
  HopperGemm(DType dtype, Activation act, uint64_t rows, uint64_t n, uint64_t k, const void* b,
             HopperGemmConfig config, int device);
  ~HopperGemm();
  HopperGemm(const HopperGemm&) = delete;
  HopperGemm& operator=(const HopperGemm&) = delete;

  void run(const void* a, void* out, cudaStream_t stream);
  const HopperGemmConfig& config() const { return config_; }
  unsigned grid() const { return grid_; }
  // Rounds of whole tiles on as many clusters as fit at once, a partial last round counted whole.
  uint64_t waves() const { return waves_; }
  // Most pieces a tail tile is cut in (1: no tile split; see HopperGemmConfig::split_tail).
  uint32_t split() const;

 private:
  struct Maps;
  DType dtype_;
  Activation act_;
  uint64_t rows_, n_, k_;
  HopperGemmConfig config_;
  unsigned grid_ = 0;
  uint64_t waves_ = 0;
  std::unique_ptr<Maps> maps_;  // TMA descriptors: b, and one per a / out buffer seen
};

struct HopperTuning {
  HopperGemmConfig config;
  double us = 0;            // median time of one launch of that configuration
  double reference_us = 0;  // the reference's median, timed in the same rounds (0: none given)
};

// The candidate the tuner takes, given each one's median time (the default first): the default
// unless another is faster than `clearly_faster` times it, then the fastest of those.
size_t pick_candidate(const std::vector<double>& median_us, double clearly_faster);

// Times every candidate on these buffers (out is overwritten) and returns the fastest by median
// over interleaved rounds; the default (first) candidate unless another is 2% faster. For a
// gated product the default is in clusters of 2 x 2 where they take no more waves of tiles than
// the candidates' default in pairs (see hopper_gemm_tune.cpp), else the candidates' first. A
// `reference` (another kernel for the same product, e.g. cuBLASLt's) is timed in the same rounds,
// so that the two are compared under the same clock. The result is remembered per (device,
// dtype, act, rows, n, k, reference or not) for the life of the process, so repeated runs of a
// shape measure once. Runs on `stream` and synchronises it; call outside graph capture.
HopperTuning tune_hopper_gemm(DType dtype, Activation act, uint64_t rows, uint64_t n, uint64_t k,
                              const void* b, const void* a, void* out, int device,
                              cudaStream_t stream,
                              const std::function<void(cudaStream_t)>& reference = {});

// Best of a few launches of f (after one warm-up), in microseconds of the GPU's time: each
// launch waits behind a GPU-side delay, so the host's cost of submitting it is not counted.
double best_launch_us(const std::function<void(cudaStream_t)>& f, cudaStream_t stream,
                      int launches = 3);

}  // namespace fusionscope::kernels::detail
