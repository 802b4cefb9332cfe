// PTX wrappers for the Hopper (sm_90a) kernels: mbarriers, TMA loads and stores, clusters,
// wgmma fences and shared-memory matrix descriptors, and the epilogue activations. Device code
// for the sm_90a pass only (FS_SM90A).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "element.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FS_SM90A 1
#endif

namespace fusionscope::kernels::detail {
// The createpolicy encodings of the L2 eviction priorities (fraction 1.0), as CUTLASS uses them,
// for the .L2::cache_hint forms of the TMA loads below (kernels use them directly, or as
// parameters the host chose).
inline constexpr uint64_t kL2EvictNormal = 0x1000000000000000ull;
inline constexpr uint64_t kL2EvictFirst = 0x12F0000000000000ull;
inline constexpr uint64_t kL2EvictLast = 0x14F0000000000000ull;
}  // namespace fusionscope::kernels::detail

#ifdef FS_SM90A
namespace fusionscope::kernels::detail::sm90 {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// The wrappers below also take shared-memory addresses as 32-bit integers (smem_u32), which a
// kernel computes once: the generic-to-shared conversion is not hoisted out of loops otherwise.
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  mbar_expect_tx(smem_u32(bar), bytes);
}
// Arrive on the barrier at the same offset in CTA `rank` of the cluster (this CTA included).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
  asm volatile(
      "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar),
      "r"(rank)
      : "memory");
}
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, uint32_t rank) {
  mbar_arrive_cluster(smem_u32(bar), rank);
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  mbar_arrive(smem_u32(bar));
}
// Stops a wait that never ends (a bug) with a trap instead of a hung GPU; called, not inlined,
// by mbar_wait<true>.
__device__ __noinline__ static void mbar_wait_timed_out() {
  __trap();
}
// Spins on the phase; a wait that never ends traps. kTrapCall: through a call. With a trap in
// its code, ptxas gives a warpgroup that raises its registers (setmaxnreg.inc) only the launch's
// even share of them (168 of 384 threads): the Hopper GEMM's consumers, which hold more, wait
// with the call. The fully fused MLP (no setmaxnreg) keeps the trap inline: with the call its
// 32-wide bf16 SiLU kernel allocated 74 registers where it had 83 and took 54.7 us, not 50.9.
template <bool kTrapCall = false>
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0, spins = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    if (++spins == (1u << 22)) {
      if constexpr (kTrapCall)
        mbar_wait_timed_out();
      else
        __trap();
    }
  } while (!done);
}
template <bool kTrapCall = false>
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  mbar_wait<kTrapCall>(smem_u32(bar), parity);
}

// A claim from a counter the blocks of a launch share: the counter's value, which steps to the
// next, or back to zero after `last` (so that last + 1 claims leave it at zero for the next
// launch). A wrapping increment, not an add: the compiler spreads an add's result over the warp
// with a shuffle right after it (one atomic for the warp's active lanes), and that shuffle waited
// for the round trip. An increment that wraps cannot be combined that way, and it needs no 64-bit
// remainder.
__device__ __forceinline__ uint32_t claim_wrapping(unsigned* counter, uint32_t last) {
  uint32_t n;
  asm volatile("atom.global.inc.u32 %0, [%1], %2;" : "=r"(n) : "l"(counter), "r"(last));
  return n;
}

// A flag between CTAs of a grid (the split tail's): the writer's earlier stores, and those of
// the threads that met it at a barrier first, are seen by a reader whose acquire load sees its
// count (the release is cumulative).
__device__ __forceinline__ void red_release_add(unsigned* flag, uint32_t v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(flag), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t ld_acquire(const unsigned* flag) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
  return v;
}

// A 32-bit word stored at `dst` in the shared memory of CTA `rank` of the cluster (a cluster of
// at least 2 CTAs; this CTA included), asynchronously, its 4 bytes completing on the barrier at
// `bar` there, as a TMA load's do: whoever waits on that barrier then sees the word. dst and bar
// are this CTA's shared-memory addresses of the same objects.
__device__ __forceinline__ void st_async_u32(uint32_t dst, uint32_t value, uint32_t bar,
                                             uint32_t rank) {
  asm volatile(
      "{\n.reg .b32 rd, rb;\nmapa.shared::cluster.u32 rd, %0, %3;\n"
      "mapa.shared::cluster.u32 rb, %2, %3;\n"
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [rd], %1, [rb];\n}\n" ::"r"(dst),
      "r"(value), "r"(bar), "r"(rank)
      : "memory");
}

