// The calibration ceilings on a real GPU, bounded by what the device's datasheet figures allow.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "fusionscope/counters/calibration.h"
#include "gpu_guard.h"

namespace fc = fusionscope::counters;

TEST(CalibrationGpu, CeilingsAreBelowTheoreticalPeaksAndNearThem) {
  FUSIONSCOPE_REQUIRE_GPU();
  fc::CalibrationOptions options;
  options.repetitions = 10;
  const auto r = fc::calibrate(options);
  ASSERT_TRUE(r.ok) << r.error;
  int mem_khz = 0, bus_bits = 0, sm_khz = 0, sms = 0, major = 0, minor = 0;
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0);
  cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  const double peak_bandwidth = mem_khz * 1e3 * 2.0 * bus_bits / 8.0;
  std::printf(
      "%s: copy %.1f GB/s median (%.1f best) of %.1f GB/s theoretical; bf16 GEMM %.1f "
      "TFLOP/s median (%.1f best)\n",
      r.gpu_name.c_str(), r.bandwidth_bytes_per_s * 1e-9, r.best_bandwidth_bytes_per_s * 1e-9,
      peak_bandwidth * 1e-9, r.tensor_flops_per_s * 1e-12, r.best_tensor_flops_per_s * 1e-12);
  EXPECT_GT(r.bandwidth_bytes_per_s, 0.5 * peak_bandwidth);
  EXPECT_LT(r.best_bandwidth_bytes_per_s, 1.02 * peak_bandwidth);
  EXPECT_GE(r.best_bandwidth_bytes_per_s, r.bandwidth_bytes_per_s);
  // Dense bf16 tensor FLOP per clock per SM: 2048 on sm_80, 4096 on sm_90.
  const int per_sm = major == 9 && minor == 0 ? 4096 : (major == 8 && minor == 0 ? 2048 : 0);
  if (per_sm == 0) GTEST_SKIP() << "no tensor-rate bound known for sm_" << major << minor;
  const double peak_flops = static_cast<double>(sms) * per_sm * sm_khz * 1e3;
  std::printf("bf16 tensor peak at %d MHz: %.1f TFLOP/s\n", sm_khz / 1000, peak_flops * 1e-12);
  EXPECT_GT(r.tensor_flops_per_s, 0.4 * peak_flops);
  EXPECT_LT(r.best_tensor_flops_per_s, 1.02 * peak_flops);
}
