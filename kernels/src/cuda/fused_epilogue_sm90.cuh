// How the fully fused Hopper MLP (fully_fused_mlp_sm90.cu, which alone includes this file)
// applies each layer's biases and activation: the choices per dtype, activation and width, each
// with why (docs/fused_choices.md has what measured it), the scale factors folded into the
// weights and biases, and the 16-bit and fp32 forms of the activations.
#pragma once

#include <type_traits>

#include "element.cuh"

namespace fusionscope::kernels::detail {

// GELU-tanh's argument c0 x + c1 x^3 is z (z^2 + c0 s) for z = x / s (see act_f16x2).
constexpr double kGeluScale = 3.0376348576988046;  // (0.7978845608 * 0.044715)^(-1/3)

// kWarpgroups, kStages: the kernel's (its Shape's).
template <typename T, Activation A, int W, int kWarpgroups, int kStages>
struct FusedEpilogue {
  static constexpr int kCols = W <= 64 ? 64 : 128;
  static constexpr bool kHalfAct = std::is_same_v<T, __half>;  // GELU, SiLU in f16x2 too
  // How each layer's biases are added:
  // - by wgmma (bias_mma; see kFoldMma), one instruction a layer for an add an accumulator: bf16
  //   GELU and SiLU at 48 and 64 wide, 32 wide GELU, SiLU in five warpgroups, 96 wide SiLU and
  //   GELU in four warpgroups, and 32 wide bf16 ReLU (at 16 wide four MMAs more a layer cost more
  //   than the adds; at 32 wide with no activation ptxas serialized the wgmmas, C7512);
  // - to the 16-bit pairs, activated there (bias_act2), in fewer instructions than fp32 adds and
  //   activations: every fp16 kernel, and ReLU or no activation in bf16 but 32 wide ReLU (bf16
  //   keeps fp32 activations: in bf16x2 arithmetic 16 layers of 64 reached 1.97e-2 of relative
  //   error, against bf16's tolerance of 2e-2);
  // - the other bf16 GELU and SiLU (16 wide, 32 wide SiLU in four warpgroups, 96 wide GELU in
  //   three, 128 wide): the accumulators start from them (kBiasPreload), but at 128 wide in four
  //   warpgroups of two stages;
  // - otherwise fp32 adds ahead of the activation.
  // Measured: docs/fused_choices.md, "FusedEpilogue::kBiasMma".
  static constexpr bool kHeavy = A == Activation::kSilu || A == Activation::kGeluTanh;
  static constexpr bool kBiasMma =
      !std::is_same_v<T, __half> &&
      ((W == 32 && A == Activation::kRelu) ||
       (kHeavy &&
        (W == 48 || W == 64 || (W == 32 && (A == Activation::kGeluTanh || kWarpgroups > 4)) ||
         (W == 96 && (kWarpgroups > 3 || A == Activation::kSilu)))));
  // bf16 GELU and SiLU whose biases go in by wgmma take their factors (kFold's) in the weights
  // and biases in shared memory, as fp16 does: the accumulator is the activation's argument, and
  // the epilogue a tanh and three fp32 instructions a GELU value (one a SiLU value) where
  // kFold32's fma made four (two). At 48 and 96 wide the weight's padding holds the bias slice;
  // 64 wide, whose weight has no padding, takes its slices from atoms of their own
  // (Geometry::kBiasAtoms). SiLU's factors are powers of two, so its results are the same bits;
  // GELU's 1 / s and s / 2 round the scaled weights and biases once more (within bf16's
  // tolerance). Not at 128 wide (no room for the slices).
  // Measured: docs/fused_choices.md, "FusedEpilogue::kFoldMma".
  static constexpr bool kFoldMma = kBiasMma && kHeavy;
  static constexpr bool kHalfBias =
      !kBiasMma && (A == Activation::kRelu || A == Activation::kNone || kHalfAct);
  // fp16 accumulators wherever the pairs get their biases in 16 bits (every fp16 kernel): the
  // accumulators are the pairs themselves, with no conversion, and the MMAs write half the
  // registers. A sum is rounded after every k16 slice, not once at the end (16 layers of 64 GELU:
  // 2.8e-3 of relative error against fp16's tolerance of 5e-3).
  // Measured: docs/fused_choices.md, "FusedEpilogue::kF16Acc".
  static constexpr bool kF16Acc = kHalfBias && std::is_same_v<T, __half>;
  // The fp16 accumulators start from the layer's biases (moved in before its MMAs, which add onto
  // them), so the epilogue applies the activation alone: one f16x2 instruction a pair fewer after
  // each MMA, for moves that need no MMA result. Only at 96 wide and 64 wide GELU: slower
  // elsewhere. The biases enter the sum first, and the largest relative errors fell 5-20%.
  // Measured: docs/fused_choices.md, "FusedEpilogue::kBiasInAcc".
  static constexpr bool kBiasInAcc =
      kF16Acc && (W == 96 || (W == 64 && A == Activation::kGeluTanh));
  // GELU and SiLU in f16x2 with scale factors folded into the weights and biases (act_f16x2's
  // kFolded; the factors below). SiLU's activated layers take halved weights and biases and so
  // produce hx themselves: one multiply a pair fewer, the same bits out (a power of two
  // commutes with every rounding). GELU's layers before the last produce z = x / s, whose
  // argument is two instructions (act_f16x2), and emit 2 GELU / s: of five f16x2 instructions
  // a pair (bias, argument, product) one fewer than the halving alone, two fewer than none.
  // Measured: docs/fused_choices.md, "FusedEpilogue::kFold".
  static constexpr bool kFold = kHalfBias && (A == Activation::kSilu || A == Activation::kGeluTanh);
  // At 128 wide, where no room is left for kFoldMma's bias slices, 16 wide, 32 wide SiLU in four
  // warpgroups and 96-wide GELU in three: the fp32 accumulators start from the layer's biases
  // (16-bit pairs in shared memory, a 16-byte load per four chunks, widened by integer
  // instructions, off the FMA pipe the MMAs share), and the factors go into the weights in shared
  // memory as kFoldMma's: the accumulator is the activation's argument, one fp32 instruction a
  // value fewer than kFold32's fma, and no MMA slice more. Not where it measured slower: 128 wide
  // in four warpgroups of two stages (which keep kFold32), and where the biases go in by wgmma.
  // Measured: docs/fused_choices.md, "FusedEpilogue::kBiasPreload".
  static constexpr bool kBiasPreload =
      !kHalfBias && !kBiasMma && kHeavy && !(W == 128 && kWarpgroups == 4 && kStages == 2);
  // bf16 GELU and SiLU (fp32 epilogues) take the same factors, all of them in the fp32 fma that
  // adds the bias (acc * weight_factor + bias * bias_factor): the weights stay as they are, and
  // GELU's epilogue is four fp32 instructions a value and a tanh where it was six, SiLU's two
  // where it was three. kFoldMma has taken its place up to 96 wide, and kBiasPreload at 128 but
  // in four warpgroups of two stages. Not GELU in two warpgroups, where it measured slower though
  // its instructions are fewer.
  // Measured: docs/fused_choices.md, "FusedEpilogue::kFold32".
  static constexpr bool kFold32 =
      !kHalfBias && !kBiasMma && !kBiasPreload &&
      (A == Activation::kSilu || (A == Activation::kGeluTanh && kWarpgroups > 2));
  // bf16 GELU whose accumulator is the activation's argument (kFoldMma, kBiasPreload), and SiLU
  // at 16 and 128 wide (kBiasPreload) and 96 wide (kFoldMma): the hidden layers' activations and
  // weights in fp16. The epilogue rounds the fp32 pair to fp16 once and takes fp16's form
  // (act_f16x2: three f16x2 instructions and a tanh a pair, where the fp32 form takes nine, and
  // act_poly_f16x2 for the polynomial's pairs); the next layer's wgmma multiplies fp16 by fp16
  // (into fp32, or fp16: kHiddenF16Acc). The input, the first layer's weights and the output stay
  // bf16. fp16 carries three more bits than bf16 (the largest relative errors fell by about 40%),
  // and a bf16 weight within fp16's range converts exactly; but a hidden value (or a scaled weight)
  // past fp16's 65504 becomes infinite, where bf16 would hold it. Not SiLU from 32 to 64 wide
  // (slower or level); SiLU at 96 and 128 wide since their hidden layers accumulate in fp16 too.
  // Measured: docs/fused_choices.md, "FusedEpilogue::kHalfHidden".
  static constexpr bool kHalfHidden = !std::is_same_v<T, __half> && kHeavy &&
                                      (kFoldMma || kBiasPreload) &&
                                      (A == Activation::kGeluTanh || W == 16 ||
                                       (W == 128 && kBiasPreload) || (W == 96 && kFoldMma));
  using Hidden = std::conditional_t<kHalfHidden, __half, T>;  // the hidden layers' A and weights
  // Layers after the first accumulate in fp16 too, so the epilogue takes the pairs as they are
  // (no conversion) and the MMAs write half the registers:
  // - 32 to 96 wide (kFoldMma: at 96 wide, bf16 SiLU and GELU in four warpgroups): every such
  //   layer, its biases added by wgmma into the fp16 sums, the output widened from them;
  // - 16 wide GELU (kBiasPreload): the hidden layers, from zero, their biases added to the pairs
  //   as fp16 kernels add theirs (packed, a thread's columns repeat every 16: two pairs, one
  //   8-byte load a layer); the last layer keeps its fp32 accumulators and their preload. Not
  //   16 wide SiLU (slower), nor with the biases preloaded into the fp16 sums (slower still);
  // - 96 wide GELU in three warpgroups and 128 wide GELU and SiLU (kBiasPreload): every layer
  //   after the first, its sums started from its biases as fp16 pairs (kHiddenF16Preload), the
  //   output widened from them. Not with the last layer in fp32 as at 16 wide (3-4% slower at 5
  //   layers, level at 2).
  // Measured: docs/fused_choices.md, "FusedEpilogue::kHiddenF16Acc".
  static constexpr bool kHiddenF16Acc =
      kHalfHidden && ((W <= 96 && (kFoldMma || (W == 16 && A == Activation::kGeluTanh))) ||
                      (W >= 96 && kBiasPreload && (A == Activation::kGeluTanh || W == 128)));
  // How kHiddenF16Acc's sums get their biases with kBiasPreload: at 16 wide the hidden layers'
  // sums start from zero, the biases added to the pairs after the MMAs, and the last layer keeps
  // fp32 accumulators; at 96 and 128 wide the sums of every layer after the first start from its
  // biases, stored as fp16 pairs in preload_biases' order.
  static constexpr bool kHiddenF16FromZero = kHiddenF16Acc && kBiasPreload && W == 16;
  static constexpr bool kHiddenF16Preload = kHiddenF16Acc && kBiasPreload && W != 16;
  // The 16-bit biases in half_bias_word's order (16-byte loads), up to 64 wide.
  static constexpr bool kBiasVec = kHalfBias && kCols == 64;
  // A quarter or so of the GELU and SiLU pairs take the polynomial (act_poly_f16x2) in place of
  // the tanh: every kPolyEvery-th pair of a layer's, or none (0). The MUFU bounds these epilogues
  // (busy two thirds of the 16 and 48 wide kernels, the issue slots under half), so moving some
  // of its work to the FMA pipes pays until the two balance; every 2nd pair was slower everywhere
  // (the FMA pipes and the issue slots become the bound). The period for each width and
  // activation is the fastest measured, or one level with it. bf16 takes it where its hidden
  // layers are fp16 (kHalfHidden); in an fp32 epilogue a pair by polynomial cost twice the tanh
  // form's instructions, and was slower at 48 and 64 wide and in 32 wide SiLU.
  // Measured: docs/fused_choices.md, "FusedEpilogue::kPolyEvery".
  static constexpr int poly_every() {
    if (kHalfHidden) {
      if (A == Activation::kSilu) return W == 128 ? 4 : W == 96 ? 8 : 3;
      return W == 16 ? 4 : W == 32 ? 3 : W == 96 ? 4 : 5;
    }
    if (kFold) {
      if (A == Activation::kGeluTanh) return W == 32 ? 8 : W == 128 ? 6 : 4;
      return W == 32 ? 0 : W == 64 ? 5 : W == 96 ? 8 : 4;
    }
    return 0;
  }
  static constexpr int kPolyEvery = poly_every();
  // bf16's fp16 hidden layers take the polynomial one degree lower (act_poly_f16x2's kLow): its
  // largest error (1.1e-3 GELU, 2.7e-3 SiLU) stays under half a bf16 unit at 1 (3.9e-3), and
  // bf16's tolerance is 2e-2, where fp16 kernels' 5e-3 left no room for it.
  // Measured: docs/fused_choices.md, "FusedEpilogue::kPolyLow".
  static constexpr bool kPolyLow = kHalfHidden;
  // Whether pair q of a layer's (2 j + i: rows r, r + 8 of chunk j) takes act_poly_f16x2.
  static constexpr bool poly_pair(int q) {
    return kPolyEvery > 0 && q % (kPolyEvery > 0 ? kPolyEvery : 1) == kPolyEvery - 1;
  }

