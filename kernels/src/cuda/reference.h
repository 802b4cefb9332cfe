// The fp32 reference of the correctness check: a plain tiled GEMM on CUDA cores (no tensor cores,
// fp32 intermediates), and the comparison of an output with it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels::detail {

// y[m, n] = act(sum_k x[m, k] * w[n, k] + bias[n]) in fp32. x is `x_dtype` (fp32 for reference
// intermediates), w and bias are `w_dtype`; bias may be null.
void launch_reference_linear(const void* x, DType x_dtype, const void* w, const void* bias,
                             DType w_dtype, float* y, uint64_t m, uint64_t n, uint64_t k,
                             Activation act, cudaStream_t stream);
// g = act(g) * u in fp32, in place.
void launch_reference_act_mul(float* g, const float* u, uint64_t n, Activation act,
                              cudaStream_t stream);

struct ErrorSums {
  double max_abs_error = 0;
  double max_abs_reference = 0;
  double sum_sq_error = 0;
  double sum_sq_reference = 0;
  uint64_t non_finite = 0;
};
inline constexpr int kCheckBlocks = 1024;
// Per-block sums into partials (kCheckBlocks x 5 doubles), then summed on the host after a sync.
void launch_compare(const void* out, DType dtype, const float* ref, uint64_t n, double* partials,
                    cudaStream_t stream);
ErrorSums finish_compare(const double* partials_device, cudaStream_t stream);

}  // namespace fusionscope::kernels::detail
