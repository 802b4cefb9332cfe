// The Hopper GEMM (sm_90a) of hopper_gemm.h.
//
// 384 threads per CTA (512 for gated 192 x 192 tiles, with a third consumer warpgroup), one
// CTA per SM, persistent over a static tile schedule:
// - warpgroup 0 (producer, 40 registers): one thread issues TMA loads of A [BM x 64] and B
//   [256 x 64] k-blocks into a ring of shared-memory stages, each completing on a `full`
//   mbarrier. In a cluster of 2, the two CTAs work on vertically adjacent tiles of the same
//   columns: each loads half of B and multicasts it to both, halving B's L2 traffic.
// - warpgroups 1 and 2 (consumers, 232 registers; or 1 to 3, 152 registers, in a 192 x 192
//   tile): wgmma m64nNk16 from shared memory into N / 2 fp32 accumulators per thread (N = 256;
//   cooperative tiles may be 128 or 192 wide, for outputs too narrow to fill the SMs with
//   256-wide tiles), one k-block in flight; a stage is released on the `empty` mbarrier of every
//   CTA that received it. The epilogue (act(g) * u, or the plain product) goes to a per-warpgroup
//   staging buffer in the TMA boxes' swizzled layout and out through TMA stores, which run while
//   the next tile's main loop does. A gated cooperative tile's output pairs are held in
//   registers until the next tile's first two k-blocks are issued, and staged and stored under
//   those MMAs (deferred stores).
// Tiles are numbered down groups of `group_m` cluster-rows, column by column, so the CTAs in
// flight at once share a compact block of A rows and B columns that stays in L2; with K
// serpentine a CTA's odd tiles walk K backward, starting on the k-blocks the last wave read.
// Dealt in stride (tile cid, cid + clusters, ...), or, with dynamic tiles (cooperative, clusters
// of 2 along M), each cluster's first tile dealt and the rest taken in order from a counter by
// the cluster's first CTA, which hands each number to the other: the clusters then cannot drift
// apart along the order, and the tiles in flight stay one compact block.
// With a split tail, the tiles of a last wave that would fill at most half the clusters are each
// split along K into up to 4 parts, one a cluster: every part but the last writes its fp32 sums
// to a workspace and counts itself in the tile's flag; the last waits for the count, adds the
// sums and runs the epilogue (at 1024 x 4096 -> 2 x 3072 the 1.45 waves of tiles run as 1.5
// waves, not 2: 88.9 -> 75.6 us on the H100). Split kernels are built apart (kSplit).
#include <cuda.h>

#include <algorithm>

#include "cuda_check.h"
#include "device_buffer.h"
#include "element.cuh"
#include "hopper_gemm.h"
#include "sm90_ptx.cuh"
#include "tma_map.h"