  // The factors on layer l's weights and biases (kFold). GELU: the layers before the last
  // give z = x / s (1 / s on weights and biases) and emit 2 GELU / s (s / 2 on the next layer's
  // weights): 1 / s on layer 0, exactly 1 / 2 between, s / 2 on the last, which gives x itself
  // (activated, a segment's last layer, by the plain form). SiLU: halved where activated.
  // p: the kernel's parameters (layers; act_out, the activation on the last layer too).
  template <typename Params>
  __device__ static float bias_factor(int l, const Params& p) {
    if constexpr (A == Activation::kGeluTanh)
      return l + 1 < p.layers ? float(1 / kGeluScale) : 1.f;
    else
      return l + 1 < p.layers || p.act_out != 0 ? 0.5f : 1.f;
  }
  template <typename Params>
  __device__ static float weight_factor(int l, const Params& p) {
    if constexpr (A == Activation::kGeluTanh) {
      if (l > 0 && l + 1 < p.layers) return 0.5f;
      return l > 0 ? float(kGeluScale / 2) : bias_factor(l, p);
    } else {
      return bias_factor(l, p);
    }
  }
};

// GELU-tanh or SiLU on a pair of fp16 values in f16x2 arithmetic, one tanh.approx.f16x2 a pair:
// hx + hx * tanh(x * (c0 + c1 x^2)) or hx + hx * tanh(hx), hx = x / 2; five or two instructions
// where the fp32 forms take about fourteen. Past |x| = 256, x^2 is infinite and tanh gives +-1:
// x or 0, as it should.
// kFolded: scale factors folded into the weights (FusedEpilogue::kFold). SiLU takes hx itself, the
// product of a layer whose weights and biases are halved (the same bits through the net: halving
// is exact). GELU-tanh takes z = x / s, s = c1^(-1/3), the product of a layer whose weights and
// biases are scaled by 1 / s, so that its argument c0 x + c1 x^3 is z (z^2 + c0 s): two
// instructions where x (c0 + c1 x^2) takes three; it returns z + z tanh(...), 2 GELU / s, for a
// next layer whose weights are scaled by s / 2.
template <Activation A, bool kFolded = false>
__device__ __forceinline__ uint32_t act_f16x2(uint32_t y) {
  static_assert(A == Activation::kGeluTanh || A == Activation::kSilu);
  const uint32_t half = 0x38003800u;
  uint32_t hx, t;
  if constexpr (kFolded && A == Activation::kSilu)
    hx = y;
  else if constexpr (!kFolded)
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(hx) : "r"(y), "r"(half));
  if constexpr (A == Activation::kGeluTanh) {
    uint32_t p;
    if constexpr (kFolded) {
      const uint32_t c0s = 0x40D940D9u;  // 0.7978845608 * kGeluScale in fp16 (2.4238)
      asm("fma.rn.f16x2 %0, %1, %1, %2;" : "=r"(p) : "r"(y), "r"(c0s));
      hx = y;  // z + z * tanh: 2 GELU / s
    } else {
      const uint32_t c0 = 0x3A623A62u;  // 0.7978845608 in fp16 (0.79785)
      const uint32_t c1 = 0x28912891u;  // 0.7978845608 * 0.044715 (0.035675)
      asm("mul.rn.f16x2 %0, %1, %1;" : "=r"(p) : "r"(y));
      asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(p) : "r"(p), "r"(c1), "r"(c0));
    }
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(p) : "r"(p), "r"(y));
    asm("tanh.approx.f16x2 %0, %1;" : "=r"(t) : "r"(p));
  } else {
    asm("tanh.approx.f16x2 %0, %1;" : "=r"(t) : "r"(hx));
  }
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(y) : "r"(hx), "r"(t), "r"(hx));
  return y;
}

