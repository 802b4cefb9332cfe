// The GPU's global timer read from a kernel, bracketed by host reads of the CUPTI clock.
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "fusionscope/counters/pm_sampler.h"

namespace fusionscope::counters {

namespace {

__global__ void read_global_timer(unsigned long long* out) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  *out = t;
}

}  // namespace

ClockOffset measure_gpu_clock_offset(int device, int trials) {
  ClockOffset r;
  unsigned long long* d_time = nullptr;
  const auto cuda_fail = [&r](const char* what, cudaError_t e) {
    r.error = std::string(what) + ": " + cudaGetErrorString(e);
    return r;
  };
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) return cuda_fail("selecting the device", e);
  e = cudaMalloc(&d_time, sizeof(unsigned long long));
  if (e != cudaSuccess) return cuda_fail("allocating the probe", e);

  // Every bracket [host_before, host_after] contains the kernel's read: offset lies in
  // [host_before - gpu, host_after - gpu]. The intersection over all trials is the estimate.
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  int64_t best_width = std::numeric_limits<int64_t>::max(), best_mid = 0;
  for (int i = 0; i < std::max(trials, 2) + 1; ++i) {
    uint64_t before = 0, after = 0;
    cuptiGetTimestamp(&before);
    read_global_timer<<<1, 1>>>(d_time);
    e = cudaDeviceSynchronize();
    cuptiGetTimestamp(&after);
    if (e != cudaSuccess) break;
    unsigned long long gpu = 0;
    e = cudaMemcpy(&gpu, d_time, sizeof gpu, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) break;
    if (i == 0) continue;  // the first launch loads the module
    const int64_t a = static_cast<int64_t>(before) - static_cast<int64_t>(gpu);
    const int64_t b = static_cast<int64_t>(after) - static_cast<int64_t>(gpu);
    lo = std::max(lo, a);
    hi = std::min(hi, b);
    if (b - a < best_width) {
      best_width = b - a;
      best_mid = a + (b - a) / 2;
    }
  }
  cudaFree(d_time);
  if (e != cudaSuccess) return cuda_fail("running the clock probe", e);
  if (lo <= hi) {
    r.offset_ns = lo + (hi - lo) / 2;
    r.uncertainty_ns = (hi - lo) / 2;
  } else {  // the clocks drifted between trials: fall back to the tightest single bracket
    r.offset_ns = best_mid;
    r.uncertainty_ns = best_width / 2;
  }
  r.ok = true;
  return r;
}

}  // namespace fusionscope::counters