namespace fusionscope::kernels::detail {
namespace {

constexpr int BK = 64;
// A producer warpgroup and kConsumers consumer warpgroups: 2, or 3 for 192-row cooperative tiles.
constexpr int threads_for(int consumers) {
  return 128 * (1 + consumers);
}
// Registers a consumer thread takes (setmaxnreg) once the producer has given up all but 40:
// the most that 128 x 40 + consumers x 128 x R leaves of the SM's 65536, a multiple of 8. (ptxas
// fits the three-consumer kernels in their launch bound's 128, 96 of them accumulators, with
// no spills.)
constexpr int consumer_registers(int consumers) {
  return consumers == 2 ? 232 : 152;
}
static_assert(128 * 40 + 2 * 128 * consumer_registers(2) <= 65536);
static_assert(128 * 40 + 3 * 128 * consumer_registers(3) <= 65536);
// Dynamic tiles: the ring of tile numbers the cluster's first CTA hands to the other (at least
// kStages deep: a number is overwritten only once the tile kStages later has its first stage).
constexpr uint32_t kTileRing = 8;

// kBN: the tile's columns (of the product; a gated tile gives kBN / 2 output columns);
// kConsumers: consumer warpgroups, 64 rows each in a cooperative tile.
// kPass: a whole gated MLP pass in one launch (see Params::pass_down_n), which adds a ring
// through which the producer announces each tile before it may wait on the tile's inputs.
template <bool kPingPong, bool kPlain, int kBN, int kConsumers = 2, bool kPass = false>
struct Layout {
  static_assert(kBN == 256 || (!kPingPong && (kBN == 128 || kBN == 192)),
                "256-wide tiles, or cooperative 128- or 192-wide ones");
  static_assert(kConsumers == 2 || (kConsumers == 3 && !kPingPong && kBN == 192 && !kPlain),
                "three consumers: gated cooperative 192 x 192 tiles (96 accumulators each)");
  // Rows a CTA loads per k-block.
  static constexpr int kTileRows = kPingPong ? 64 : 64 * kConsumers;
  static constexpr uint32_t kBytesA = kTileRows * BK * 2;
  static constexpr uint32_t kBytesB = kBN * BK * 2;
  // The output goes out in 64-row boxes of 64 columns, 128-byte-swizzled; a gated 192-wide tile's
  // 96 columns in boxes of 32, 64-byte-swizzled (whole boxes, none past the tile's columns).
  static constexpr int kOutCols = kPlain ? kBN : kBN / 2;
  static constexpr int kOutBoxCols = kOutCols % 64 == 0 ? 64 : 32;
  static constexpr int kOutBoxes = kOutCols / kOutBoxCols;
  static constexpr uint32_t kOutBoxBytes = 64 * kOutBoxCols * 2;
  static constexpr uint32_t kStagingPerWg = kOutBoxes * kOutBoxBytes;
  // As many stages as the rest of the 227 KiB leaves room for (3 to 6).
  // Per stage: its A and B, its two barriers and (dynamic tiles) the number of its tile; fixed:
  // the staging, the alignment, three barriers and the tile numbers' ring.
  static constexpr size_t kAnnounceBytes = kPass ? kTileRing * 12 + 8 : 0;
  static constexpr size_t kFixedBytes =
      kConsumers * kStagingPerWg + 1024 + 3 * 8 + kTileRing * 12 + kAnnounceBytes;
  static constexpr int kStages =
      static_cast<int>(std::min<size_t>(6, (232448 - kFixedBytes) / (kBytesA + kBytesB + 20)));
  static constexpr size_t kSmemBytes = size_t{kStages} * (kBytesA + kBytesB) +
                                       kConsumers * kStagingPerWg + (2 * kStages + 3) * 8 +
                                       kStages * 4 + kTileRing * 12 + kAnnounceBytes + 1024;
  static_assert(kStages <= int(kTileRing), "the tile numbers' ring is as deep as the stages");
  static_assert(kStages >= 3 && kSmemBytes <= 232448, "over the 227 KiB a block may have");
};

struct Params {
  uint32_t rows;      // rows of A and of the output
  uint32_t out_cols;  // columns of the output (n / 2 gated, n plain)
  uint32_t tiles_mc;  // cluster-rows of tiles
  // 1: the last cluster-row (of a pair along M) holds at most 128 rows; its CTAs work side by
  // side along N on those rows instead of one of them on rows past the end (see tile_coords).
  uint32_t ragged;
  uint32_t tiles_n;       // cluster-columns of tiles (cluster_n 256-wide columns each)
  uint32_t kblocks;       // 64-deep k-blocks
  uint32_t cluster;       // CTAs per cluster: cluster_m * cluster_n
  uint32_t cluster_m;     // CTAs along M (sharing B), 1 or 2
  uint32_t cluster_n;     // CTAs along N (sharing A), 1 or 2
  uint32_t group_m;       // tiles per group along the raster's minor direction
  uint32_t raster_n;      // 1: groups of columns walked row by row
  uint32_t k_serpentine;  // 1: odd tiles of a CTA walk K backward
  uint64_t policy_a;      // L2 cache policies of the TMA loads
  uint64_t policy_b;
  uint32_t stagger;  // cooperative: k-blocks the second consumer trails the first by
  // Dynamic tiles: tiles past the first of each CTA come from *counter (a wrapping increment
  // that is back at zero once a launch has made its `tiles` claims); null: dealt in stride.
  unsigned* counter;
  // Split tail (plan_split_tail): the tiles from dp_tiles on are each split along K into
  // `split` parts, one a cluster, after the whole tiles. Part j < split - 1 of a tail tile writes
  // its fp32 accumulators to its slot of `partials` and counts itself in the tile's flag; the
  // last part waits for the others there, adds their sums, runs the epilogue and clears the
  // flag for the next launch. split == 1: every tile whole.
  uint32_t dp_tiles;
  uint32_t split;
  float* partials;
  unsigned* flags;
  // A whole gated MLP pass (kPass; pass_down_n > 0): y = down(act(g) * u) in one launch, the
  // product h written by the gated tiles and read back by the down projection's tiles (out of
  // the L2, while it is fresh). Cluster-row b (a band of 256 rows) has tiles_n gated tiles and
  // pass_down_n down tiles; the order takes the gated tiles of bands 0 .. lag - 1, then for each
  // next band its gated tiles followed by the down tiles of the band `lag` before it. A down
  // tile's producer waits until band_done[b] counts every consumer warpgroup of every gated
  // tile of band b, whose stores have completed (4 a cluster tile); the last of the band's
  // 2 * pass_down_n readers puts it back to zero for the next launch. down_maps: h as A (128-row
  // boxes), the down weight [down_cols, hidden] as B, y as the output, in global memory.
  uint32_t pass_down_n;
  uint32_t pass_lag;
  uint32_t down_kblocks;
  uint32_t down_cols;
  unsigned* band_done;
  const CUtensorMap* down_maps;
  // A pass, measured: [0] ns the producers waited on bands, [1] down tiles that waited (null:
  // not measured).
  unsigned long long* pass_stats;
  // 1: lag == tiles_mc and the gated tiles in tile_coords' grouped order (a measurement).
  uint32_t pass_grouped;
  // The k-block of a gated tile at which the previous tile's completed stores are counted.
  uint32_t pass_count_at;
};

// Tiles of the launch: a ragged last cluster-row (Params::ragged) has its pairs side by side.
__host__ __device__ __forceinline__ uint32_t tile_count(const Params& p) {
  return p.ragged ? (p.tiles_mc - 1) * p.tiles_n + (p.tiles_n + 1) / 2 : p.tiles_mc * p.tiles_n;
}

// A pass's tile t: a gated tile (band, column) or a down tile (band, column) of the order in
// Params::pass_down_n. Needs pass_lag <= tiles_mc.
struct PassTile {
  bool down;
  uint32_t band, col;
};
__host__ __device__ __forceinline__ uint32_t pass_tile_count(const Params& p) {
  return p.tiles_mc * (p.tiles_n + p.pass_down_n);
}
#ifdef FS_SM90A
#include "wgmma_m64n128k16.inc"
#include "wgmma_m64n192k16.inc"
#include "wgmma_m64n256k16.inc"
using namespace sm90;

// One k16 step of a warpgroup's 64 x kBN tile.
template <typename T, int kBN>
__device__ __forceinline__ void wgmma_tile(float (&d)[kBN / 2], uint64_t da, uint64_t db,
                                           int scale_d) {
  if constexpr (kBN == 256)
    wgmma_m64n256k16<T>(d, da, db, scale_d);
  else if constexpr (kBN == 192)
    wgmma_m64n192k16<T>(d, da, db, scale_d);
  else
    wgmma_m64n128k16_ss<T>(d, da, db, scale_d);
}

// Grouped order: tile t -> (cluster-row mc, column nt). Along M: down group_m cluster-rows,
// then the next column; along N: across group_m columns, then the next cluster-row. Selects,
// not branches, so no divergent path leads into the wgmma loop.
// A ragged last cluster-row comes after the others, its tiles side by side: column nt of it is
// the pair's two 128-row tiles on its rows at columns 2 nt and 2 nt + 1 (each CTA loads A and B
// whole; nothing multicast). Clusters along M would leave one CTA of it computing zeros: at
// 3128 rows, 200 of 3328.
__device__ __forceinline__ void tile_coords(uint32_t t, const Params& p, uint32_t& mc, uint32_t& nt,
                                            bool& side_by_side) {
  const uint32_t whole_mc = p.tiles_mc - p.ragged;  // cluster-rows in grouped order
  const uint32_t grouped = whole_mc * p.tiles_n;
  side_by_side = t >= grouped;
  const uint32_t rows_mc = max(whole_mc, 1u);  // no division by zero where none is grouped
  const bool along_n = p.raster_n != 0;
  const uint32_t minor_tiles = along_n ? p.tiles_n : rows_mc;
  const uint32_t major_tiles = along_n ? rows_mc : p.tiles_n;
  const uint32_t tg = side_by_side ? 0 : t;
  const uint32_t per_group = p.group_m * major_tiles;
  const uint32_t g = tg / per_group;
  const uint32_t first = g * p.group_m;
  const uint32_t in_group = min(minor_tiles - first, p.group_m);
  const uint32_t r = tg - g * per_group;
  const uint32_t minor = first + r % in_group;
  const uint32_t major = r / in_group;
  mc = side_by_side ? whole_mc : (along_n ? major : minor);
  nt = side_by_side ? t - grouped : (along_n ? minor : major);
}

__device__ __forceinline__ PassTile pass_tile(uint32_t t, const Params& p) {
  const uint32_t g = p.tiles_n, d = p.pass_down_n, lag = p.pass_lag;
  if (t < lag * g) {
    if (p.pass_grouped) {  // every gated tile first (lag == tiles_mc), in the grouped order
      uint32_t mc, nt;
      bool side;
      tile_coords(t, p, mc, nt, side);
      return {false, mc, nt};
    }
    return {false, t / g, t % g};
  }
  uint32_t u = t - lag * g;
  const uint32_t steady = (p.tiles_mc - lag) * (g + d);
  if (u < steady) {
    const uint32_t step = u / (g + d), r = u % (g + d);
    return r < g ? PassTile{false, lag + step, r} : PassTile{true, step, r - g};
  }
  u -= steady;
  return {true, p.tiles_mc - lag + u / d, u % d};
}

// A cluster's work item w: a whole tile, or part `part` of a split tail tile, over k-blocks
// [kb0, kb0 + count).
struct WorkItem {
  uint32_t tile, part, kb0, count;
};
__device__ __forceinline__ WorkItem work_item(uint32_t w, const Params& p) {
  if (w < p.dp_tiles) return {w, 0, 0, p.kblocks};
  const uint32_t u = w - p.dp_tiles, part = u % p.split;
  const uint32_t kb0 = part * p.kblocks / p.split, kb1 = (part + 1) * p.kblocks / p.split;
  return {p.dp_tiles + u / p.split, part, kb0, kb1 - kb0};
}
#endif  // FS_SM90A

// A pass's down projection: h as A (128-row boxes), the down weight as B, y as the output.
struct DownMaps {
  CUtensorMap a, b, out;
};

// kSplit: built for a split tail (Params::split > 1); without it the kernel takes every tile
// whole and carries none of the split's code. kPass: a whole MLP pass (Params::pass_down_n),
// its down tiles kDownBN wide.
template <typename T, Activation A, bool kPingPong, int kBN, bool kSplit, int kConsumers = 2,
          bool kPass = false, int kDownBN = 256>
__global__ void __launch_bounds__(threads_for(kConsumers), 1)
    hopper_gemm_kernel(const __grid_constant__ CUtensorMap tmap_a,
                       const __grid_constant__ CUtensorMap tmap_b,
                       const __grid_constant__ CUtensorMap tmap_out,
                       const __grid_constant__ DownMaps down_maps, const Params p) {
#ifdef FS_SM90A
  constexpr bool kPlain = A == Activation::kNone;
  using L = Layout<kPingPong, kPlain, kBN, kConsumers, kPass>;
  constexpr int kStages = L::kStages;
  static_assert(!kPass || (!kPlain && !kPingPong && !kSplit && kBN == 256 && kConsumers == 2 &&
                           (kDownBN == 256 || kDownBN == 192)),
                "a pass: gated cooperative 128 x 256 tiles, down tiles 256 or 192 wide");
  // A pass's down maps: in the kernel's parameters, or (down_maps set) in global memory.
  const CUtensorMap* const dmaps = p.down_maps ? p.down_maps : &down_maps.a;
  constexpr uint32_t kDownBytesB = kDownBN * BK * 2;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // 128-byte swizzled tiles want 1024-byte alignment (of the shared-memory address).
  const uint32_t raw_u32 = smem_u32(smem_raw);
  uint8_t* base = smem_raw + (((raw_u32 + 1023) & ~1023u) - raw_u32);
  uint8_t* tiles_a = base;
  uint8_t* tiles_b = tiles_a + kStages * L::kBytesA;
  uint8_t* staging = tiles_b + kStages * L::kBytesB;
  uint64_t* full = reinterpret_cast<uint64_t*>(staging + kConsumers * L::kStagingPerWg);
  uint64_t* empty = full + kStages;
  // Ping-pong: order[c] opens warpgroup c's next main loop once the other one has issued its
  // own. Besides alternating the tensor cores between the two, this keeps every wait on a `full`
  // barrier within one phase of it (parity waits cannot tell phase p from p + 2).
  uint64_t* order = empty + kStages;
  // Cooperative with a stagger: the first consumer opens `lead` once it has issued `stagger`
  // k-blocks of its first tile; the second waits for it once, then trails by that much.
  uint64_t* lead = order + 2;
  // Dynamic tiles: per stage, the number of the tile whose first k-block it holds (or one past
  // the last tile: the end), stored by this CTA's producer with st.async, its 4 bytes
  // completing on the stage's `full` barrier with the tile's own; and the ring through which the
  // cluster's first CTA hands its peer each tile's number, completing on `tile_ready`.
  uint64_t* tile_ready = lead + 1;
  uint32_t* tile_slot = reinterpret_cast<uint32_t*>(tile_ready + kTileRing);
  uint32_t* stage_tile = tile_slot + kTileRing;
  const uint32_t stage_tile_u32 = smem_u32(stage_tile);
  // A pass: the ring through which the producer announces each tile (or the end) as soon as it
  // knows it, before it may wait on a down tile's inputs; the consumers learn there whether to
  // store what they hold first (see Params::pass_down_n).
  uint64_t* announce_bar = reinterpret_cast<uint64_t*>(
      (reinterpret_cast<uintptr_t>(stage_tile + kStages) + 7) & ~uintptr_t{7});
  uint32_t* announce = reinterpret_cast<uint32_t*>(announce_bar + kTileRing);

  // Shared-memory addresses, computed once (see sm90_ptx.cuh).
  const uint32_t tiles_a_u32 = smem_u32(tiles_a), tiles_b_u32 = smem_u32(tiles_b);
  const uint32_t full_u32 = smem_u32(full), empty_u32 = smem_u32(empty);

  // Lane 0's value, so the compiler knows it is warp-uniform: the warpgroup's branch, its tile
  // rows and its wgmma descriptors can then live in uniform registers instead of being rebuilt
  // in vector registers and moved over (R2UR) before every wgmma.
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);
  const int tid = threadIdx.x % 128;
  const uint32_t cluster = p.cluster;
  const uint32_t rank = cluster > 1 ? cluster_rank() : 0;
  const uint32_t cm = p.cluster_m, cn = p.cluster_n;
  const uint32_t rm = rank % cm, rn = rank / cm;  // this CTA's place in the cluster's tiles
  // Programmatic dependent launch (see HopperGemm::run): let the next launch in now, set up the
  // barriers, then wait for the kernel before this one to finish before any global access (it
  // may read what this kernel writes, or write what it reads).
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      // Every consumer warpgroup of every CTA this CTA's loads are multicast to: itself, its
      // peer along M (half of B) and its peer along N (half of A).
      mbar_init(&empty[s], (kPingPong ? 1 : kConsumers) * (p.cluster_m + p.cluster_n - 1));
    }
    mbar_init(&order[0], 1);
    mbar_init(&order[1], 1);
    mbar_init(lead, 1);
    for (uint32_t r = 0; r < kTileRing; ++r) mbar_init(&tile_ready[r], 1);
    if constexpr (kPass)
      for (uint32_t r = 0; r < kTileRing; ++r) mbar_init(&announce_bar[r], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (cluster > 1) cluster_sync();  // the peer's barriers exist before anything reaches them
  asm volatile("griddepcontrol.wait;\n" ::: "memory");

  const uint32_t clusters = gridDim.x / cluster;
  const uint32_t cid = blockIdx.x / cluster;
  const uint32_t tiles = kPass ? pass_tile_count(p) : tile_count(p);
  const uint32_t kblocks = p.kblocks;

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      // Each claim is made a tile ahead of its use, so that its round trip is not waited for.
      const auto claim = [&] { return claim_wrapping(p.counter, tiles - 1); };
      uint32_t it = 0;  // k-blocks issued, over all tiles
      // The k-blocks of tile t, the CTA's local-th; armed: its first stage is free and expects
      // its bytes already (dynamic tiles).
      const auto load_tile = [&](uint32_t t, uint32_t local, bool armed, uint32_t kb0,
                                 uint32_t count) {
        uint32_t mc, nt;
        bool side;
        const CUtensorMap* map_a = &tmap_a;
        const CUtensorMap* map_b = &tmap_b;
        bool down = false;
        if constexpr (kPass) {
          const PassTile pt = pass_tile(t, p);
          down = pt.down;
          mc = pt.band;
          nt = pt.col;
          side = false;
          if (down) {
            map_a = dmaps;
            map_b = dmaps + 1;
            count = p.down_kblocks;
            // The band's product is stored whole: every consumer warpgroup of its gated tiles
            // has seen its stores complete. The last of the band's readers resets the count.
            unsigned* done = p.band_done + mc;
            const uint32_t need = 4 * p.tiles_n;
            uint64_t t0 = 0;
            if (p.pass_stats) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
            uint32_t spins = 0;
            for (; ld_acquire(done) < need; ++spins) {
              __nanosleep(100);
              if (spins == (1u << 24)) mbar_wait_timed_out();
            }
            if (p.pass_stats && spins > 0) {
              uint64_t t1;
              asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
              atomicAdd(p.pass_stats, static_cast<unsigned long long>(t1 - t0));
              atomicAdd(p.pass_stats + 1, 1ull);
            }
            fence_proxy_async_global();  // the TMA loads below see what the acquire did
            if (atomicAdd(done, 1u) == need + 2 * p.pass_down_n - 1) atomicExch(done, 0u);
          }
        } else {
          tile_coords(t, p, mc, nt, side);
        }
        const int m0 = static_cast<int>((mc * cm + (side ? 0 : rm)) * L::kTileRows);
        const int n0 =
            static_cast<int>((side ? nt * 2 + rm : nt * cn + rn) * (down ? kDownBN : kBN));
        // Along N, the CTAs of one row of the cluster (ranks rm, rm + cm) share A: each loads
        // half of its rows for both. Along M, those of one column (ranks cm * rn, + 1) share B.
        const uint16_t mask_a = static_cast<uint16_t>((1u << rm) | (1u << (rm + cm)));
        const uint16_t mask_b = static_cast<uint16_t>(3u << (cm * rn));
        const int a_half = static_cast<int>(rn) * (L::kTileRows / 2);
        const int b_half = static_cast<int>(rm) * ((down ? kDownBN : kBN) / 2);
        const uint32_t bytes = L::kBytesA + (down ? kDownBytesB : L::kBytesB);
        const bool backward = p.k_serpentine != 0 && (local & 1) != 0 && !down;
        for (uint32_t kb = 0; kb < count; ++kb, ++it) {
          const uint32_t s = it % kStages, round = it / kStages;
          const uint32_t full_s = full_u32 + s * 8;
          if (!armed || kb > 0) {
            if (round > 0) mbar_wait<true>(empty_u32 + s * 8, (round - 1) & 1);
            mbar_expect_tx(full_s, bytes);
          }
          const int k0 = static_cast<int>(kb0 + (backward ? count - 1 - kb : kb)) * BK;
          const uint32_t a_dst = tiles_a_u32 + s * L::kBytesA;
          const uint32_t b_dst = tiles_b_u32 + s * L::kBytesB;
          if (side) {  // A and B whole, B in its two half boxes
            tma_load_hint(a_dst, map_a, full_s, k0, m0, p.policy_a);
            tma_load_hint(b_dst, map_b, full_s, k0, n0, p.policy_b);
            tma_load_hint(b_dst + (kBN / 2) * 128, map_b, full_s, k0, n0 + kBN / 2, p.policy_b);
            continue;
          }
          if (cn == 1) {
            tma_load_hint(a_dst, map_a, full_s, k0, m0, p.policy_a);
          } else {
            tma_load_multicast_hint(a_dst + a_half * 128, map_a, full_s, k0, m0 + a_half, mask_a,
                                    p.policy_a);
          }
          if (cm == 1) {
            tma_load_hint(b_dst, map_b, full_s, k0, n0, p.policy_b);
          } else {
            tma_load_multicast_hint(b_dst + b_half * 128, map_b, full_s, k0, n0 + b_half, mask_b,
                                    p.policy_b);
          }
        }
      };
      if (kPingPong || p.counter == nullptr) {
        uint32_t local = 0;
        const uint32_t items = kSplit ? p.dp_tiles + (tiles - p.dp_tiles) * p.split : tiles;
        for (uint32_t w = cid; w < items; w += clusters, ++local) {
          const WorkItem item = kSplit ? work_item(w, p) : WorkItem{w, 0, 0, kblocks};
          load_tile(item.tile, local, false, item.kb0, item.count);
        }
      } else {
        // Dynamic tiles. The first CTA of the cluster claims (a tile ahead) and stores each
        // number into the peer's ring; the peer's producer waits for it there. Each stores the
        // number into its own first stage of the tile, where its consumers read it.
        const bool first = rank == 0;
        uint32_t claimed = first ? claim() : 0;
        const uint32_t tile_ready_u32 = smem_u32(tile_ready), tile_slot_u32 = smem_u32(tile_slot);
        for (uint32_t local = 0, t = cid;; ++local) {
          const uint32_t s = it % kStages, round = it / kStages;
          // The stage is free, so the peer has issued the loads of the tile kStages earlier (or
          // later ones), and so has read its number: the ring's slot may be written again.
          if (round > 0) mbar_wait<true>(empty_u32 + s * 8, (round - 1) & 1);
          if (local > 0) {
            const uint32_t r = (local - 1) % kTileRing;
            if (first) {
              t = clusters + claimed;
              if (t < tiles) claimed = claim();
              st_async_u32(tile_slot_u32 + r * 4, t, tile_ready_u32 + r * 8, rank ^ 1u);
            } else {
              mbar_expect_tx(tile_ready_u32 + r * 8, 4);
              mbar_wait<true>(tile_ready_u32 + r * 8, ((local - 1) / kTileRing) & 1);
              t = tile_slot[r];
            }
          }
          const bool more = t < tiles;  // else the end: a stage with no tile
          if constexpr (kPass) {
            const uint32_t r = local % kTileRing;
            announce[r] = t;
            mbar_arrive(&announce_bar[r]);
          }
          uint32_t bytes = L::kBytesA + L::kBytesB;
          if constexpr (kPass)
            if (more && pass_tile(t, p).down) bytes = L::kBytesA + kDownBytesB;
          mbar_expect_tx(full_u32 + s * 8, (more ? bytes : 0) + 4);
          st_async_u32(stage_tile_u32 + s * 4, t, full_u32 + s * 8, rank);
          if (!more) break;
          load_tile(t, local, true, 0, kblocks);
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(consumer_registers(kConsumers)));
    const int c = wg - 1;
    const int warp = tid / 32, lane = tid % 32;
    const uint32_t staging_u32 = smem_u32(staging) + c * L::kStagingPerWg;
    // A stage is free once every consumer warpgroup of every CTA it was multicast to is done:
    // tell this CTA and the peers whose loads land in this CTA's stages.
    auto release = [&](uint32_t stage) {
      const uint32_t bar = empty_u32 + stage * 8;
      if (cluster == 1) {
        mbar_arrive(bar);
      } else {
        mbar_arrive_cluster(bar, rank);
        if (cm > 1) mbar_arrive_cluster(bar, rank ^ 1u);  // peer along M (B)
        if (cn > 1) mbar_arrive_cluster(bar, rank ^ cm);  // peer along N (A)
      }
    };
    float d[kBN / 2] = {};
    // Output pairs a thread stores from its accumulators: the plain product's (accumulators 2j,
    // 2j + 1), or act(g) * u of gated chunk j / 2, row r (even j) or r + 8 (odd j). Even
    // accumulator chunks are gate columns, odd ones the matching up columns.
    constexpr int kOutPairs = kPlain ? kBN / 4 : kBN / 8;
    auto out_pair = [&](int j) {
      if constexpr (kPlain) {
        return pack2<T>(d[2 * j], d[2 * j + 1]);
      } else {
        const float* g = &d[8 * (j / 2) + 2 * (j % 2)];
        return pack2<T>(gated_product<A>(g[0], g[4]), gated_product<A>(g[1], g[5]));
      }
    };
    // The staging and stores of a tile at (m0, n0) whose output pair j is pair(j).
    // A pass: the band (m0 / 256) of the gated tile whose stores thread 0 issued last and has not
    // yet counted in band_done: counted once they have completed, when the staging buffer is
    // next needed or before a wait that a down tile may hold up (kNoBand: none).
    constexpr uint32_t kNoBand = 0xFFFFFFFFu;
    uint32_t pending_band = kNoBand;
    auto count_pending = [&] {  // thread 0
      bulk_wait_all();
      fence_proxy_async_global();
      red_release_add(p.band_done + pending_band, 1);
      pending_band = kNoBand;
    };
    // The staging buffer is free once the previous tile's TMA stores have read it.
    auto staging_free = [&] {
      if (tid == 0) {
        if (kPass && pending_band != kNoBand)
          count_pending();
        else
          bulk_wait_read_all();
      }
      named_sync(1 + c);
    };
    auto epilogue = [&](uint32_t m0, uint32_t n0, auto pair) {
      staging_free();
      // Accumulator n8 chunk j: columns 8j + 2 (lane % 4) + {0, 1} of rows r and r + 8 (r = warp *
      // 16 + lane / 4), once packed exactly a stmatrix fragment: each stmatrix.x4 stores output
      // chunks c and c + 1 of this warp's 16 rows as four 8 x 8 matrices, lanes 8i..8i+7 giving
      // the rows of matrix i (rows + 8 for odd i, chunk c + 1 for i >= 2), at the TMA box's
      // swizzled positions (conflict-free: 128-byte rows, the 8 rows of a matrix differ in
      // row % 8; 64-byte rows, the pairs of rows differ in row / 2 % 4).
      const uint32_t row = warp * 16 + ((lane >> 3) & 1) * 8 + (lane & 7);
      constexpr int kBoxChunks = L::kOutBoxCols / 8;
      const uint32_t row_at = staging_u32 + row * (kBoxChunks * 16), cb = lane >> 4;
      const uint32_t x = kBoxChunks == 8 ? (lane & 7) : (row >> 1) & 3;
      auto chunk_pair_at = [&](int chunk) {  // even: chunks chunk and chunk + 1, in one box
        return row_at + (chunk / kBoxChunks) * L::kOutBoxBytes +
               ((((chunk % kBoxChunks) | cb) ^ x) << 4);
      };
      if constexpr (kPlain) {
#pragma unroll
        for (int j = 0; j < kBN / 8; j += 2)
          stmatrix_x4(chunk_pair_at(j), pair(2 * j), pair(2 * j + 1), pair(2 * j + 2),
                      pair(2 * j + 3));
      } else {
#pragma unroll
        for (int q = 0; q < kBN / 16; q += 2)  // output chunks q and q + 1, rows r and r + 8
          stmatrix_x4(chunk_pair_at(q), pair(2 * q), pair(2 * q + 1), pair(2 * q + 2),
                      pair(2 * q + 3));
      }
      fence_proxy_async();  // the TMA engine reads what these threads wrote
      named_sync(1 + c);
      if (tid == 0) {
        const uint32_t col0 = kPlain ? n0 : n0 / 2;
        if (m0 < p.rows) {
#pragma unroll
          for (int bx = 0; bx < L::kOutBoxes; ++bx) {
            const uint32_t col = col0 + bx * L::kOutBoxCols;
            if (col < p.out_cols)
              tma_store(&tmap_out, staging_u32 + bx * L::kOutBoxBytes, static_cast<int>(col),
                        static_cast<int>(m0));
          }
        }
        bulk_commit();
        if constexpr (kPass) pending_band = m0 / 256;
      }
    };
    // A pass's down tile: the plain product of a 64 x kDownBN tile, staged and stored in parts
    // of at most 128 columns through the gated tile's staging buffer (two 64-column boxes).
    auto down_epilogue = [&](uint32_t m0, uint32_t n0) {
      const uint32_t row = warp * 16 + ((lane >> 3) & 1) * 8 + (lane & 7);
      const uint32_t row_at = staging_u32 + row * 128, cb = lane >> 4, x = lane & 7;
#pragma unroll
      for (int part = 0; part < (kDownBN + 127) / 128; ++part) {
        staging_free();
#pragma unroll
        for (int j = 0; j < 16; j += 2) {  // chunks 16 part + j and + 1 of the kDownBN / 8
          const int q = 16 * part + j;
          if (q >= kDownBN / 8) break;
          const uint32_t at = row_at + (j / 8) * L::kOutBoxBytes + ((((j % 8) | cb) ^ x) << 4);
          stmatrix_x4(at, pack2<T>(d[4 * q], d[4 * q + 1]), pack2<T>(d[4 * q + 2], d[4 * q + 3]),
                      pack2<T>(d[4 * q + 4], d[4 * q + 5]), pack2<T>(d[4 * q + 6], d[4 * q + 7]));
        }
        fence_proxy_async();
        named_sync(1 + c);
        if (tid == 0) {
          if (m0 < p.rows) {
#pragma unroll
            for (int bx = 0; bx < 2; ++bx) {
              const uint32_t in_tile = part * 128 + bx * 64, col = n0 + in_tile;
              if (in_tile < kDownBN && col < p.down_cols)
                tma_store(dmaps + 2, staging_u32 + bx * L::kOutBoxBytes, static_cast<int>(col),
                          static_cast<int>(m0));
            }
          }
          bulk_commit();
        }
      }
    };
    // Deferred stores (cooperative, two consumers, whole tiles): a finished tile's output pairs,
    // activated as soon as its sums are (fp32 instructions beside a running wgmma slow the
    // tensor cores 7.4x: tensor_overlap_bench), wait in `held` while the next tile's first
    // kDeferAfter + 1 k-blocks are issued; their staging, fences and stores then run under
    // those MMAs rather than between two tiles' main loops.
    constexpr bool kDefer = !kPlain && !kPingPong && !kSplit && kConsumers == 2;
    constexpr uint32_t kDeferAfter = 1;
    uint32_t held[kOutPairs] = {};
    bool holding = false;
    uint32_t held_m0 = 0, held_n0 = 0;
    auto finish_held = [&] {
      epilogue(held_m0, held_n0, [&](int j) { return held[j]; });
      holding = false;
    };
    uint32_t local = 0;                                // position in this CTA's sequence of tiles
    uint32_t turns = 0;                                // ping-pong: waits on order[c] so far
    const uint32_t lead_at = min(p.stagger, kblocks);  // 0: no stagger
    if (!kPingPong && c == 1 && lead_at > 0 && cid < tiles) mbar_wait<true>(lead, 0);
    const bool dynamic = !kPingPong && p.counter != nullptr;
    const uint32_t items = kSplit ? p.dp_tiles + (tiles - p.dp_tiles) * p.split : tiles;
    uint32_t kb_base = 0;  // a pass: k-blocks of this CTA's tiles so far (they differ by kind)
    for (uint32_t dealt = cid;; dealt += clusters, ++local) {
      WorkItem item{dealt, 0, 0, kblocks};
      if constexpr (kPass) {
        // Before a down tile, whose loads may wait for other CTAs' gated tiles, or the end:
        // store what is held and count what has been stored, so that no CTA waits on this one.
        const uint32_t r = local % kTileRing;
        mbar_wait<true>(&announce_bar[r], (local / kTileRing) & 1);
        const uint32_t next = announce[r];
        if (next >= tiles || pass_tile(next, p).down) {
          if (holding) finish_held();
          if (tid == 0 && pending_band != kNoBand) count_pending();
        }
      }
      if (dynamic) {  // the tile the producer put in this tile's first stage
        const uint32_t it0 = kPass ? kb_base : local * kblocks;
        mbar_wait<true>(full_u32 + (it0 % kStages) * 8, (it0 / kStages) & 1);
        item.tile = stage_tile[it0 % kStages];
        // Every thread has read it before thread 0 releases the stage to the producer.
        named_sync(1 + c);
      } else if (kSplit) {  // without a split, t >= tiles below ends the sequence
        if (dealt >= items) break;
        item = work_item(dealt, p);
      }
      const uint32_t t = item.tile;
      if (t >= tiles) break;
      if (kPingPong && (local & 1) != static_cast<uint32_t>(c)) continue;
      if (kPingPong && local > 0) mbar_wait<true>(&order[c], turns++ & 1);
      uint32_t mc, nt;
      bool side;
      bool down = false;
      if constexpr (kPass) {
        const PassTile pt = pass_tile(t, p);
        down = __shfl_sync(0xffffffffu, pt.down ? 1 : 0, 0) != 0;  // warp-uniform, as `wg`
        mc = pt.band;
        nt = pt.col;
        side = false;
        item.count = down ? p.down_kblocks : kblocks;
      } else {
        tile_coords(t, p, mc, nt, side);
      }
      const uint32_t m0 = (mc * cm + (side ? 0 : rm)) * L::kTileRows +
                          (kPingPong ? 0 : static_cast<uint32_t>(c) * 64);
      const uint32_t n0 = (side ? nt * 2 + rm : nt * cn + rn) * (down ? kDownBN : kBN);
      const uint32_t a_offset = kPingPong ? 0 : static_cast<uint32_t>(c) * 64 * 128;
      // Low words of stage 0's descriptors; stage s and k-step kk are offsets in 16-byte units.
      const uint32_t desc_a = smem_desc_lo(tiles_a_u32 + a_offset);
      const uint32_t desc_b = smem_desc_lo(tiles_b_u32);
      // The stagger's signal: the k-block after which the first consumer opens `lead` (never
      // for the others, nor after its first tile).
      const uint32_t lead_kb =
          (!kPingPong && c == 0 && local == 0 && lead_at > 0) ? lead_at - 1 : 0xFFFFFFFFu;

      // Main loop. The stage and its phase step along; this warpgroup's k-blocks start at
      // local * kblocks in the CTA's sequence (ping-pong skips the other warpgroup's tiles; a
      // split part, shorter, is always a CTA's last item).
      const uint32_t it0 = kPass ? kb_base : local * kblocks;
      kb_base += item.count;
      uint32_t s = it0 % kStages, phase = (it0 / kStages) & 1;
      uint32_t prev = 0;
      // kW: the tile's columns (a pass's down tiles may be narrower: a loop of their own, so that
      // no wgmma lies on a path ptxas sees as divergent).
      auto k_loop = [&]<int kW>() {
        for (uint32_t kb = 0; kb < item.count; ++kb) {
          mbar_wait<true>(full_u32 + s * 8, phase);
          const uint32_t da = desc_a + s * (L::kBytesA >> 4);
          const uint32_t db = desc_b + s * (L::kBytesB >> 4);
          wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < BK / 16; ++kk)  // 16 elements = 32 bytes along the swizzled row
            wgmma_tile<T, kW>(reinterpret_cast<float(&)[kW / 2]>(d), smem_desc_from_lo(da + kk * 2),
                              smem_desc_from_lo(db + kk * 2), (kb > 0 || kk > 0) ? 1 : 0);
          wgmma_commit();
          if constexpr (kDefer && kW == kBN) {
            if (holding && kb == kDeferAfter) finish_held();
          }
          // A pass: the held tile's stores, issued two k-blocks ago, have long completed; count
          // them now rather than at the next epilogue, so that its band's down tiles wait less.
          if constexpr (kPass && kW == kBN)
            if (kb == p.pass_count_at && tid == 0 && pending_band != kNoBand) count_pending();
          // One k-block stays in flight; the one before it has finished reading its stage.
          wgmma_wait<1>();
          if (tid == 0) {
            if (kb > 0) release(prev);
            if (kb == lead_kb) mbar_arrive(lead);
          }
          prev = s;
          if (++s == kStages) {
            s = 0;
            phase ^= 1;
          }
        }
      };
      if (kPass && kDownBN != kBN && down)
        k_loop.template operator()<kDownBN>();
      else
        k_loop.template operator()<kBN>();
      if (kPingPong && tid == 0) mbar_arrive(&order[c ^ 1]);  // every full wait of this tile passed
      wgmma_wait<0>();
      if (tid == 0) release(prev);
      if (kPass && down) {
        if (holding) finish_held();  // (flushed before the down tile already)
        down_epilogue(m0, n0);
        continue;
      }
      if constexpr (kDefer) {
        if (holding) finish_held();  // a tile of at most kDeferAfter k-blocks
#pragma unroll
        for (int j = 0; j < kOutPairs; ++j) held[j] = out_pair(j);
        holding = true;
        held_m0 = m0;
        held_n0 = n0;
        continue;
      }

      // A split tail tile: every part but the last leaves its sums for the last one, which
      // adds them before the epilogue. Each thread's accumulators go to the same place in every
      // slot, 16-byte words strided by the warpgroup (coalesced, no shared memory).
      if (kSplit && t >= p.dp_tiles) {
        constexpr uint32_t kSlotWords = 128 * (kBN / 8);  // float4s a consumer's slot
        const uint32_t q =
            ((t - p.dp_tiles) * cluster + rank) * kConsumers + static_cast<uint32_t>(c);
        unsigned* flag = p.flags + q;
        float4* slots =
            reinterpret_cast<float4*>(p.partials) + size_t{q} * (p.split - 1) * kSlotWords;
        if (item.part + 1 < p.split) {
          float4* mine = slots + item.part * kSlotWords + tid;
#pragma unroll
          for (int i = 0; i < kBN / 8; ++i)
            __stcg(mine + i * 128, make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]));
          named_sync(1 + c);
          if (tid == 0) red_release_add(flag, 1);
          continue;  // the CTA's last item
        }
        if (tid == 0)
          while (ld_acquire(flag) < p.split - 1) __nanosleep(64);
        named_sync(1 + c);
        for (uint32_t j = 0; j + 1 < p.split; ++j) {
          const float4* theirs = slots + j * kSlotWords + tid;
#pragma unroll
          for (int i = 0; i < kBN / 8; ++i) {
            const float4 v = __ldcg(theirs + i * 128);
            d[4 * i] += v.x, d[4 * i + 1] += v.y, d[4 * i + 2] += v.z, d[4 * i + 3] += v.w;
          }
        }
        if (tid == 0) *flag = 0;  // for the next launch, which starts after this one ends
      }

