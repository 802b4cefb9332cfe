#include "tma_map.h"

#include <mutex>
#include <string>

#include "cuda_check.h"

namespace fusionscope::kernels::detail {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_fn() {  // from the driver, without linking libcuda
  static EncodeTiled fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<EncodeTiled>(p);
  });
  if (!fn) throw CudaError("the driver does not provide cuTensorMapEncodeTiled (TMA)");
  return fn;
}

// A row-major [rows, cols] tensor of 2-byte elements in boxes of [box_rows, box_cols].
CUtensorMap encode_2d(const void* base, uint64_t rows, uint64_t cols, uint32_t box_cols,
                      uint32_t box_rows, CUtensorMapSwizzle swizzle,
                      CUtensorMapL2promotion promotion) {
  CUtensorMap m{};
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * 2};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_fn()(&m, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, const_cast<void*>(base),
                                 dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                 swizzle, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw CudaError("cuTensorMapEncodeTiled failed with error " + std::to_string(r));
  return m;
}

}  // namespace

CUtensorMap encode_tma_map_128b(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows) {
  return encode_2d(base, rows, cols, 64, box_rows, CU_TENSOR_MAP_SWIZZLE_128B,
                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

CUtensorMap encode_tma_map_64b(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows) {
  return encode_2d(base, rows, cols, 32, box_rows, CU_TENSOR_MAP_SWIZZLE_64B,
                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

CUtensorMap encode_tma_map_32b(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows) {
  return encode_2d(base, rows, cols, 16, box_rows, CU_TENSOR_MAP_SWIZZLE_32B,
                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

CUtensorMap encode_tma_map_rows(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows) {
  return encode_2d(base, rows, cols, static_cast<uint32_t>(cols), box_rows,
                   CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE);
}
}  // namespace fusionscope::kernels::detail