// The folded activations of act_f16x2 (kFolded) without the tanh, in f16x2 FMAs: nine
// instructions and two logic ones for a pair where act_f16x2 takes three and one tanh, which
// costs the MUFU two fp32 tanhs' time. Some pairs take this form where the MUFU bounds the
// kernel (FusedEpilogue::kPolyEvery). Both activations are 2 relu(y) - r(|y|) with
// r(a) = a (1 - tanh(u(a))), a bump that has fallen to 1e-4 (GELU) and 1e-3 (SiLU) at a = c:
// r(a) ~ a Q(v) with v = min(a, c) (2 / c) - 1 in [-1, 1], where the fp16 evaluation is well
// conditioned. scripts/fit_act_poly.py fits Q (weighted least squares, each coefficient rounded
// to fp16 before the rest are refitted) and measures the result over every fp16 input in the
// fp16 arithmetic below: largest absolute error GELU 9.8e-4 (mean 4.5e-5), SiLU 2.7e-3 (mean
// 1.9e-4), where act_f16x2 with an exactly rounded tanh has 1.2e-3 (2.0e-5) and 2.9e-3 (7.7e-5).
// GELU: y = z, u(a) = a (a^2 + c0 s), c = 1.35, Q of degree 6. SiLU: y = hx, u(a) = a, c = 4.5,
// Q of degree 8. kLow: GELU c = 1.2, degree 5; SiLU c = 4.2, degree 7.
template <Activation A, bool kLow = false>
__device__ __forceinline__ uint32_t act_poly_f16x2(uint32_t y) {
  static_assert(A == Activation::kGeluTanh || A == Activation::kSilu);
  constexpr bool kGelu = A == Activation::kGeluTanh;
  // Q's degree: one lower (kLow: 5 and 7; max errors 1.1e-3 and 2.7e-3, means 2.5e-4 and 4.1e-4)
  // saves an FMA a pair, but in fp16 kernels doubled the end-to-end error (8 layers of 48 wide
  // GELU 2.0e-3 -> 5.0e-3, at fp16's tolerance); bf16's hidden layers take it
  // (FusedEpilogue::kPolyLow).
  constexpr int kDegree = kGelu ? (kLow ? 5 : 6) : (kLow ? 7 : 8);
  // -Q's coefficients, v^0 first, as fp16 bits (scripts/fit_act_poly.py).
  constexpr uint16_t kGeluQ[] = {0xA91E, 0x3278, 0xB6E5, 0x370A, 0xAF7F, 0xB07E, 0x2D87};
  constexpr uint16_t kSiluQ[] = {0xA5A8, 0x2E47, 0xB2B5, 0x34CB, 0xB5B7,
                                 0x34BC, 0xA252, 0xB226, 0x2E60};
  constexpr uint16_t kGeluLowQ[] = {0xAC60, 0x348E, 0xB77E, 0x34CF, 0x25F1, 0xACA3};
  constexpr uint16_t kSiluLowQ[] = {0xA798, 0x2FA9, 0xB3B2, 0x35B2, 0xB607, 0x303C, 0x3074, 0xAE75};
  const auto pair = [](uint32_t h) { return h * 0x10001u; };
  const auto q = [&](int i) {
    return pair(kGelu ? (kLow ? kGeluLowQ[i] : kGeluQ[i]) : (kLow ? kSiluLowQ[i] : kSiluQ[i]));
  };
  // c: 1.3496 and 4.5, or (kLow) 1.2002 and 4.1992; and 2 / c
  const uint32_t cap = pair(kGelu ? (kLow ? 0x3CCD : 0x3D66) : (kLow ? 0x4433 : 0x4480));
  const uint32_t scale = pair(kGelu ? (kLow ? 0x3EAB : 0x3DED) : (kLow ? 0x379E : 0x371C));
  const uint32_t minus_one = 0xBC00BC00u;
  uint32_t a, v, p;
  uint32_t t;
  asm("and.b32 %0, %1, 0x7FFF7FFF;" : "=r"(a) : "r"(y));
  asm("add.rn.f16x2 %0, %1, %2;" : "=r"(t) : "r"(y), "r"(a));  // 2 relu(y), exactly
  asm("min.f16x2 %0, %1, %2;" : "=r"(a) : "r"(a), "r"(cap));
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(v) : "r"(a), "r"(scale), "r"(minus_one));
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(p) : "r"(q(kDegree)), "r"(v), "r"(q(kDegree - 1)));
#pragma unroll
  for (int i = kDegree - 2; i >= 0; --i)
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(p) : "r"(p), "r"(v), "r"(q(i)));
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(y) : "r"(a), "r"(p), "r"(t));
  return y;
}