      epilogue(m0, n0, out_pair);
    }
    if constexpr (kDefer) {
      if (holding) finish_held();
    }
    if (tid == 0) {
      if (kPass && pending_band != kNoBand)
        count_pending();
      else
        bulk_wait_all();
    }
  }
  // No CTA leaves while its peer may still arrive on its barriers.
  if (cluster > 1) cluster_sync();
#endif  // FS_SM90A
}

using KernelFn = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, DownMaps, Params);

// The kernel of a (dtype, activation, schedule, tile width) and its shared memory; the
// constructor has checked that the combination is one Layout takes.
struct KernelChoice {
  KernelFn fn = nullptr;
  size_t smem = 0;
  unsigned threads = 0;
};

template <typename T, Activation A, bool kPingPong, int kBN, int kConsumers = 2>
KernelChoice choice(bool split) {
  constexpr size_t kSmem = Layout<kPingPong, A == Activation::kNone, kBN, kConsumers>::kSmemBytes;
  constexpr unsigned kThreads = threads_for(kConsumers);
  if constexpr (kPingPong)
    return {&hopper_gemm_kernel<T, A, true, kBN, false>, kSmem, kThreads};
  else if constexpr (kConsumers == 3)  // no split tail (the constructor refuses one)
    return {&hopper_gemm_kernel<T, A, false, kBN, false, 3>, kSmem, kThreads};
  else
    return {split ? &hopper_gemm_kernel<T, A, false, kBN, true>
                  : &hopper_gemm_kernel<T, A, false, kBN, false>,
            kSmem, kThreads};
}

