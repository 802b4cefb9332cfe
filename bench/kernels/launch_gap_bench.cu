// launch_gap_bench: how long a GPU stands between one kernel's end and the next one's start on
// one stream, by the kernels' own clocks, as a function of what the kernels ask for (dynamic
// shared memory, threads, a cluster) and of what the first one leaves behind (writes in flight).
//
// Every block stamps %globaltimer when it starts and when it ends; the gap after launch i is the
// earliest start of launch i + 1 less the latest end of launch i, so neither the host nor a
// profiler is in the measurement. Each case runs `--launches` back to back (and again replayed
// from a CUDA graph) and prints the median and the quartiles of its gaps, in ns.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sm90_ptx.cuh"
#include "tma_map.h"

namespace {

namespace fk = fusionscope::kernels::detail;

#define CHECK(x)                                                                      \
  do {                                                                                \
    const cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "launch_gap_bench: %s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Block b's start (t0) and end, after every thread of it is done.
__device__ __forceinline__ void stamp(uint64_t* stamps, uint64_t t0) {
  if (threadIdx.x == 0) {
    stamps[2 * blockIdx.x] = t0;
    stamps[2 * blockIdx.x + 1] = global_ns();
  }
}

// Spins `spin_ns`, then (if `out`) writes `bytes_per_block` of it, then stamps. The dynamic
// shared memory is only reserved: what counts is what the launch asks of the SM.
__global__ void stamp_kernel(uint64_t* stamps, uint32_t spin_ns, uint4* out,
                             uint32_t vecs_per_block) {
  const uint64_t t0 = global_ns();
  while (global_ns() - t0 < spin_ns) {
  }
  if (out != nullptr) {
    uint4* mine = out + static_cast<size_t>(blockIdx.x) * vecs_per_block;
    for (uint32_t i = threadIdx.x; i < vecs_per_block; i += blockDim.x)
      mine[i] = make_uint4(i, blockIdx.x, 0, 0);
  }
  __syncthreads();
  stamp(stamps, t0);
}

// The parts of a TMA kernel's launch, one at a time: four tensor maps as parameters (prefetched
// or not), one box loaded at the start, one stored at the end and waited for.
enum class Tma { kNone, kMaps, kPrefetch, kLoad, kStore, kLoadStore };

struct Maps {
  CUtensorMap in, out, spare0, spare1;
};

__global__ void tma_stamp_kernel(const __grid_constant__ CUtensorMap in,
                                 const __grid_constant__ CUtensorMap out,
                                 const __grid_constant__ CUtensorMap spare0,
                                 const __grid_constant__ CUtensorMap spare1, uint64_t* stamps,
                                 uint32_t spin_ns, Tma mode) {
#ifdef FS_SM90A
  using namespace fk::sm90;
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ uint64_t bar;
  const uint64_t t0 = global_ns();
  if (threadIdx.x == 0 && mode != Tma::kMaps) {
    for (const CUtensorMap* m : {&in, &out, &spare0, &spare1})
      asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(m)) : "memory");
  }
  if (threadIdx.x == 0 && (mode == Tma::kLoad || mode == Tma::kLoadStore)) {
    mbar_init(&bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    mbar_expect_tx(&bar, 64 * 128);
    tma_load(smem, &in, &bar, 0, static_cast<int>(blockIdx.x * 64));
    mbar_wait(&bar, 0);
  }
  while (global_ns() - t0 < spin_ns) {
  }
  __syncthreads();
  if (threadIdx.x == 0 && (mode == Tma::kStore || mode == Tma::kLoadStore)) {
    fence_proxy_async();
    tma_store(&out, smem, 0, static_cast<int>(blockIdx.x * 64));
    bulk_commit();
    bulk_wait_all();
  }
  stamp(stamps, t0);
#endif
}

// Copies a [boxes * 64, 64] tensor of 2-byte elements box by box through shared memory with TMA
// (4 boxes in flight a block), as the fully fused MLP moves its tiles: what a kernel that ends
// with a stream of bulk stores leaves to the next launch. `copy`: bit 0 loads evict-first, bit 1
// waits for the stores to complete (else only to have read shared memory), bit 2 plain loads and
// stores instead of TMA.
__global__ void copy_stamp_kernel(const __grid_constant__ CUtensorMap in,
                                  const __grid_constant__ CUtensorMap out, const uint4* in_plain,
                                  uint4* out_plain, uint32_t boxes, uint64_t* stamps,
                                  uint32_t copy) {
#ifdef FS_SM90A
  using namespace fk::sm90;
  extern __shared__ __align__(1024) uint8_t smem[];
  __shared__ uint64_t bars[4];
  const uint64_t t0 = global_ns();
  if (copy & 4u) {
    const size_t n = size_t{boxes} * 64 * 128 / 16;
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
         i += size_t{gridDim.x} * blockDim.x)
      out_plain[i] = in_plain[i];
  } else if (threadIdx.x == 0) {
    const uint64_t policy = (copy & 1u) ? fk::kL2EvictFirst : fk::kL2EvictNormal;
    const uint32_t base = smem_u32(smem), bar0 = smem_u32(bars);
    for (int j = 0; j < 4; ++j) mbar_init(&bars[j], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    const auto load = [&](uint32_t b, uint32_t s) {
      mbar_expect_tx(bar0 + s * 8, 64 * 128);
      tma_load_hint(base + s * 64 * 128, &in, bar0 + s * 8, 0, static_cast<int>(b * 64), policy);
    };
    uint32_t i = 0;
    for (uint32_t b = blockIdx.x; b < boxes && i < 4; b += gridDim.x, ++i) load(b, i);
    i = 0;
    for (uint32_t b = blockIdx.x; b < boxes; b += gridDim.x, ++i) {
      const uint32_t s = i % 4;
      mbar_wait(bar0 + s * 8, (i / 4) & 1);
      tma_store(&out, base + s * 64 * 128, 0, static_cast<int>(b * 64));
      bulk_commit();
      const uint32_t next = b + 4 * gridDim.x;
      if (next < boxes) {
        bulk_wait_read_all();
        load(next, s);
      }
    }
    if (copy & 2u)
      bulk_wait_all();
    else
      bulk_wait_read_all();
  }
  __syncthreads();
  stamp(stamps, t0);
#endif
}

// A kernel whose parameters are 1 KB (a launch copies them into the constant bank).
struct BigParams {
  uint64_t words[128];
};
__global__ void big_params_kernel(const BigParams p, uint64_t* stamps, uint32_t spin_ns) {
  const uint64_t t0 = global_ns();
  while (global_ns() - t0 < spin_ns + (p.words[threadIdx.x % 128] & 1)) {
  }
  __syncthreads();
  stamp(stamps, t0);
}

struct Case {
  std::string name;
  int smem = 0;         // dynamic shared memory of every launch
  int smem_other = -1;  // >= 0: odd launches ask for this instead
  int threads = 128;
  int cluster = 1;
  size_t write_bytes = 0;   // written at the end of each launch (across all blocks)
  Tma tma = Tma::kNone;     // else tma_stamp_kernel in this mode
  bool big_params = false;  // big_params_kernel
  bool events = false;      // a CUDA event recorded after every launch (how passes are timed)
  int copy = -1;            // >= 0: copy_stamp_kernel with these bits, over kCopyBoxes boxes
};

constexpr uint32_t kCopyBoxes = 4096;  // 32 MiB each way, as 16-wide rows of a million
void* g_copy_in = nullptr;
void* g_copy_out = nullptr;
CUtensorMap g_copy_maps[2];

Maps g_maps;  // over a [132 * 64, 64] tensor of 2-byte elements: one 64 x 64 box a block

struct Quartiles {
  double q1, median, q3;
};
Quartiles quartiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double f) { return v[static_cast<size_t>(f * (v.size() - 1))]; };
  return {at(0.25), at(0.5), at(0.75)};
}