__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
__device__ __forceinline__ void named_sync(uint32_t id) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory");
}

__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, uint64_t* bar, int c0,
                                         int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
      : "memory");
}
// The same with an L2 cache policy (the 64-bit createpolicy encoding); dst and bar as
// shared-memory addresses.
__device__ __forceinline__ void tma_load_hint(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                              int c0, int c1, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "l"(policy)
      : "memory");
}
// The box lands at the same offset in every CTA of `mask`, completing on each one's `bar`.
__device__ __forceinline__ void tma_load_multicast(void* dst, const CUtensorMap* map, uint64_t* bar,
                                                   int c0, int c1, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void tma_load_multicast_hint(uint32_t dst, const CUtensorMap* map,
                                                        uint32_t bar, int c0, int c1, uint16_t mask,
                                                        uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster.L2::cache_hint [%0], [%1, {%3, %4}], [%2], %5, %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "h"(mask), "l"(policy)
      : "memory");
}
__device__ __forceinline__ void tma_store(const CUtensorMap* map, uint32_t src, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          reinterpret_cast<uint64_t>(map)),
      "r"(src), "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ void tma_store(const CUtensorMap* map, const void* src, int c0, int c1) {
  tma_store(map, smem_u32(src), c0, c1);
}
__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void bulk_wait_read_all() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
__device__ __forceinline__ void bulk_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Four 8 x 8 matrices of 16-bit elements from the registers of a warp: register i of each thread
// holds its pair (row lane / 4, columns 2 (lane % 4) + {0, 1}) of matrix i, the layout of a
// wgmma accumulator's n8 chunk once packed; lanes 8i..8i+7 give the addresses of matrix i's rows.
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                            uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}
__device__ __forceinline__ void st_shared_u32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

// Shared-memory matrix descriptor: K-major, 128-byte swizzle, 8-row groups 1024 bytes apart.
// The address field holds bits 4..17 of the address: adding (bytes >> 4) to a descriptor moves
// it by that many bytes within shared memory.
// The high word is the same for every such descriptor (stride 1024 >> 4, 128-byte swizzle), so a
// k-loop can step the low word alone with 32-bit adds: the address field never carries out of
// it (shared memory is under 256 KiB).
constexpr uint32_t kSmemDescHi = (1024 >> 4) | (1u << 30);
__device__ __forceinline__ uint32_t smem_desc_lo(uint32_t addr) {
  return ((addr & 0x3FFFF) >> 4) | (1u << 16);
}
__device__ __forceinline__ uint64_t smem_desc_from_lo(uint32_t lo) {
  return (uint64_t{kSmemDescHi} << 32) | lo;
}
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr) {
  return smem_desc_from_lo(smem_desc_lo(addr));
}
__device__ __forceinline__ uint64_t smem_desc(const void* p) {
  return smem_desc(smem_u32(p));
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Activations for the epilogue, one hardware tanh each (SiLU as x/2 * (1 + tanh(x/2))).
template <Activation A>
__device__ __forceinline__ float epilogue_act(float x) {
  if constexpr (A == Activation::kGeluTanh) {
    const float inner = x * fmaf(0.7978845608028654f * 0.044715f, x * x, 0.7978845608028654f);
    const float hx = 0.5f * x;
    return fmaf(hx, tanh_fast(inner), hx);
  } else if constexpr (A == Activation::kSilu) {
    const float hx = 0.5f * x;
    return fmaf(hx, tanh_fast(hx), hx);
  } else if constexpr (A == Activation::kRelu) {
    return fmaxf(x, 0.f);
  } else {
    return x;
  }
}

// Byte offset of (row, 16-byte chunk) in a 64-row x 128-byte box, 128-byte swizzle (the layout
// TMA expects): chunk c of row r sits at chunk c ^ (r % 8). A warp's 32 stores of one chunk
// column hit 32 different banks.
__device__ __forceinline__ uint32_t swizzled(uint32_t row, uint32_t chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}
}  // namespace fusionscope::kernels::detail::sm90
#endif  // FS_SM90A