template <typename T>
KernelChoice pick_kernel_typed(Activation act, bool ping_pong, int tile_m, int tile_n, bool split) {
  KernelChoice k;
  dispatch_activation(act, [&]<Activation A>() {
    if (ping_pong)
      k = choice<T, A, true, 256>(false);
    else if (tile_m == 192) {
      if constexpr (A != Activation::kNone) k = choice<T, A, false, 192, 3>(false);
    } else if (tile_n == 128)
      k = choice<T, A, false, 128>(split);
    else if (tile_n == 192)
      k = choice<T, A, false, 192>(split);
    else
      k = choice<T, A, false, 256>(split);
  });
  return k;
}

// A whole gated MLP pass's kernel (Params::pass_down_n).
template <typename T>
KernelChoice pass_kernel_typed(Activation act, int down_tile_n) {
  KernelChoice k;
  dispatch_activation(act, [&]<Activation A>() {
    if constexpr (A != Activation::kNone)
      k = {down_tile_n == 192 ? &hopper_gemm_kernel<T, A, false, 256, false, 2, true, 192>
                              : &hopper_gemm_kernel<T, A, false, 256, false, 2, true, 256>,
           Layout<false, false, 256, 2, true>::kSmemBytes, threads_for(2)};
  });
  return k;
}
KernelChoice pass_kernel(DType dtype, Activation act, int down_tile_n) {
  return dtype == DType::kBf16 ? pass_kernel_typed<__nv_bfloat16>(act, down_tile_n)
                               : pass_kernel_typed<__half>(act, down_tile_n);
}

