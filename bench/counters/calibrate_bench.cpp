// counters_calibrate [copy MiB] [GEMM size] [repetitions]: this GPU's achievable DRAM bandwidth
// and bf16 tensor rate, the two roofline ceilings.
#include <cstddef>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "fusionscope/counters/calibration.h"

int main(int argc, char** argv) {
  fusionscope::counters::CalibrationOptions o;
  CLI::App app{"counters_calibrate: this GPU's achievable DRAM bandwidth and bf16 tensor rate"};
  size_t copy_mib = o.copy_bytes >> 20;
  app.add_option("copy_mib", copy_mib, "MiB the device copy moves")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("gemm_size", o.gemm_size, "M = N = K of the bf16 GEMM")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("repetitions", o.repetitions, "Launches timed of each workload")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  o.copy_bytes = copy_mib << 20;
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
