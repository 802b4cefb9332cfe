// Element types by DType, and the activations in fp32, shared by every kernel.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fusionscope/kernels/config.h"

namespace fusionscope::kernels::detail {

template <typename T>
__device__ __forceinline__ float to_float(T v) {
  return static_cast<float>(v);
}
template <>
__device__ __forceinline__ float to_float<__half>(__half v) {
  return __half2float(v);
}
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Two adjacent elements packed in 32 bits (fp16/bf16 kernels store pairs).
template <typename T>
__device__ __forceinline__ uint32_t pack2(float a, float b);
template <>
__device__ __forceinline__ uint32_t pack2<__half>(float a, float b) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<uint32_t*>(&h);
}
template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float a, float b) {
  __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<uint32_t*>(&h);
}

// The same after ReLU, folded into the conversion (cvt.rn.relu, sm_80 and later): one instruction
// a pair instead of three, rounding identically (there, NaN stays NaN, as in PyTorch's relu).
template <typename T>
__device__ __forceinline__ uint32_t pack2_relu(float a, float b);
template <>
__device__ __forceinline__ uint32_t pack2_relu<__half>(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint32_t r;
  asm("cvt.rn.relu.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));  // b to the high half
  return r;
#else
  return pack2<__half>(fmaxf(a, 0.f), fmaxf(b, 0.f));
#endif
}
template <>
__device__ __forceinline__ uint32_t pack2_relu<__nv_bfloat16>(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint32_t r;
  asm("cvt.rn.relu.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));
  return r;
#else
  return pack2<__nv_bfloat16>(fmaxf(a, 0.f), fmaxf(b, 0.f));
#endif
}

// Exact forms for the fp32 reference.
__device__ __forceinline__ float act_exact(Activation a, float x) {
  switch (a) {
    case Activation::kRelu:
      return x > 0.f ? x : 0.f;
    case Activation::kGeluTanh:
      return 0.5f * x * (1.f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case Activation::kSilu:
      return x / (1.f + expf(-x));
    case Activation::kNone:
      break;
  }
  return x;
}

__device__ __forceinline__ float tanh_fast(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return tanhf(x);
#endif
}

// Fast forms for the kernels being measured (hardware tanh, fast exp).
template <Activation A>
__device__ __forceinline__ float act_fast(float x) {
  if constexpr (A == Activation::kRelu) {
    return fmaxf(x, 0.f);
  } else if constexpr (A == Activation::kGeluTanh) {
    const float inner = 0.7978845608028654f * fmaf(0.044715f * x * x, x, x);
    const float hx = 0.5f * x;
    return fmaf(hx, tanh_fast(inner), hx);
  } else if constexpr (A == Activation::kSilu) {
    return __fdividef(x, 1.f + __expf(-x));
  } else {
    return x;
  }
}

// Two activated elements packed: ReLU through pack2_relu, the others through act (the kernel's
// form of the activation).
template <typename T, Activation A, typename Act>
__device__ __forceinline__ uint32_t pack2_act(float a, float b, Act act) {
  if constexpr (A == Activation::kRelu)
    return pack2_relu<T>(a, b);
  else
    return pack2<T>(act(a), act(b));
}

// The scales launch_interleave_gate_up applies to the gate and up rows of the gated GEMMs' weight,
// chosen so that gated_product() needs one multiply fewer: powers of two, so the products are
// the unscaled ones times the scale exactly. SiLU: the gate halved; GELU: the up halved.
struct GateUpScales {
  float gate = 1.f, up = 1.f;
};
constexpr GateUpScales gate_up_scales(Activation a) {
  if (a == Activation::kSilu) return {0.5f, 1.f};
  if (a == Activation::kGeluTanh) return {1.f, 0.5f};
  return {};
}

// act(x) * up from the gated GEMMs' products g and u of the weight scaled by gate_up_scales(A),
// one hardware tanh each:
//   SiLU   x sigmoid(x) up = (x/2)(1 + tanh(x/2)) up  = g u + g u tanh(g)      (g = x/2, u = up)
//   GELU   (x/2)(1 + tanh(k x (1 + a x^2))) up       = x u + x u tanh(...)    (g = x, u = up/2)
template <Activation A>
__device__ __forceinline__ float gated_product(float g, float u) {
  if constexpr (A == Activation::kSilu) {
    const float gu = g * u;
    return fmaf(gu, tanh_fast(g), gu);
  } else if constexpr (A == Activation::kGeluTanh) {
    const float inner = g * fmaf(0.7978845608028654f * 0.044715f, g * g, 0.7978845608028654f);
    const float gu = g * u;
    return fmaf(gu, tanh_fast(inner), gu);
  } else if constexpr (A == Activation::kRelu) {
    return fmaxf(g, 0.f) * u;
  } else {
    return g * u;
  }
}

// Calls f.template operator()<A>() with the activation as a compile-time value.
template <typename F>
void dispatch_activation(Activation a, F&& f) {
  switch (a) {
    case Activation::kNone:
      f.template operator()<Activation::kNone>();
      break;
    case Activation::kRelu:
      f.template operator()<Activation::kRelu>();
      break;
    case Activation::kGeluTanh:
      f.template operator()<Activation::kGeluTanh>();
      break;
    case Activation::kSilu:
      f.template operator()<Activation::kSilu>();
      break;
  }
}

// Calls f.template operator()<T>() with the element type of a DType.
template <typename F>
void dispatch_dtype(DType d, F&& f) {
  switch (d) {
    case DType::kFp32:
      f.template operator()<float>();
      break;
    case DType::kFp16:
      f.template operator()<__half>();
      break;
    case DType::kBf16:
      f.template operator()<__nv_bfloat16>();
      break;
  }
}

}  // namespace fusionscope::kernels::detail
