#include "fusionscope/counters/l2_flush.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fusionscope::counters {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("L2 sweep: ") + what + ": " + cudaGetErrorString(e));
}

// Loads 16 bytes with the L2's evict-last priority. Lines a kernel loaded with an evict-last hint
// (a GEMM keeping an operand in the L2) outlive any number of normal-priority loads: measured on
// an H200, 8 MB of the gated GEMM's operands were still in the L2 after a 180 MB sweep of plain
// loads (docs/counters.md). Loads of the same priority displace them as they displace any line.
__device__ __forceinline__ uint4 load_evict_last(const uint4* p, uint64_t policy) {
  uint4 v;
  asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(policy));
  return v;
}

// Reads every 16 bytes of the buffer once, at evict-last priority; the sum is stored only in a
// case that never happens, so the loads stay and nothing is written. The last block to finish its
// reads (a ticket taken after a fence) then treats every 128-byte line of the buffer: with
// `discard` it drops the line from the L2 without writing it back (an empty L2, as after Nsight
// Compute's invalidation), else it returns the line to normal priority (an L2 of clean lines that
// the next kernel evicts as it would any). Only the last block: by then every block's reads are
// done, so the three-fold read has already evicted (written back) every foreign dirty line; lines
// freed earlier would be refilled by the remaining reads instead of their evicting what is left.
// The buffer's contents are undefined after a discard, which costs nothing: its values are never
// used.
__global__ void sweep_kernel(const uint4* __restrict__ src, size_t n, uint32_t* sink,
                             uint32_t* ticket, bool discard) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  uint32_t acc = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint4 v = load_evict_last(src + i, policy);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
#else
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint4 v = src[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
#endif
  if (acc == 0x9e3779b9u && threadIdx.x == 0xffffu) *sink = acc;
  __shared__ bool last;
  __syncthreads();  // every thread of the block has its loaded values
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const char* base = reinterpret_cast<const char*>(src);
  const size_t lines = n * sizeof(uint4) / 128;
  if (discard) {
    for (size_t i = threadIdx.x; i < lines; i += blockDim.x)
      asm volatile("discard.global.L2 [%0], 128;" ::"l"(base + i * 128) : "memory");
  } else {
    for (size_t i = threadIdx.x; i < lines; i += blockDim.x)
      asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(base + i * 128)
                   : "memory");
  }
#endif
  if (threadIdx.x == 0) *ticket = 0;  // for the next sweep, which the stream orders after this one
}

}  // namespace

struct L2Flusher::Impl {
  size_t l2 = 0;
  size_t bytes = 0;
  size_t count = 0;
  int blocks = 0;
  bool discard = false;
  void* buffer = nullptr;
  uint32_t* sink = nullptr;  // [0] the sink, [1] the ticket of the blocks that finished reading

  void launch(cudaStream_t stream) const {
    sweep_kernel<<<blocks, 512, 0, stream>>>(static_cast<const uint4*>(buffer), bytes / 16, sink,
                                             sink + 1, discard);
  }
};

L2Flusher::L2Flusher(int device, double l2_multiple, L2SweepEnd end)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.discard = end == L2SweepEnd::kEmpty;
  check(cudaSetDevice(device), "selecting the device");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "reading the device's properties");
  d.l2 = static_cast<size_t>(std::max(prop.l2CacheSize, 1 << 20));
  d.bytes = (static_cast<size_t>(static_cast<double>(d.l2) * l2_multiple) + 4095) / 4096 * 4096;
  d.blocks = prop.multiProcessorCount * 4;
  check(cudaMalloc(&d.buffer, d.bytes), "allocating the sweep buffer");
  check(cudaMalloc(reinterpret_cast<void**>(&d.sink), 2 * sizeof(uint32_t)), "allocating the sink");
  check(cudaMemset(d.sink, 0, 2 * sizeof(uint32_t)), "clearing the sink");
  check(cudaMemset(d.buffer, 0x5a, d.bytes), "filling the sweep buffer");
  // One sweep now, before any profiling: with lazy module loading the first launch loads the
  // kernel, which must not happen inside a profiled launch's callback (injected capture).
  d.launch(nullptr);
  check(cudaGetLastError(), "launching the first sweep");
  check(cudaDeviceSynchronize(), "filling the sweep buffer");
}

L2Flusher::~L2Flusher() {
  cudaFree(impl_->buffer);
  cudaFree(impl_->sink);
}

void L2Flusher::flush(void* stream) {
  Impl& d = *impl_;
  d.launch(static_cast<cudaStream_t>(stream));
  check(cudaGetLastError(), "launching the sweep");
  ++d.count;
}

size_t L2Flusher::l2_bytes() const {
  return impl_->l2;
}
size_t L2Flusher::buffer_bytes() const {
  return impl_->bytes;
}
size_t L2Flusher::flushes() const {
  return impl_->count;
}

}  // namespace fusionscope::counters
