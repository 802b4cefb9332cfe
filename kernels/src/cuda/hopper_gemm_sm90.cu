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
// With a split tail (stream-K), the k-blocks of a last, partial wave's tiles are shared out in
// equal contiguous runs, one a cluster, after the whole waves: a cluster's run may end one
// tile's k-blocks, hold whole tiles and start another's. Every piece that does not start its
// tile (at most one a cluster, the first of its run) writes its fp32 sums to the cluster's slot
// of a workspace and counts itself in the tile's flag; the piece that starts the tile, the last
// of its cluster's run, waits for the count, adds the slots in cluster order and runs the
// epilogue. So no piece that others wait for waits itself. Split kernels are built apart
// (kSplit).
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
template <bool kPingPong, bool kPlain, int kBN, int kConsumers = 2>
struct Layout {
  static_assert(kBN == 256 || (!kPingPong && (kBN == 128 || kBN == 192)) ||
                    (!kPingPong && !kPlain && (kBN == 160 || kBN == 224)),
                "256-wide tiles, cooperative 128- or 192-wide ones, or gated cooperative 160- or "
                "224-wide ones");
  static_assert(kConsumers == 2 || (kConsumers == 3 && !kPingPong && kBN == 192 && !kPlain),
                "three consumers: gated cooperative 192 x 192 tiles (96 accumulators each)");
  // Rows a CTA loads per k-block.
  static constexpr int kTileRows = kPingPong ? 64 : 64 * kConsumers;
  static constexpr uint32_t kBytesA = kTileRows * BK * 2;
  static constexpr uint32_t kBytesB = kBN * BK * 2;
  // The output goes out in 64-row boxes of 64 columns, 128-byte-swizzled; a gated 192-wide tile's
  // 96 columns in boxes of 32, 64-byte-swizzled; a gated 160- or 224-wide tile's 80 or 112 in
  // boxes of 16, 32-byte-swizzled (whole boxes, none past the tile's columns).
  static constexpr int kOutCols = kPlain ? kBN : kBN / 2;
  static constexpr int kOutBoxCols = kOutCols % 64 == 0 ? 64 : kOutCols % 32 == 0 ? 32 : 16;
  static constexpr int kOutBoxes = kOutCols / kOutBoxCols;
  static constexpr uint32_t kOutBoxBytes = 64 * kOutBoxCols * 2;
  static constexpr uint32_t kStagingPerWg = kOutBoxes * kOutBoxBytes;
  // As many stages as the rest of the 227 KiB leaves room for (3 to 6).
  // Per stage: its A and B, its two barriers and (dynamic tiles) the number of its tile; fixed:
  // the staging, the alignment, three barriers and the tile numbers' ring.
  static constexpr size_t kFixedBytes = kConsumers * kStagingPerWg + 1024 + 3 * 8 + kTileRing * 12;
  static constexpr int kStages =
      static_cast<int>(std::min<size_t>(6, (232448 - kFixedBytes) / (kBytesA + kBytesB + 20)));
  static constexpr size_t kSmemBytes = size_t{kStages} * (kBytesA + kBytesB) +
                                       kConsumers * kStagingPerWg + (2 * kStages + 3) * 8 +
                                       kStages * 4 + kTileRing * 12 + 1024;
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
  // Split tail (plan_split_tail): the tiles from dp_tiles on are shared out as sk_units
  // k-blocks in runs over the first sk_clusters clusters (sk_run_start). A piece that does not
  // start its tile writes its fp32 accumulators to its cluster's slot of `partials` and counts
  // itself in the tile's flag; the piece that starts it waits for the others there, adds their
  // sums, runs the epilogue and clears the flag for the next launch. split: the most pieces of
  // a tile (1: every tile whole).
  uint32_t dp_tiles;
  uint32_t sk_units;
  uint32_t sk_clusters;
  uint32_t split;
  float* partials;
  unsigned* flags;
};

// Tiles of the launch: a ragged last cluster-row (Params::ragged) has its pairs side by side.
__host__ __device__ __forceinline__ uint32_t tile_count(const Params& p) {
  return p.ragged ? (p.tiles_mc - 1) * p.tiles_n + (p.tiles_n + 1) / 2 : p.tiles_mc * p.tiles_n;
}

#ifdef FS_SM90A
#include "wgmma_m64n128k16.inc"
#include "wgmma_m64n160k16.inc"
#include "wgmma_m64n192k16.inc"
#include "wgmma_m64n224k16.inc"
#include "wgmma_m64n256k16.inc"
using namespace sm90;

