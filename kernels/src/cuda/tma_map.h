// TMA descriptors for the Hopper kernels.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace fusionscope::kernels::detail {

// A row-major [rows, cols] tensor of 2-byte elements in boxes of [box_rows, 64] with 128-byte
// swizzle (the layout wgmma reads and the epilogues write). Boxes past the edges load zeros and
// store nothing. cols * 2 must be a multiple of 16.
CUtensorMap encode_tma_map_128b(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows);

// The same tensor in boxes of [box_rows, 32] with 64-byte swizzle (a gated 192-wide tile's 96
// output columns).
CUtensorMap encode_tma_map_64b(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows);

// The same tensor in boxes of [box_rows, 16] with 32-byte swizzle (the 80 and 112 output
// columns of gated 160- and 224-wide tiles).
CUtensorMap encode_tma_map_32b(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows);

// The same tensor in unswizzled boxes of [box_rows, cols] (cols * 2 a multiple of 16, at most
// 256 elements): the box lands in shared memory as its rows back to back.
CUtensorMap encode_tma_map_rows(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows);

}  // namespace fusionscope::kernels::detail