std::vector<cudaEvent_t> g_events;

void launch(const Case& c, int i, int blocks, uint64_t* stamps, uint32_t spin_ns, uint4* out,
            cudaStream_t stream) {
  const int smem = (c.smem_other >= 0 && i % 2 == 1) ? c.smem_other : c.smem;
  const uint32_t vecs = static_cast<uint32_t>(c.write_bytes / 16 / blocks);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(c.threads);
  cfg.dynamicSmemBytes = static_cast<size_t>(smem);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  if (c.cluster > 1) {
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = c.cluster;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
  uint64_t* mine = stamps + static_cast<size_t>(i) * 2 * blocks;
  if (c.copy >= 0) {
    CHECK(cudaLaunchKernelEx(&cfg, copy_stamp_kernel, g_copy_maps[0], g_copy_maps[1],
                             static_cast<const uint4*>(g_copy_in), static_cast<uint4*>(g_copy_out),
                             kCopyBoxes, mine, static_cast<uint32_t>(c.copy)));
  } else if (c.tma != Tma::kNone) {
    CHECK(cudaLaunchKernelEx(&cfg, tma_stamp_kernel, g_maps.in, g_maps.out, g_maps.spare0,
                             g_maps.spare1, mine, spin_ns, c.tma));
  } else if (c.big_params) {
    BigParams p{};
    p.words[0] = static_cast<uint64_t>(i);
    CHECK(cudaLaunchKernelEx(&cfg, big_params_kernel, p, mine, spin_ns));
  } else {
    CHECK(
        cudaLaunchKernelEx(&cfg, stamp_kernel, mine, spin_ns, c.write_bytes ? out : nullptr, vecs));
  }
  if (c.events) CHECK(cudaEventRecord(g_events[static_cast<size_t>(i)], stream));
}

std::vector<double> gaps(const std::vector<uint64_t>& s, int launches, int blocks) {
  std::vector<double> g;
  for (int i = 0; i + 1 < launches; ++i) {
    uint64_t end = 0, next = UINT64_MAX;
    for (int b = 0; b < blocks; ++b) {
      end = std::max(end, s[(size_t(i) * blocks + b) * 2 + 1]);
      next = std::min(next, s[(size_t(i + 1) * blocks + b) * 2]);
    }
    g.push_back(static_cast<double>(static_cast<int64_t>(next - end)));
  }
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  int launches = 200;
  uint32_t spin_ns = 5000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--launches")) launches = std::max(4, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--spin-ns")) spin_ns = static_cast<uint32_t>(std::atoi(argv[i + 1]));
  }
  int dev = 0;
  CHECK(cudaSetDevice(dev));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, dev));
  const int max_smem = static_cast<int>(prop.sharedMemPerBlockOptin);
  CHECK(cudaFuncSetAttribute(stamp_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
  CHECK(cudaFuncSetAttribute(stamp_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CHECK(cudaFuncSetAttribute(tma_stamp_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             max_smem - 1024));
  CHECK(cudaFuncSetAttribute(copy_stamp_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             4 * 64 * 128));
  CHECK(cudaFuncSetAttribute(big_params_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             max_smem));
  const int sms = prop.multiProcessorCount;
  std::printf(
      "%s, %d SMs, %d bytes of shared memory a block at most; %d launches a case, "
      "each block spinning %u ns\n",
      prop.name, sms, max_smem, launches, spin_ns);

  std::vector<Case> cases;
  for (int kb : {0, 16, 48, 64, 100, 116, 132, 164, 196}) {
    Case c;
    c.name = "smem " + std::to_string(kb) + " KB";
    c.smem = kb * 1024;
    cases.push_back(c);
  }
  cases.push_back({"smem max", max_smem});
  cases.push_back({"smem max, 384 threads", max_smem, -1, 384});
  cases.push_back({"smem max, 512 threads", max_smem, -1, 512});
  cases.push_back({"smem max, cluster 2", max_smem, -1, 384, 2});
  cases.push_back({"smem 0 and max alternating", 0, max_smem});
  cases.push_back({"smem 100 KB and max alternating", 100 * 1024, max_smem});
  cases.push_back({"smem 0, then 64 MB written", 0, -1, 512, 1, size_t{64} << 20});
  const int tma_smem = max_smem - 1024;
  cases.push_back({"smem max, 1 KB of parameters", max_smem, -1, 384, 1, 0, Tma::kNone, true});
  cases.push_back({"TMA: 4 maps as parameters", tma_smem, -1, 384, 1, 0, Tma::kMaps});
  cases.push_back({"TMA: 4 maps, prefetched", tma_smem, -1, 384, 1, 0, Tma::kPrefetch});
  cases.push_back({"TMA: a box loaded at the start", tma_smem, -1, 384, 1, 0, Tma::kLoad});
  cases.push_back({"TMA: a box stored at the end", tma_smem, -1, 384, 1, 0, Tma::kStore});
  cases.push_back({"TMA: loaded and stored", tma_smem, -1, 384, 1, 0, Tma::kLoadStore});
  for (int bits : {3, 1, 2, 0, 4}) {
    Case c;
    c.name = bits & 4 ? "copy 32 MiB, plain"
                      : std::string("copy 32 MiB, TMA") + (bits & 1 ? " evict-first" : "") +
                            (bits & 2 ? ", stores waited" : "");
    c.smem = 4 * 64 * 128;
    c.copy = bits;
    c.threads = bits & 4 ? 512 : 128;
    cases.push_back(c);
  }
  cases.push_back({"smem 0, an event after each", 0, -1, 128, 1, 0, Tma::kNone, false, true});
  cases.push_back(
      {"smem max, an event after each", max_smem, -1, 384, 1, 0, Tma::kNone, false, true});
  cases.push_back(
      {"TMA stored, an event after each", tma_smem, -1, 384, 1, 0, Tma::kLoadStore, false, true});
  cases.push_back({"smem max, then 64 MB written", max_smem, -1, 512, 1, size_t{64} << 20});

  uint64_t* stamps = nullptr;
  uint4* out = nullptr;
  const int blocks_max = sms;
  CHECK(cudaMalloc(&stamps, size_t(launches) * 2 * blocks_max * sizeof(uint64_t)));
  CHECK(cudaMalloc(&out, size_t{64} << 20));
  void* tensor = nullptr;  // [sms * 64, 64] two-byte elements, in and out
  CHECK(cudaMalloc(&tensor, size_t(sms) * 64 * 64 * 2 * 2));
  CHECK(cudaMemset(tensor, 0, size_t(sms) * 64 * 64 * 2 * 2));
  auto* in_base = static_cast<uint8_t*>(tensor);
  g_maps.in = fk::encode_tma_map_128b(in_base, uint64_t(sms) * 64, 64, 64);
  g_maps.out =
      fk::encode_tma_map_128b(in_base + size_t(sms) * 64 * 128, uint64_t(sms) * 64, 64, 64);
  CHECK(cudaMalloc(&g_copy_in, size_t{kCopyBoxes} * 64 * 128));
  CHECK(cudaMalloc(&g_copy_out, size_t{kCopyBoxes} * 64 * 128));
  CHECK(cudaMemset(g_copy_in, 1, size_t{kCopyBoxes} * 64 * 128));
  g_copy_maps[0] = fk::encode_tma_map_128b(g_copy_in, uint64_t{kCopyBoxes} * 64, 64, 64);
  g_copy_maps[1] = fk::encode_tma_map_128b(g_copy_out, uint64_t{kCopyBoxes} * 64, 64, 64);
  g_maps.spare0 = g_maps.in;
  g_maps.spare1 = g_maps.out;
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  g_events.resize(static_cast<size_t>(launches));
  for (auto& e : g_events) CHECK(cudaEventCreate(&e));
  std::vector<uint64_t> host(size_t(launches) * 2 * blocks_max);

  std::printf("%-34s %8s %26s %26s\n", "case", "blocks", "stream: median (q1-q3) ns",
              "graph: median (q1-q3) ns");
  for (const Case& c : cases) {
    // One block an SM, or as many whole clusters as fit.
    int blocks = sms;
    if (c.cluster > 1) {
      cudaLaunchConfig_t cfg{};
      cfg.gridDim = dim3(sms);
      cfg.blockDim = dim3(c.threads);
      cfg.dynamicSmemBytes = static_cast<size_t>(c.smem);
      cudaLaunchAttribute attr{};
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim = {static_cast<unsigned>(c.cluster), 1, 1};
      cfg.attrs = &attr;
      cfg.numAttrs = 1;
      int clusters = 0;
      CHECK(cudaOccupancyMaxActiveClusters(&clusters, stamp_kernel, &cfg));
      blocks = clusters * c.cluster;
    }
    double result[2][3];
    for (int graphed = 0; graphed < 2; ++graphed) {
      for (int i = 0; i < 4; ++i) launch(c, i, blocks, stamps, spin_ns, out, stream);  // warm
      if (graphed) {
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < launches; ++i) launch(c, i, blocks, stamps, spin_ns, out, stream);
        CHECK(cudaStreamEndCapture(stream, &graph));
        CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CHECK(cudaGraphLaunch(exec, stream));
        CHECK(cudaStreamSynchronize(stream));
        CHECK(cudaGraphLaunch(exec, stream));
        CHECK(cudaStreamSynchronize(stream));
        CHECK(cudaGraphExecDestroy(exec));
        CHECK(cudaGraphDestroy(graph));
      } else {
        for (int i = 0; i < launches; ++i) launch(c, i, blocks, stamps, spin_ns, out, stream);
        CHECK(cudaStreamSynchronize(stream));
      }
      CHECK(cudaMemcpy(host.data(), stamps, size_t(launches) * 2 * blocks * sizeof(uint64_t),
                       cudaMemcpyDeviceToHost));
      const Quartiles q = quartiles(gaps(host, launches, blocks));
      result[graphed][0] = q.median;
      result[graphed][1] = q.q1;
      result[graphed][2] = q.q3;
    }
    char a[64], b[64];
    std::snprintf(a, sizeof a, "%.0f (%.0f-%.0f)", result[0][0], result[0][1], result[0][2]);
    std::snprintf(b, sizeof b, "%.0f (%.0f-%.0f)", result[1][0], result[1][1], result[1][2]);
    std::printf("%-34s %8d %26s %26s\n", c.name.c_str(), blocks, a, b);
    std::fflush(stdout);
  }
  CHECK(cudaFree(stamps));
  CHECK(cudaFree(out));
  CHECK(cudaFree(tensor));
  CHECK(cudaFree(g_copy_in));
  CHECK(cudaFree(g_copy_out));
  for (auto e : g_events) CHECK(cudaEventDestroy(e));
  return 0;
}
