#include <cuda_runtime_api.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "fusionscope/counters/calibration.h"
#include "workload_kernels.h"

namespace fusionscope::counters {

namespace {

using detail::check_cuda;

struct Timing {
  double median_ms = 0;
  double best_ms = 0;
};

// Times `launch` with CUDA events, one event pair per launch, after a few warm-up launches.
Timing time_launches(const std::function<void()>& launch, int repetitions) {
  for (int i = 0; i < 3; ++i) launch();
  check_cuda(cudaDeviceSynchronize(), "warming up");
  std::vector<cudaEvent_t> events(2 * static_cast<size_t>(repetitions));
  for (auto& e : events) check_cuda(cudaEventCreate(&e), "creating timing events");
  std::vector<float> ms(static_cast<size_t>(repetitions));
  cudaError_t err = cudaSuccess;
  try {
    for (int i = 0; i < repetitions; ++i) {
      cudaEventRecord(events[2 * i]);
      launch();
      cudaEventRecord(events[2 * i + 1]);
    }
    err = cudaDeviceSynchronize();
    for (int i = 0; err == cudaSuccess && i < repetitions; ++i) {
      err = cudaEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1]);
    }
  } catch (...) {
    for (auto& e : events) cudaEventDestroy(e);
    throw;
  }
  for (auto& e : events) cudaEventDestroy(e);
  check_cuda(err, "timing");
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

}  // namespace

CalibrationResult calibrate(const CalibrationOptions& options) {
  CalibrationResult r;
  try {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      r.error = std::string("no CUDA GPU: ") +
                (e != cudaSuccess ? cudaGetErrorString(e) : "no device found");
      return r;
    }
    if (options.device < 0 || options.device >= count) {
      r.error = "device " + std::to_string(options.device) + " does not exist (" +
                std::to_string(count) + " device(s))";
      return r;
    }
    if (options.repetitions < 1 || options.gemm_size < 1 || options.copy_bytes < 16) {
      r.error = "calibration needs at least one repetition, a GEMM size and 16 bytes to copy";
      return r;
    }
    check_cuda(cudaSetDevice(options.device), "selecting the device");
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, options.device), "reading the device");
    r.gpu_name = prop.name;
    size_t free_bytes = 0, total_bytes = 0;
    check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "reading free memory");

    // The copy must dwarf the L2; shrink it to fit in memory when needed.
    size_t copy = options.copy_bytes / 16 * 16;
    const size_t fit = free_bytes / 5 / 16 * 16;  // two buffers in 40% of free memory
    if (copy > fit) copy = fit;
    const size_t min_copy = std::max<size_t>(size_t{8} * static_cast<size_t>(prop.l2CacheSize), 16);
    if (copy < min_copy) {
      r.error = "too little free GPU memory for a copy much larger than the L2 (" +
                std::to_string(free_bytes >> 20) + " MiB free)";
      return r;
    }
    {
      CopyWorkload work(copy);
      const Timing t = time_launches([&work] { work.launch(); }, options.repetitions);
      if (!work.verify()) {
        r.error = "the calibration copy produced wrong data";
        return r;
      }
      r.copy_bytes_moved = work.bytes_moved();
      r.copy_median_ms = t.median_ms;
      r.bandwidth_bytes_per_s = static_cast<double>(work.bytes_moved()) / (t.median_ms * 1e-3);
      r.best_bandwidth_bytes_per_s = static_cast<double>(work.bytes_moved()) / (t.best_ms * 1e-3);
    }
    {
      const int s = options.gemm_size;
      GemmWorkload gemm(s, s, s);
      const Timing t = time_launches([&gemm] { gemm.launch(); }, options.repetitions);
      r.gemm_flops = gemm.flops();
      r.gemm_median_ms = t.median_ms;
      r.tensor_flops_per_s = gemm.flops() / (t.median_ms * 1e-3);
      r.best_tensor_flops_per_s = gemm.flops() / (t.best_ms * 1e-3);
    }
    r.ok = true;
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = e.what();
  }
  return r;
}

}  // namespace fusionscope::counters
