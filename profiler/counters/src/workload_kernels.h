// Device kernels behind the calibration workloads (workload_kernels.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace fusionscope::counters::detail {

// Throws WorkloadError naming `what` when e is not cudaSuccess.
void check_cuda(cudaError_t e, const std::string& what);

void fill_pattern(void* dst, size_t bytes, uint32_t seed);       // multiple of 16 bytes
void fill_random_bf16(void* dst, size_t count, uint64_t seed);   // uniform in [-1, 1)
void launch_copy(const void* src, void* dst, size_t bytes);      // multiple of 16 bytes
bool buffers_equal(const void* a, const void* b, size_t bytes);  // synchronises

}  // namespace fusionscope::counters::detail