// One k16 step of a warpgroup's 64 x kBN tile.
template <typename T, int kBN>
__device__ __forceinline__ void wgmma_tile(float (&d)[kBN / 2], uint64_t da, uint64_t db,
                                           int scale_d) {
  if constexpr (kBN == 256)
    wgmma_m64n256k16<T>(d, da, db, scale_d);
  else if constexpr (kBN == 224)
    wgmma_m64n224k16<T>(d, da, db, scale_d);
  else if constexpr (kBN == 192)
    wgmma_m64n192k16<T>(d, da, db, scale_d);
  else if constexpr (kBN == 160)
    wgmma_m64n160k16<T>(d, da, db, scale_d);
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

#endif  // FS_SM90A

// The cluster whose run holds the split tail's k-block x: the last c with sk_run_start(c) <= x.
__host__ __device__ __forceinline__ uint32_t sk_owner(uint64_t x, uint64_t units, uint64_t sk) {
  return static_cast<uint32_t>(((x + 1) * sk - 1) / units);
}

#ifdef FS_SM90A
// The split tail's k-block where cluster c's run starts (c == sk: the end of the last run).
__device__ __forceinline__ uint32_t sk_run_start(uint64_t c, uint64_t units, uint64_t sk) {
  return static_cast<uint32_t>(c * units / sk);
}
// A cluster's work item: tile `tile` over k-blocks [kb0, kb0 + count); kind kWhole (the whole
// tile), kStart (a split tile's first piece: waits for the rest and finishes it) or kRest (a
// later piece: leaves its sums for the first).
enum : uint32_t { kWhole, kStart, kRest };
struct WorkItem {
  uint32_t tile, kind, kb0, count;
};
// A cluster's sequence of work items (split kernels): its whole tiles in stride, then its run
// of the tail's k-blocks cut at tile boundaries.
struct WorkList {
  uint32_t next, unit, end;
  __device__ __forceinline__ WorkList(uint32_t cid, const Params& p) : next(cid), unit(0), end(0) {
    if (cid < p.sk_clusters) {
      unit = sk_run_start(cid, p.sk_units, p.sk_clusters);
      end = sk_run_start(cid + 1, p.sk_units, p.sk_clusters);
    }
  }
  __device__ __forceinline__ bool pop(const Params& p, uint32_t clusters, WorkItem& item) {
    if (next < p.dp_tiles) {
      item = {next, kWhole, 0, p.kblocks};
      next += clusters;
      return true;
    }
    if (unit >= end) return false;
    const uint32_t t = unit / p.kblocks, kb0 = unit - t * p.kblocks;
    const uint32_t stop = min(end, (t + 1) * p.kblocks);
    item = {p.dp_tiles + t, kb0 > 0 ? kRest : (stop - unit == p.kblocks ? kWhole : kStart), kb0,
            stop - unit};
    unit = stop;
    return true;
  }
};
#endif  // FS_SM90A

// kSplit: built for a split tail (Params::split > 1); without it the kernel takes every tile
// whole and carries none of the split's code.
template <typename T, Activation A, bool kPingPong, int kBN, bool kSplit, int kConsumers = 2>
__global__ void __launch_bounds__(threads_for(kConsumers), 1)
    hopper_gemm_kernel(const __grid_constant__ CUtensorMap tmap_a,
                       const __grid_constant__ CUtensorMap tmap_b,
                       const __grid_constant__ CUtensorMap tmap_out, const Params p) {
#ifdef FS_SM90A
  constexpr bool kPlain = A == Activation::kNone;
  using L = Layout<kPingPong, kPlain, kBN, kConsumers>;
  constexpr int kStages = L::kStages;
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
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (cluster > 1) cluster_sync();  // the peer's barriers exist before anything reaches them
  asm volatile("griddepcontrol.wait;\n" ::: "memory");

  const uint32_t clusters = gridDim.x / cluster;
  const uint32_t cid = blockIdx.x / cluster;
  const uint32_t tiles = tile_count(p);
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
        tile_coords(t, p, mc, nt, side);
        const int m0 = static_cast<int>((mc * cm + (side ? 0 : rm)) * L::kTileRows);
        const int n0 = static_cast<int>((side ? nt * 2 + rm : nt * cn + rn) * kBN);
        // Along N, the CTAs of one row of the cluster (ranks rm, rm + cm) share A: each loads
        // half of its rows for both. Along M, those of one column (ranks cm * rn, + 1) share B.
        const uint16_t mask_a = static_cast<uint16_t>((1u << rm) | (1u << (rm + cm)));
        const uint16_t mask_b = static_cast<uint16_t>(3u << (cm * rn));
        const int a_half = static_cast<int>(rn) * (L::kTileRows / 2);
        const int b_half = static_cast<int>(rm) * (kBN / 2);
        const bool backward = p.k_serpentine != 0 && (local & 1) != 0;
        for (uint32_t kb = 0; kb < count; ++kb, ++it) {
          const uint32_t s = it % kStages, round = it / kStages;
          const uint32_t full_s = full_u32 + s * 8;
          if (!armed || kb > 0) {
            if (round > 0) mbar_wait<true>(empty_u32 + s * 8, (round - 1) & 1);
            mbar_expect_tx(full_s, L::kBytesA + L::kBytesB);
          }
          const int k0 = static_cast<int>(kb0 + (backward ? count - 1 - kb : kb)) * BK;
          const uint32_t a_dst = tiles_a_u32 + s * L::kBytesA;
          const uint32_t b_dst = tiles_b_u32 + s * L::kBytesB;
          if (side) {  // A and B whole, B in its two half boxes
            tma_load_hint(a_dst, &tmap_a, full_s, k0, m0, p.policy_a);
            tma_load_hint(b_dst, &tmap_b, full_s, k0, n0, p.policy_b);
            tma_load_hint(b_dst + (kBN / 2) * 128, &tmap_b, full_s, k0, n0 + kBN / 2, p.policy_b);
            continue;
          }
          if (cn == 1) {
            tma_load_hint(a_dst, &tmap_a, full_s, k0, m0, p.policy_a);
          } else {
            tma_load_multicast_hint(a_dst + a_half * 128, &tmap_a, full_s, k0, m0 + a_half, mask_a,
                                    p.policy_a);
          }
          if (cm == 1) {
            tma_load_hint(b_dst, &tmap_b, full_s, k0, n0, p.policy_b);
          } else {
            tma_load_multicast_hint(b_dst + b_half * 128, &tmap_b, full_s, k0, n0 + b_half, mask_b,
                                    p.policy_b);
          }
        }
      };
      if (kPingPong || p.counter == nullptr) {
        uint32_t local = 0;
        if constexpr (kSplit) {
          WorkList work(cid, p);
          for (WorkItem item{}; work.pop(p, clusters, item); ++local)
            load_tile(item.tile, local, false, item.kb0, item.count);
        } else {
          for (uint32_t w = cid; w < tiles; w += clusters, ++local)
            load_tile(w, local, false, 0, kblocks);
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
          mbar_expect_tx(full_u32 + s * 8, (more ? L::kBytesA + L::kBytesB : 0) + 4);
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
    auto epilogue = [&](uint32_t m0, uint32_t n0, auto pair) {
      // The previous tile's TMA stores must have read the staging buffer.
      if (tid == 0) bulk_wait_read_all();
      named_sync(1 + c);
      // Accumulator n8 chunk j: columns 8j + 2 (lane % 4) + {0, 1} of rows r and r + 8 (r = warp *
      // 16 + lane / 4), once packed exactly a stmatrix fragment: each stmatrix.x4 stores output
      // chunks c and c + 1 of this warp's 16 rows as four 8 x 8 matrices, lanes 8i..8i+7 giving
      // the rows of matrix i (rows + 8 for odd i, chunk c + 1 for i >= 2), at the TMA box's
      // swizzled positions (conflict-free: 128-byte rows, the 8 rows of a matrix differ in
      // row % 8; 64-byte rows, the pairs of rows differ in row / 2 % 4; 32-byte rows, the
      // fours of rows differ in row / 4 % 2).
      const uint32_t row = warp * 16 + ((lane >> 3) & 1) * 8 + (lane & 7);
      constexpr int kBoxChunks = L::kOutBoxCols / 8;
      const uint32_t row_at = staging_u32 + row * (kBoxChunks * 16), cb = lane >> 4;
      const uint32_t x = kBoxChunks == 8   ? (lane & 7)
                         : kBoxChunks == 4 ? (row >> 1) & 3
                                           : (row >> 2) & 1;
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
    [[maybe_unused]] WorkList work(cid, p);
    [[maybe_unused]] uint32_t it_done = 0;  // split kernels: k-blocks of the items before
    for (uint32_t dealt = cid;; dealt += clusters, ++local) {
      WorkItem item{dealt, kWhole, 0, kblocks};
      if (dynamic) {  // the tile the producer put in this tile's first stage
        const uint32_t it0 = local * kblocks;
        mbar_wait<true>(full_u32 + (it0 % kStages) * 8, (it0 / kStages) & 1);
        item.tile = stage_tile[it0 % kStages];
        // Every thread has read it before thread 0 releases the stage to the producer.
        named_sync(1 + c);
      } else if (kSplit) {  // without a split, t >= tiles below ends the sequence
        if (!work.pop(p, clusters, item)) break;
      }
      const uint32_t t = item.tile;
      if (t >= tiles) break;
      if (kPingPong && (local & 1) != static_cast<uint32_t>(c)) continue;
      if (kPingPong && local > 0) mbar_wait<true>(&order[c], turns++ & 1);
      uint32_t mc, nt;
      bool side;
      tile_coords(t, p, mc, nt, side);
      const uint32_t m0 = (mc * cm + (side ? 0 : rm)) * L::kTileRows +
                          (kPingPong ? 0 : static_cast<uint32_t>(c) * 64);
      const uint32_t n0 = (side ? nt * 2 + rm : nt * cn + rn) * kBN;
      const uint32_t a_offset = kPingPong ? 0 : static_cast<uint32_t>(c) * 64 * 128;
      // Low words of stage 0's descriptors; stage s and k-step kk are offsets in 16-byte units.
      const uint32_t desc_a = smem_desc_lo(tiles_a_u32 + a_offset);
      const uint32_t desc_b = smem_desc_lo(tiles_b_u32);
      // The stagger's signal: the k-block after which the first consumer opens `lead` (never
      // for the others, nor after its first tile).
      const uint32_t lead_kb =
          (!kPingPong && c == 0 && local == 0 && lead_at > 0) ? lead_at - 1 : 0xFFFFFFFFu;

      // Main loop. The stage and its phase step along; this warpgroup's k-blocks start at
      // local * kblocks in the CTA's sequence (ping-pong skips the other warpgroup's tiles), or
      // after the k-blocks of the items before (split kernels: pieces are shorter).
      const uint32_t it0 = kSplit ? it_done : local * kblocks;
      if constexpr (kSplit) it_done += item.count;
      uint32_t s = it0 % kStages, phase = (it0 / kStages) & 1;
      uint32_t prev = 0;
      for (uint32_t kb = 0; kb < item.count; ++kb) {
        mbar_wait<true>(full_u32 + s * 8, phase);
        const uint32_t da = desc_a + s * (L::kBytesA >> 4);
        const uint32_t db = desc_b + s * (L::kBytesB >> 4);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)  // 16 elements = 32 bytes along the swizzled row
          wgmma_tile<T, kBN>(d, smem_desc_from_lo(da + kk * 2), smem_desc_from_lo(db + kk * 2),
                             (kb > 0 || kk > 0) ? 1 : 0);
        wgmma_commit();
        if constexpr (kDefer) {
          if (holding && kb == kDeferAfter) finish_held();
        }
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
      if (kPingPong && tid == 0) mbar_arrive(&order[c ^ 1]);  // every full wait of this tile passed
      wgmma_wait<0>();
      if (tid == 0) release(prev);
      if constexpr (kDefer) {
        if (holding) finish_held();  // a tile of at most kDeferAfter k-blocks
#pragma unroll
        for (int j = 0; j < kOutPairs; ++j) held[j] = out_pair(j);
        holding = true;
        held_m0 = m0;
        held_n0 = n0;
        continue;
      }

      // A split tile: every piece but the first leaves its sums in its cluster's slot for the
      // first, which adds them before the epilogue. Each thread's accumulators go to the same
      // place in every slot, 16-byte words strided by the warpgroup (coalesced, no shared
      // memory).
      if (kSplit && item.kind != kWhole) {
        constexpr uint32_t kSlotWords = 128 * (kBN / 8);  // float4s a consumer's slot
        const uint32_t me = rank * kConsumers + static_cast<uint32_t>(c);
        unsigned* flag = p.flags + (t - p.dp_tiles) * cluster * kConsumers + me;
        auto slot = [&](uint32_t of_cluster) {
          return reinterpret_cast<float4*>(p.partials) +
                 (size_t{of_cluster} * cluster * kConsumers + me) * kSlotWords + tid;
        };
        if (item.kind == kRest) {
          float4* mine = slot(cid);
#pragma unroll
          for (int i = 0; i < kBN / 8; ++i)
            __stcg(mine + i * 128, make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]));
          named_sync(1 + c);
          if (tid == 0) red_release_add(flag, 1);
          continue;
        }
        // The clusters after this one whose runs hold the rest of the tile.
        const uint32_t last =
            sk_owner(uint64_t{t - p.dp_tiles + 1} * kblocks - 1, p.sk_units, p.sk_clusters);
        if (tid == 0)
          while (ld_acquire(flag) < last - cid) __nanosleep(64);
        named_sync(1 + c);
        for (uint32_t j = cid + 1; j <= last; ++j) {
          const float4* theirs = slot(j);
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
    if (tid == 0) bulk_wait_all();
  }
  // No CTA leaves while its peer may still arrive on its barriers.
  if (cluster > 1) cluster_sync();
#endif  // FS_SM90A
}

using KernelFn = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, Params);

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

// Gated 160- and 224-wide tiles: cooperative, tiles whole (the constructor refuses a split).
template <typename T, Activation A, int kBN>
KernelChoice choice_whole() {
  return {&hopper_gemm_kernel<T, A, false, kBN, false>, Layout<false, false, kBN, 2>::kSmemBytes,
          threads_for(2)};
}

template <typename T>
KernelChoice pick_kernel_typed(Activation act, bool ping_pong, int tile_m, int tile_n, bool split) {
  KernelChoice k;
  dispatch_activation(act, [&]<Activation A>() {
    if (ping_pong)
      k = choice<T, A, true, 256>(false);
    else if (tile_m == 192) {
      if constexpr (A != Activation::kNone) k = choice<T, A, false, 192, 3>(false);
    } else if (tile_n == 160 || tile_n == 224) {
      if constexpr (A != Activation::kNone)
        k = tile_n == 160 ? choice_whole<T, A, 160>() : choice_whole<T, A, 224>();
    } else if (tile_n == 128)
      k = choice<T, A, false, 128>(split);
    else if (tile_n == 192)
      k = choice<T, A, false, 192>(split);
    else
      k = choice<T, A, false, 256>(split);
  });
  return k;
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
  SplitTail plan{.dp_tiles = tiles, .clusters = std::min(tiles, max_clusters)};
  if (tiles == 0 || max_clusters == 0 || kblocks == 0) return plan;
  const uint64_t rem = tiles % max_clusters;
  // A last wave nearly full gains less than its pieces' sums cost to add (at 1280 x 4096 -> 2
  // x 3072, 54 tiles on 66 clusters, it took 6% longer at the power cap).
  if (rem == 0 || rem * 4 > max_clusters * 3) return plan;
  const uint64_t units = rem * kblocks;
  uint64_t sk = 0;
  if (rem * 2 <= max_clusters) {
    // Each tile in `split` equal pieces, none across a tile's end: the fewest sums to add.
    const uint64_t split = std::min<uint64_t>(
        {max_clusters / rem, kblocks / kMinSplitKblocks, static_cast<uint64_t>(kMaxSplit)});
    if (split < 2) return plan;
    sk = rem * split;
  } else {
    // Runs of more than half a tile on every cluster, each the end of one tile and the start
    // of the next.
    sk = std::min<uint64_t>(max_clusters, units / kMinSplitKblocks);
    if (sk <= rem) return plan;
  }
  plan.dp_tiles = tiles - rem;
  plan.units = units;
  plan.sk_clusters = static_cast<uint32_t>(sk);
  plan.clusters = plan.dp_tiles > 0 ? max_clusters : sk;
  for (uint64_t t = 0; t < rem; ++t) {
    const uint32_t pieces =
        sk_owner((t + 1) * kblocks - 1, units, sk) - sk_owner(t * kblocks, units, sk) + 1;
    plan.split = std::max(plan.split, pieces);
  }
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

struct HopperGemm::Maps {
  CUtensorMap b{};
  std::map<const void*, CUtensorMap> a, out;
  KernelFn kernel = nullptr;
  size_t smem = 0;
  unsigned threads = 0;
  Params params{};
  DeviceBuffer counter;          // dynamic tiles: back at zero after every launch
  DeviceBuffer partials, flags;  // split tail: the parts' sums, and each tail tile's count
};

uint32_t HopperGemm::split() const {
  return maps_->params.split;
}

HopperGemm::HopperGemm(DType dtype, Activation act, uint64_t rows, uint64_t n, uint64_t k,
                       const void* b, HopperGemmConfig config, int device)
    : dtype_(dtype), act_(act), rows_(rows), n_(n), k_(k), config_(config) {
  if ((config_.cluster != 1 && config_.cluster != 2) ||
      (config_.cluster_n != 1 && config_.cluster_n != 2))
    throw CudaError("Hopper GEMM: cluster sides must be 1 or 2");
  if (config_.group_m < 1) throw CudaError("Hopper GEMM: group_m must be positive");
  const bool ping_pong = config_.schedule == HopperSchedule::kPingPong;
  const int bn = config_.tile_n;
  if (bn != 256 && (ping_pong || (bn != 128 && bn != 192 && bn != 160 && bn != 224)))
    throw CudaError("Hopper GEMM: tiles are 256 wide, or cooperative 128, 160, 192 or 224 wide");
  if ((bn == 160 || bn == 224) && (act == Activation::kNone || config_.tile_m != 128 ||
                                   config_.split_tail || config_.dynamic_tiles))
    throw CudaError(
        "Hopper GEMM: 160- and 224-wide tiles are gated, 128 rows, whole and dealt in stride");
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
  const KernelChoice kernel = pick_kernel(dtype, act, ping_pong, bm, bn, false);
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
  p.ragged = !ping_pong && bm == 128 && cm == 2 && cn == 1 && !config_.raster_n && last_rows > 0 &&
             last_rows <= 128;
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
  const uint64_t tiles = tile_count(p);
  waves_ = (tiles + static_cast<uint64_t>(max_clusters) - 1) / static_cast<uint64_t>(max_clusters);
  const SplitTail plan =
      config_.split_tail
          ? plan_split_tail(tiles, static_cast<uint64_t>(max_clusters), p.kblocks)
          : SplitTail{.dp_tiles = tiles, .clusters = std::min<uint64_t>(tiles, max_clusters)};
  grid_ = static_cast<unsigned>(plan.clusters * cluster);
  p.dp_tiles = static_cast<uint32_t>(plan.dp_tiles);
  p.sk_units = static_cast<uint32_t>(plan.units);
  p.sk_clusters = plan.sk_clusters;
  p.split = plan.split;
  if (plan.split > 1) {
    maps_->kernel = pick_kernel(dtype, act, ping_pong, bm, bn, true).fn;
    FS_CUDA(cudaFuncSetAttribute(maps_->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(maps_->smem)));
    // Per cluster of the split, CTA and consumer warpgroup: a slot of 128 threads' accumulators
    // (bn / 2 fp32 each); per tail tile, CTA and consumer warpgroup, a count.
    maps_->partials =
        DeviceBuffer(uint64_t{plan.sk_clusters} * cluster * 2 * 128 * (bn / 2) * sizeof(float));
    maps_->flags = DeviceBuffer((tiles - plan.dp_tiles) * cluster * 2 * sizeof(unsigned));
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
  const bool ping_pong = config_.schedule == HopperSchedule::kPingPong;
  auto ia = maps_->a.find(a);
  if (ia == maps_->a.end())
    ia = maps_->a
             .emplace(
                 a, encode_tma_map_128b(a, rows_, k_,
                                        (ping_pong ? 64u : static_cast<uint32_t>(config_.tile_m)) /
                                            static_cast<uint32_t>(config_.cluster_n)))
             .first;
  // The output's boxes, as the kernel's Layout stores them: 64, 32 or 16 columns.
  const int out_tile_cols = act_ == Activation::kNone ? config_.tile_n : config_.tile_n / 2;
  auto io = maps_->out.find(out);
  if (io == maps_->out.end())
    io = maps_->out
             .emplace(out, out_tile_cols % 64 == 0
                               ? encode_tma_map_128b(out, rows_, maps_->params.out_cols, 64)
                           : out_tile_cols % 32 == 0
                               ? encode_tma_map_64b(out, rows_, maps_->params.out_cols, 64)
                               : encode_tma_map_32b(out, rows_, maps_->params.out_cols, 64))
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
  FS_CUDA(cudaLaunchKernelEx(&cfg, maps_->kernel, ia->second, maps_->b, io->second, maps_->params));
}

}  // namespace fusionscope::kernels::detail