KernelChoice pick_kernel(DType dtype, Activation act, bool ping_pong, int tile_m, int tile_n,
                         bool split) {
  if (dtype == DType::kBf16)
    return pick_kernel_typed<__nv_bfloat16>(act, ping_pong, tile_m, tile_n, split);
  if (dtype == DType::kFp16)
    return pick_kernel_typed<__half>(act, ping_pong, tile_m, tile_n, split);
  throw CudaError("the Hopper GEMM takes fp16 or bf16");
}

}  // namespace

static uint64_t l2_policy(L2Hint h) {
  switch (h) {
    case L2Hint::kEvictFirst:
      return kL2EvictFirst;
    case L2Hint::kEvictLast:
      return kL2EvictLast;
    case L2Hint::kNormal:
      break;
  }
  return kL2EvictNormal;
}

std::string to_string(const HopperGemmConfig& c) {
  std::string s =
      std::string(c.schedule == HopperSchedule::kPingPong ? "ping-pong" : "cooperative") +
      (c.tile_m != 128   ? " " + std::to_string(c.tile_m) + " x " + std::to_string(c.tile_n)
       : c.tile_n != 256 ? " " + std::to_string(c.tile_n) + " wide"
                         : std::string()) +
      ", cluster " + std::to_string(c.cluster) +
      (c.cluster_n > 1 ? "x" + std::to_string(c.cluster_n) : std::string()) + ", group " +
      std::to_string(c.group_m);
  if (c.raster_n) s += " along N";
  if (c.k_serpentine) s += ", K serpentine";
  auto hint = [](L2Hint h) { return h == L2Hint::kEvictFirst ? "first" : "last"; };
  if (c.hint_a != L2Hint::kNormal) s += std::string(", A evict ") + hint(c.hint_a);
  if (c.hint_b != L2Hint::kNormal) s += std::string(", B evict ") + hint(c.hint_b);
  if (c.stagger > 0) s += ", stagger " + std::to_string(c.stagger);
  if (c.dynamic_tiles) s += ", dynamic tiles";
  if (c.split_tail) s += ", split tail";
  return s;
}

