// Picks the Hopper GEMM's configuration for a shape by timing the candidates on the device.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

#include "cuda_check.h"
#include "gpu_delay.h"
#include "hopper_gemm.h"

namespace fusionscope::kernels::detail {

std::vector<HopperGemmConfig> hopper_gemm_candidates(Activation act, bool past_l2) {
  // The first is the default, which the tuner leaves only for a clearly faster one. K serpentine
  // everywhere: it cut the DRAM bytes of the Llama-width GEMMs by 4-30% and never cost time.
  // The cooperative ones load A (the rows a group of tiles keeps revisiting) evict-last: 5-7%
  // fewer DRAM bytes again and 0.3-4% less time under the power cap, in every comparison.
  using S = HopperSchedule;
  constexpr L2Hint kLast = L2Hint::kEvictLast;
  std::vector<HopperGemmConfig> c = {
      {.schedule = S::kCooperative,
       .cluster = 2,
       .group_m = 8,
       .k_serpentine = true,
       .hint_a = kLast},
      {.schedule = S::kCooperative,
       .cluster = 2,
       .group_m = 16,
       .k_serpentine = true,
       .hint_a = kLast},
      {.schedule = S::kCooperative,
       .cluster = 1,
       .group_m = 16,
       .k_serpentine = true,
       .hint_a = kLast},
      {.schedule = S::kPingPong, .cluster = 2, .group_m = 16, .k_serpentine = true},
      {.schedule = S::kPingPong, .cluster = 1, .group_m = 16, .k_serpentine = true}};
  // A plain product a few 256-wide tiles across (the down projection, 768 to 4096 wide) leaves
  // a last wave of tiles that fills a fraction of the SMs; narrower tiles even it out. At
  // 8192 x 3072 -> 768: 71.6 us with 256-wide tiles, 55.5 / 54.3 with 192 (cluster 2 / 1), 63.5
  // with 128; cuBLASLt 53.9.
  // A gated product of few tiles gains from 128-wide ones the same way: 1024 x 768 -> 2 x 3072
  // took 27.9 us with 256-wide tiles, 23.6 with 128 (cluster 2). Where the 256-wide tiles fill
  // the SMs, 128-wide ones lost 5-20% (2048 rows of the same 32.6 -> 34.3, 3000 rows level).
  // 192-wide gated tiles (96 output columns) fill whole waves where neither does: 1024 and 1536
  // rows of 4096 -> 2 x 3072 are 1.94 and 2.91 waves of them, 1.45 and 2.18 of 256-wide ones.
  // Gated 160- and 224-wide tiles fill whole waves at more shapes (at 1024 x 3584 -> 2 x 3400
  // the 256-wide tiles are 1.64 waves, the 224-wide ones 1.88; at 1280 x 4096 -> 2 x 3072 1.82
  // and, 160 wide, 2.95), where a partial wave costs up to 11% at the power cap.
  using Tiles = std::vector<std::pair<int, int>>;  // tile_n, cluster
  const Tiles narrow = act == Activation::kNone
                           ? Tiles{{192, 2}, {192, 1}, {128, 2}}
                           : Tiles{{128, 2}, {128, 1}, {192, 2}, {192, 1}, {160, 2}, {224, 2}};
  for (auto [tile_n, cluster] : narrow)
    c.push_back({.schedule = S::kCooperative,
                 .cluster = cluster,
                 .group_m = 8,
                 .k_serpentine = true,
                 .hint_a = kLast,
                 .tile_n = tile_n});
  // Gated 192 x 192 tiles (three consumer warpgroups), for rows in whole 192-row tiles: at 1536
  // x 4096 -> 2 x 3072, 125.0 us at the power cap against 127.8 with 128 x 192 tiles.
  if (act != Activation::kNone)
    for (int cluster : {2, 1})
      c.push_back({.schedule = S::kCooperative,
                   .cluster = cluster,
                   .group_m = 8,
                   .k_serpentine = true,
                   .hint_a = kLast,
                   .tile_n = 192,
                   .tile_m = 192});
  // The k-blocks of a last, partial wave of tiles shared out over the SMs (stream-K; the
  // candidate is timed only where HopperGemm::split() finds such a wave): at 1024 x 4096 -> 2 x
  // 3072 the 256-wide tiles are 1.45 waves, the 128-wide ones 2.9. At 1024 x 3584 -> 2 x 3400
  // (1.64 waves) it takes 8% fewer cycles at a fixed clock, and is level at the power cap.
  HopperGemmConfig split = c.front();
  split.split_tail = true;
  c.push_back(split);
  // Past the L2, tiles taken in order from a counter keep the ones in flight together, where
  // dealt in stride they drift apart and read A and B again from DRAM: at 16384 x 4096 -> 2 x
  // 14336 the gated kernel read 2.84-2.85 GB a pass against 2.92-3.27, in the same time.
  if (past_l2) {
    HopperGemmConfig dynamic = c.front();
    dynamic.dynamic_tiles = true;
    c.insert(c.begin(), dynamic);
  }
  return c;
}

bool operands_exceed_l2(uint64_t rows, uint64_t n, uint64_t k, int device) {
  int l2 = 0;
  if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) != cudaSuccess || l2 <= 0)
    return false;
  return (rows + n) * k * 2 > static_cast<uint64_t>(l2);
}