// The same activations in fp32 on a value whose factors were folded in (FusedEpilogue::kFold32):
// GELU-tanh takes z = x / s and returns z + z tanh(z (z^2 + c0 s)) = 2 GELU / s; SiLU takes hx = x
// / 2.
template <Activation A>
__device__ __forceinline__ float act_folded_f32(float z) {
  static_assert(A == Activation::kGeluTanh || A == Activation::kSilu);
  if constexpr (A == Activation::kGeluTanh) {
    const float p = z * fmaf(z, z, float(0.7978845608028654 * kGeluScale));
    return fmaf(z, tanh_fast(p), z);
  } else {
    return fmaf(z, tanh_fast(z), z);
  }
}

// The activation A alone on a pair of fp16 values whose biases the accumulator already holds
// (FusedEpilogue::kBiasInAcc): ReLU as a max, GELU-tanh and SiLU by act_f16x2.
template <Activation A, bool kFolded = false, bool kPoly = false>
__device__ __forceinline__ uint32_t act2_f16(uint32_t x) {
  if constexpr (A == Activation::kRelu) {
    uint32_t y;
    asm("max.f16x2 %0, %1, %2;" : "=r"(y) : "r"(x), "r"(0u));
    return y;
  } else if constexpr (kPoly && (A == Activation::kGeluTanh || A == Activation::kSilu)) {
    static_assert(kFolded);
    return act_poly_f16x2<A>(x);
  } else if constexpr (A == Activation::kGeluTanh || A == Activation::kSilu) {
    return act_f16x2<A, kFolded>(x);
  } else {
    return x;
  }
}

