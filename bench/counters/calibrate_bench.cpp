// counters_calibrate [copy MiB] [GEMM size] [repetitions]: this GPU's achievable DRAM bandwidth
// and bf16 tensor rate, the two roofline ceilings.
#include <cstdio>
#include <cstdlib>

#include "fusionscope/counters/calibration.h"

int main(int argc, char** argv) {
  fusionscope::counters::CalibrationOptions o;
  if (argc > 1) o.copy_bytes = std::strtoull(argv[1], nullptr, 10) << 20;
  if (argc > 2) o.gemm_size = std::atoi(argv[2]);
  if (argc > 3) o.repetitions = std::atoi(argv[3]);
  const auto r = fusionscope::counters::calibrate(o);
  if (!r.ok) {
    std::fprintf(stderr, "calibration failed: %s\n", r.error.c_str());
    return 1;
  }
  std::printf("GPU                %s\n", r.gpu_name.c_str());
  std::printf("device copy        %.2f GiB moved per launch, median %.3f ms\n",
              static_cast<double>(r.copy_bytes_moved) / (1 << 30), r.copy_median_ms);
  std::printf("DRAM bandwidth     %.1f GB/s median, %.1f GB/s best\n",
              r.bandwidth_bytes_per_s * 1e-9, r.best_bandwidth_bytes_per_s * 1e-9);
  std::printf("bf16 GEMM          %d^3, median %.3f ms\n", o.gemm_size, r.gemm_median_ms);
  std::printf("tensor bf16 rate   %.1f TFLOP/s median, %.1f TFLOP/s best\n",
              r.tensor_flops_per_s * 1e-12, r.best_tensor_flops_per_s * 1e-12);
  std::printf("ridge point        %.1f FLOP/byte\n",
              r.tensor_flops_per_s / r.bandwidth_bytes_per_s);
  return 0;
}