SplitTail plan_split_tail(uint64_t tiles, uint64_t max_clusters, uint32_t kblocks) {
  SplitTail plan{tiles, 1, std::min(tiles, max_clusters)};
  if (tiles == 0 || max_clusters == 0) return plan;
  const uint64_t rem = tiles % max_clusters;
  if (rem == 0) return plan;
  const uint64_t split = std::min<uint64_t>(
      {max_clusters / rem, kblocks / kMinSplitKblocks, static_cast<uint64_t>(kMaxSplit)});
  if (split < 2) return plan;
  plan.dp_tiles = tiles - rem;
  plan.split = static_cast<uint32_t>(split);
  plan.clusters = plan.dp_tiles > 0 ? max_clusters : rem * split;
  return plan;
}

HopperGemmConfig default_hopper_config() {
  return hopper_gemm_candidates(Activation::kGeluTanh).front();
}

bool hopper_gemm_available(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return false;
  if (major != 9 || minor != 0) return false;  // sm_90a code runs on sm_90 only
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(
          &attr, hopper_gemm_kernel<__nv_bfloat16, Activation::kGeluTanh, false, 256, false>) !=
      cudaSuccess)
    return false;
  return attr.binaryVersion == 90;
}

// A pass's down maps, and (Pass::maps_in_global) their copy in global memory.
struct DownMapsCopy {
  DownMaps maps{};
  DeviceBuffer global;
};