// Longer than the host takes to submit two events and one launch, with room for a profiler's
// interception of the launch.
constexpr uint32_t kSubmitCoverUs = 500;

double best_launch_us(const std::function<void(cudaStream_t)>& f, cudaStream_t stream,
                      int launches) {
  cudaEvent_t start = nullptr, stop = nullptr;
  FS_CUDA(cudaEventCreate(&start));
  FS_CUDA(cudaEventCreate(&stop));
  double best = std::numeric_limits<double>::infinity();
  try {
    f(stream);  // warm-up: module load, descriptors
    for (int i = 0; i < launches; ++i) {
      // Without it, where submitting f takes the host longer than the kernel before it runs
      // (a profiler intercepting every launch, say), the start event fires on an idle GPU and
      // the submission is timed as if it were f's: the choice would depend on the host.
      launch_gpu_delay(kSubmitCoverUs, stream);
      FS_CUDA(cudaEventRecord(start, stream));
      f(stream);
      FS_CUDA(cudaEventRecord(stop, stream));
      FS_CUDA(cudaEventSynchronize(stop));
      float ms = 0;
      FS_CUDA(cudaEventElapsedTime(&ms, start, stop));
      best = std::min(best, static_cast<double>(ms) * 1e3);
    }
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best;
}

size_t pick_candidate(const std::vector<double>& median_us, double clearly_faster) {
  size_t pick = 0;
  for (size_t i = 1; i < median_us.size(); ++i)
    if (median_us[i] < clearly_faster * median_us[0] && median_us[i] < median_us[pick]) pick = i;
  return pick;
}

HopperTuning tune_hopper_gemm(DType dtype, Activation act, uint64_t rows, uint64_t n, uint64_t k,
                              const void* b, const void* a, void* out, int device,
                              cudaStream_t stream,
                              const std::function<void(cudaStream_t)>& reference) {
  using Key = std::tuple<int, int, int, uint64_t, uint64_t, uint64_t, bool>;
  static std::mutex mutex;
  static std::map<Key, HopperTuning> memo;
  const Key key{device, static_cast<int>(dtype),     static_cast<int>(act), rows, n,
                k,      static_cast<bool>(reference)};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  // Rounds over all candidates rather than one candidate at a time, so that a GPU warming up
  // (and clocking down) during the measurement does not favour the first ones; medians over the
  // rounds, and the default (the first candidate) stays unless another is clearly faster, so
  // that the clock's noise does not pick a worse configuration.
  constexpr int kRounds = 5;
  constexpr double kClearlyFaster = 0.98;
  std::vector<HopperGemmConfig> candidates;
  std::vector<std::unique_ptr<HopperGemm>> gemms;
  const bool past_l2 = operands_exceed_l2(rows, n, k, device);
  for (const auto& c : hopper_gemm_candidates(act, past_l2)) {
    auto g = std::make_unique<HopperGemm>(dtype, act, rows, n, k, b, c, device);
    if (c.split_tail && g->split() < 2) continue;  // the same kernel as the one it splits
    candidates.push_back(c);
    gemms.push_back(std::move(g));
  }
  // A gated product's default in clusters of 2 x 2 (A multicast along N too: a quarter fewer L2
  // bytes a FLOP), first, so the default, where they take no more waves of tiles than pairs do
  // though only 30 fit on 132 SMs: the idle SMs then cost no round, and at the power cap the
  // lighter L2 load pays. On an H200, 1280 x 4096 -> 2 x 3072 (2 waves either way) took 98.5 us
  // against 100.3 at the cap; the pass beside PyTorch, 2560 rows 2% faster than with 192-wide
  // tiles, 1280 rows level (docs/kernels.md).
  if (act != Activation::kNone) {
    HopperGemmConfig quad = default_hopper_config();
    quad.cluster_n = 2;
    std::unique_ptr<HopperGemm> g;
    try {
      g = std::make_unique<HopperGemm>(dtype, act, rows, n, k, b, quad, device);
    } catch (const CudaError&) {  // no cluster of 4 fits (a small MIG slice, say)
    }
    const HopperGemm& pair = *gemms[past_l2 ? 1 : 0];  // the static default
    if (g && g->waves() <= pair.waves()) {
      candidates.insert(candidates.begin(), quad);
      gemms.insert(gemms.begin(), std::move(g));
    }
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  std::vector<std::vector<double>> us(candidates.size());
  std::vector<double> reference_rounds_us;
  for (auto& g : gemms) g->run(a, out, stream);  // warm-up: module load, descriptors
  for (int round = 0; round < kRounds; ++round) {
    for (size_t i = 0; i < gemms.size(); ++i)
      us[i].push_back(best_launch_us([&](cudaStream_t s) { gemms[i]->run(a, out, s); }, stream, 1));
    if (reference) reference_rounds_us.push_back(best_launch_us(reference, stream, 1));
  }
  std::vector<double> median_us;
  for (const auto& v : us) median_us.push_back(median(v));
  const double reference_us = reference ? median(reference_rounds_us) : 0;
  const size_t pick = pick_candidate(median_us, kClearlyFaster);
  const HopperTuning best{candidates[pick], median_us[pick], reference_us};
  std::lock_guard<std::mutex> lock(mutex);
  memo[key] = best;
  return best;
}

}  // namespace fusionscope::kernels::detail
