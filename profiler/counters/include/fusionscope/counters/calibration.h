// The two ceilings of the roofline, measured on this GPU: achievable DRAM bandwidth (a large
// device-to-device copy kernel, bytes read + written over its time) and tensor-core bf16 rate (a
// large cuBLASLt GEMM, 2*M*N*K over its time). Also the workloads themselves, which the counter
// tests and benchmarks reuse because their bytes and FLOPs are known exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace fusionscope::counters {

// A CUDA or cuBLAS failure in a workload, with what failed.
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// dst[i] = src[i] over `bytes` bytes (a multiple of 16), 16-byte loads and stores, a grid sized to
// fill the GPU. Buffers are allocated on construction (filled with a non-zero pattern) and freed
// on destruction. Launches go to the legacy default stream of the current device.
class CopyWorkload {
 public:
  explicit CopyWorkload(size_t bytes);
  ~CopyWorkload();
  CopyWorkload(const CopyWorkload&) = delete;
  CopyWorkload& operator=(const CopyWorkload&) = delete;

  void launch();  // one copy kernel; throws WorkloadError on a launch error
  size_t bytes() const { return bytes_; }
  size_t bytes_moved() const { return 2 * bytes_; }  // read + written
  bool verify();                                     // synchronises; true when dst equals src

 private:
  size_t bytes_ = 0;
  void* src_ = nullptr;
  void* dst_ = nullptr;
};

// D = A * B with bf16 A (m x k), B (k x n), D (m x n), fp32 accumulation, through cuBLASLt.
// Inputs are random (never zeros). One launch is one GEMM (one or more kernels, as cuBLASLt picks).
class GemmWorkload {
 public:
  GemmWorkload(int m, int n, int k);
  ~GemmWorkload();
  GemmWorkload(const GemmWorkload&) = delete;
  GemmWorkload& operator=(const GemmWorkload&) = delete;

  void launch();
  double flops() const { return 2.0 * m_ * n_ * k_; }
  int m() const { return m_; }
  int n() const { return n_; }
  int k() const { return k_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int m_, n_, k_;
};

struct CalibrationOptions {
  int device = 0;
  size_t copy_bytes = size_t{2} << 30;  // per buffer: 2 GiB read, 2 GiB written
  int gemm_size = 8192;                 // M = N = K
  int repetitions = 20;                 // timed launches of each; the median is reported
};

struct CalibrationResult {
  bool ok = false;
  std::string error;  // why !ok, for a person
  std::string gpu_name;
  double bandwidth_bytes_per_s = 0;  // median over repetitions
  double best_bandwidth_bytes_per_s = 0;
  double tensor_flops_per_s = 0;  // median
  double best_tensor_flops_per_s = 0;
  double copy_median_ms = 0;
  double gemm_median_ms = 0;
  size_t copy_bytes_moved = 0;
  double gemm_flops = 0;
};

// Never throws: a missing GPU, too little memory or a CUDA error come back in `error`.
CalibrationResult calibrate(const CalibrationOptions& options = {});

}  // namespace fusionscope::counters