// A pair already converted to 16 bits plus its pair of 16-bit biases, then the activation A:
// ReLU folded into the fma (x * 1 + b), GELU-tanh and SiLU (fp16 only) by act_f16x2. Against
// two fp32 adds ahead of the conversion and the fp32 activation, a third to a half of the
// instructions. The sum is rounded twice (the accumulator to 16 bits, then the sum), a
// half-unit more than one rounding at most.
template <typename T, Activation A, bool kFolded = false, bool kPoly = false>
__device__ __forceinline__ uint32_t bias_act2(uint32_t x, uint32_t b) {
  constexpr bool kHalf = std::is_same_v<T, __half>;
  const uint32_t one = kHalf ? 0x3C003C00u : 0x3F803F80u;
  uint32_t y;
  if constexpr (A == Activation::kRelu) {
    if constexpr (kHalf)
      asm("fma.rn.relu.f16x2 %0, %1, %2, %3;" : "=r"(y) : "r"(x), "r"(one), "r"(b));
    else
      asm("fma.rn.relu.bf16x2 %0, %1, %2, %3;" : "=r"(y) : "r"(x), "r"(one), "r"(b));
    return y;
  }
  if constexpr (kHalf)
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(y) : "r"(x), "r"(one), "r"(b));
  else
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(y) : "r"(x), "r"(one), "r"(b));
  if constexpr (A == Activation::kGeluTanh || A == Activation::kSilu) {
    static_assert(kHalf, "16-bit activations in fp16 only");
    if constexpr (kPoly) {
      static_assert(kFolded);
      return act_poly_f16x2<A>(y);
    }
    return act_f16x2<A, kFolded>(y);
  }
  return y;
}

}  // namespace fusionscope::kernels::detail
