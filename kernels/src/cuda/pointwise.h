// Elementwise kernels of the unfused variants, the seeded initialisation and the gate/up
// interleave. Every pointer is device memory of `dtype`; counts are elements and multiples of 8.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels::detail {

// out = act(in), as PyTorch's elementwise kernel does it (one read, one write).
void launch_activation(const void* in, void* out, uint64_t n, Activation act, DType dtype,
                       cudaStream_t stream);
// out[r, c] = act(in[r, c] + bias[c]) (Inductor's fused bias + activation after a plain mm).
void launch_bias_activation(const void* in, const void* bias, void* out, uint64_t rows,
                            uint64_t cols, Activation act, DType dtype, cudaStream_t stream);
// out = a * b.
void launch_multiply(const void* a, const void* b, void* out, uint64_t n, DType dtype,
                     cudaStream_t stream);
// out = act(g) * u in one pass (torch.compile's fused gelu*mul).
void launch_activation_multiply(const void* g, const void* u, void* out, uint64_t n, Activation act,
                                DType dtype, cudaStream_t stream);
// Rows of gate [h, d] and up [h, d] interleaved in groups of 8: output row 16*b + i is gate row
// 8*b + i for i < 8 and up row 8*b + i - 8 otherwise, so one GEMM tile holds matching columns;
// each part scaled (exactly, by a power of two) as the gated GEMMs' epilogue for `act` expects
// (gate_up_scales in element.cuh).
void launch_interleave_gate_up(const void* gate, const void* up, void* out, uint64_t h, uint64_t d,
                               Activation act, DType dtype, cudaStream_t stream);
// Uniform values in [lo, hi) from (seed, tag, index): reproducible, never all zeros.
void launch_fill_uniform(void* dst, uint64_t n, DType dtype, float lo, float hi, uint64_t seed,
                         uint64_t tag, cudaStream_t stream);

}  // namespace fusionscope::kernels::detail