struct HopperGemm::Maps {
  CUtensorMap b{};
  std::map<const void*, CUtensorMap> a, out;
  KernelFn kernel = nullptr;
  size_t smem = 0;
  unsigned threads = 0;
  Params params{};
  DeviceBuffer counter;          // dynamic tiles: back at zero after every launch
  DeviceBuffer partials, flags;  // split tail: the parts' sums, and each tail tile's count
  DeviceBuffer band_done;        // a pass: per band, its stored gated tiles (see Params)
  // A pass: the down projection's tensor maps per (product, y).
  std::map<std::pair<const void*, const void*>, DownMapsCopy> down_maps;
};

uint32_t HopperGemm::split() const {
  return maps_->params.split;
}

HopperGemm::HopperGemm(DType dtype, Activation act, uint64_t rows, uint64_t n, uint64_t k,
                       const void* b, HopperGemmConfig config, int device)
    : HopperGemm(dtype, act, rows, n, k, b, config, device, nullptr) {}

HopperGemm::HopperGemm(DType dtype, Activation act, uint64_t rows, uint64_t n, uint64_t k,
                       const void* b, const Pass& pass, HopperGemmConfig config, int device)
    : HopperGemm(dtype, act, rows, n, k, b, config, device, &pass) {}

HopperGemm::HopperGemm(DType dtype, Activation act, uint64_t rows, uint64_t n, uint64_t k,
                       const void* b, HopperGemmConfig config, int device, const Pass* pass)
    : dtype_(dtype), act_(act), rows_(rows), n_(n), k_(k), config_(config) {
  if (pass) {
    if (pass->w_down == nullptr || pass->down_n == 0 || pass->down_n % 8 ||
        pass->down_n > 0x7fffffffu || pass->lag == 0 ||
        (pass->down_tile_n != 192 && pass->down_tile_n != 256))
      throw CudaError(
          "Hopper MLP pass: a down weight, its rows a positive multiple of 8, lag > 0, down tiles "
          "192 or 256 wide");
    if (act == Activation::kNone || config.schedule != HopperSchedule::kCooperative ||
        config.cluster != 2 || config.cluster_n != 1 || config.tile_m != 128 ||
        config.tile_n != 256 || !config.dynamic_tiles || config.split_tail || config.stagger != 0)
      throw CudaError(
          "Hopper MLP pass: gated, cooperative 128 x 256 tiles in clusters of 2 along M with "
          "dynamic tiles, no stagger or split tail");
    pass_ = *pass;
  }
  if ((config_.cluster != 1 && config_.cluster != 2) ||
      (config_.cluster_n != 1 && config_.cluster_n != 2))
    throw CudaError("Hopper GEMM: cluster sides must be 1 or 2");
  if (config_.group_m < 1) throw CudaError("Hopper GEMM: group_m must be positive");
  const bool ping_pong = config_.schedule == HopperSchedule::kPingPong;
  const int bn = config_.tile_n;
  if (bn != 256 && (ping_pong || (bn != 128 && bn != 192)))
    throw CudaError("Hopper GEMM: tiles are 256 wide, or cooperative 128 or 192 wide");
  const int bm = config_.tile_m;
  if (bm != 128 && (bm != 192 || ping_pong || bn != 192 || act == Activation::kNone ||
                    config_.cluster_n != 1 || config_.stagger != 0 || config_.split_tail))
    throw CudaError(
        "Hopper GEMM: tiles are 128 rows, or gated cooperative 192 x 192 in clusters along M, "
        "without a stagger or a split tail");
  if (config_.dynamic_tiles && (ping_pong || config_.cluster != 2 || config_.cluster_n != 1))
    throw CudaError(
        "Hopper GEMM: dynamic tiles are for the cooperative schedule in clusters of 2 along M");
  if (config_.split_tail && (ping_pong || config_.dynamic_tiles || config_.stagger != 0))
    throw CudaError(
        "Hopper GEMM: a split tail is for the cooperative schedule, tiles dealt in stride, no "
        "stagger");
  if (rows == 0 || n == 0 || k == 0 || n % 8 || k % 8 || rows > 0x7fffffffu || n > 0x7fffffffu ||
      k > 0x7fffffffu)
    throw CudaError("Hopper GEMM: rows, n and k must be positive, n and k multiples of 8");
  if (act != Activation::kNone && n % 16)
    throw CudaError("Hopper GEMM: gated n must hold whole interleaved groups of 16");
  maps_ = std::make_unique<Maps>();
  // The kernel without the split's code first: both have the same occupancy, which the split's
  // plan needs; the split one replaces it below where the plan splits.
  const KernelChoice kernel = pass ? pass_kernel(dtype, act, pass->down_tile_n)
                                   : pick_kernel(dtype, act, ping_pong, bm, bn, false);
  maps_->kernel = kernel.fn;
  maps_->smem = kernel.smem;
  maps_->threads = kernel.threads;
  FS_CUDA(cudaFuncSetAttribute(maps_->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(maps_->smem)));
  const uint32_t cm = static_cast<uint32_t>(config_.cluster);
  const uint32_t cn = static_cast<uint32_t>(config_.cluster_n);
  const uint32_t cluster = cm * cn;
  maps_->b = encode_tma_map_128b(b, n, k, static_cast<uint32_t>(bn) / cm);

  const uint64_t tile_rows = ping_pong ? 64 : static_cast<uint64_t>(bm);
  Params& p = maps_->params;
  p.rows = static_cast<uint32_t>(rows);
  p.out_cols = static_cast<uint32_t>(act == Activation::kNone ? n : n / 2);
  p.tiles_mc = static_cast<uint32_t>((rows + tile_rows * cm - 1) / (tile_rows * cm));
  const uint64_t tile_cols = static_cast<uint64_t>(bn) * cn;
  p.tiles_n = static_cast<uint32_t>((n + tile_cols - 1) / tile_cols);
  const uint64_t last_rows = rows % (tile_rows * cm);
  // Tiles walked along M only: the orders the tuner times, and the ones the GPU tests run it in.
  p.ragged = !pass && !ping_pong && bm == 128 && cm == 2 && cn == 1 && !config_.raster_n &&
             last_rows > 0 && last_rows <= 128;
  p.kblocks = static_cast<uint32_t>((k + BK - 1) / BK);
  p.cluster = cluster;
  p.cluster_m = cm;
  p.cluster_n = cn;
  p.group_m = static_cast<uint32_t>(config_.group_m);
  p.raster_n = config_.raster_n ? 1 : 0;
  p.k_serpentine = config_.k_serpentine ? 1 : 0;
  p.policy_a = l2_policy(config_.hint_a);
  p.policy_b = l2_policy(config_.hint_b);
  p.stagger = static_cast<uint32_t>(std::max(config_.stagger, 0));

  // As many clusters as fit on the device at once (one CTA per SM), at most one per tile.
  int sms = 0;
  FS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  int max_clusters = sms / static_cast<int>(cluster);
  if (cluster > 1) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(sms / static_cast<int>(cluster) * cluster));
    cfg.blockDim = dim3(maps_->threads);
    cfg.dynamicSmemBytes = maps_->smem;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cluster;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int n_clusters = 0;
    FS_CUDA(cudaOccupancyMaxActiveClusters(&n_clusters, maps_->kernel, &cfg));
    if (n_clusters <= 0) throw CudaError("Hopper GEMM: no cluster of this size fits on the device");
    max_clusters = std::min(max_clusters, n_clusters);
  }
  if (pass) {
    const uint64_t dbn = static_cast<uint64_t>(pass->down_tile_n);
    p.pass_down_n = static_cast<uint32_t>((pass->down_n + dbn - 1) / dbn);
    p.pass_lag = std::min(pass->lag, p.tiles_mc);
    p.down_kblocks = static_cast<uint32_t>((n / 2 + BK - 1) / BK);
    p.down_cols = static_cast<uint32_t>(pass->down_n);
    maps_->band_done = DeviceBuffer(p.tiles_mc * sizeof(unsigned));
    FS_CUDA(cudaMemset(maps_->band_done.get(), 0, maps_->band_done.bytes()));
    p.band_done = maps_->band_done.as<unsigned>();
    p.pass_stats = pass->stats;
    p.pass_grouped = pass->grouped && p.pass_lag == p.tiles_mc ? 1 : 0;
    p.pass_count_at = pass->count_at;
  }
  const uint64_t tiles = pass ? pass_tile_count(p) : tile_count(p);
  const SplitTail plan =
      config_.split_tail ? plan_split_tail(tiles, static_cast<uint64_t>(max_clusters), p.kblocks)
                         : SplitTail{tiles, 1, std::min<uint64_t>(tiles, max_clusters)};
  grid_ = static_cast<unsigned>(plan.clusters * cluster);
  p.dp_tiles = static_cast<uint32_t>(plan.dp_tiles);
  p.split = plan.split;
  if (plan.split > 1) {
    maps_->kernel = pick_kernel(dtype, act, ping_pong, bm, bn, true).fn;
    FS_CUDA(cudaFuncSetAttribute(maps_->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(maps_->smem)));
    // Per tail tile, CTA and consumer warpgroup: split - 1 slots of 128 threads' accumulators
    // (bn / 2 fp32 each), and a count.
    const uint64_t consumers = (tiles - plan.dp_tiles) * cluster * 2;
    maps_->partials = DeviceBuffer(consumers * (plan.split - 1) * 128 * (bn / 2) * sizeof(float));
    maps_->flags = DeviceBuffer(consumers * sizeof(unsigned));
    FS_CUDA(cudaMemset(maps_->flags.get(), 0, maps_->flags.bytes()));
    p.partials = maps_->partials.as<float>();
    p.flags = maps_->flags.as<unsigned>();
  }
  if (config_.dynamic_tiles) {
    maps_->counter = DeviceBuffer(sizeof(unsigned));
    FS_CUDA(cudaMemset(maps_->counter.get(), 0, maps_->counter.bytes()));
    p.counter = maps_->counter.as<unsigned>();
  }
}

HopperGemm::~HopperGemm() = default;

void HopperGemm::run(const void* a, void* out, cudaStream_t stream) {
  if (is_pass()) throw CudaError("Hopper GEMM: a pass runs with run_pass");
  launch(a, out, nullptr, stream);
}

void HopperGemm::run_pass(const void* x, void* product, void* y, cudaStream_t stream) {
  if (!is_pass()) throw CudaError("Hopper GEMM: run_pass needs a pass");
  auto im = maps_->down_maps.find({product, y});
  if (im == maps_->down_maps.end()) {
    const uint64_t hidden = n_ / 2;
    const DownMaps maps{encode_tma_map_128b(product, rows_, hidden, 128),
                        encode_tma_map_128b(pass_.w_down, pass_.down_n, hidden,
                                            static_cast<uint32_t>(pass_.down_tile_n / 2)),
                        encode_tma_map_128b(y, rows_, pass_.down_n, 64)};
    DownMapsCopy copy{maps, DeviceBuffer()};
    if (pass_.maps_in_global) {
      copy.global = DeviceBuffer(sizeof maps);
      FS_CUDA(cudaMemcpy(copy.global.get(), &maps, sizeof maps, cudaMemcpyHostToDevice));
    }
    im = maps_->down_maps.emplace(std::make_pair(product, y), std::move(copy)).first;
  }
  launch(x, product, &im->second, stream);
}

void HopperGemm::launch(const void* a, void* out, const void* down, cudaStream_t stream) {
  static const DownMapsCopy none{};
  const DownMapsCopy& dm = down ? *static_cast<const DownMapsCopy*>(down) : none;
  maps_->params.down_maps = dm.global.as<const CUtensorMap>();
  const bool ping_pong = config_.schedule == HopperSchedule::kPingPong;
  auto ia = maps_->a.find(a);
  if (ia == maps_->a.end())
    ia = maps_->a
             .emplace(
                 a, encode_tma_map_128b(a, rows_, k_,
                                        (ping_pong ? 64u : static_cast<uint32_t>(config_.tile_m)) /
                                            static_cast<uint32_t>(config_.cluster_n)))
             .first;
  auto io = maps_->out.find(out);
  if (io == maps_->out.end())
    io = maps_->out
             .emplace(out, act_ != Activation::kNone && config_.tile_n == 192
                               ? encode_tma_map_64b(out, rows_, maps_->params.out_cols, 64)
                               : encode_tma_map_128b(out, rows_, maps_->params.out_cols, 64))
             .first;

  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid_);
  cfg.blockDim = dim3(maps_->threads);
  cfg.dynamicSmemBytes = maps_->smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = static_cast<unsigned>(config_.cluster * config_.cluster_n);
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  // Programmatic stream serialization: this launch's CTAs may start on the SMs the kernel before
  // it has left and wait there (griddepcontrol.wait) rather than after its launch's own latency:
  // the post's GeGLU forward pass 166.5-167.1 -> 165.2-165.7 us on the H100.
  cudaLaunchAttribute attrs[2] = {attr, {}};
  attrs[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[1].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attrs;
  cfg.numAttrs = 2;
  FS_CUDA(cudaLaunchKernelEx(&cfg, maps_->kernel, ia->second, maps_->b, io->second, dm.maps,
                             maps_->params));
}

}  // namespace fusionscope::kernels::detail
