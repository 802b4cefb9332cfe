// How the fully fused Hopper MLP (fully_fused_mlp_sm90.cu, which alone includes this file)
// applies each layer's biases and activation: the choices per dtype, activation and width, each
// with what measured it, the scale factors folded into the weights and biases, and the 16-bit and
// fp32 forms of the activations.
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
  // How each layer's biases are added (alternating rounds, a million rows):
  // - bf16 GELU and SiLU at 48 and 64 wide, 32 wide GELU, SiLU in five warpgroups, 96 wide
  //   SiLU and GELU in four warpgroups, and 32 wide bf16 ReLU: by wgmma (bias_mma; see kFoldMma),
  //   32 wide against fp32 adds relu 53.7-53.8 -> 52.6-52.7 us, silu 65.2-66.8 -> 60.5-61.7 (at
  //   16 wide the four more m64n16k16 a layer cost more than the adds). At 32 wide not
  //   with no activation: there ptxas serialized the wgmmas for registers (C7512), and the 16-bit
  //   pairs below measured faster, three alternating rounds, a million rows, us: 5 layers
  //   50.2-50.6 -> 49.0-49.3, 8 layers 56.9-57.8 -> 49.7;
  // - every fp16 kernel, and ReLU or no activation in bf16 but 32 wide ReLU: to
  //   the 16-bit pairs, activated there (bias_act2). Against fp32 adds and activations, 5 layers
  //   fp16 unless said: relu 16 wide 30.2-30.9 -> 28.3-29.2 us (8 layers 36.3-36.7 ->
  //   29.6-29.8, bf16 30.1-30.3 -> 28.6-28.7); 48 wide 74.2-74.4 -> 74.4-74.8 (memory-bound)
  //   but 8 layers 99.7-101.2 -> 85.0-85.6; 64 wide level, 8 layers 136.9-137.1 ->
  //   109.3-109.6; 96 wide 216.0-222.0 -> 209.5-215.5; 128 wide 268.7-296.8 -> 250.0-265.0.
  //   GELU 16 wide 41.0-41.5 -> 36.3-36.5, 48 wide 118.2-120.2 -> 102.1-103.0, 128 wide
  //   400.6-405.4 -> 329.4-366.7; SiLU 16 wide 39.0-39.5 -> 34.6-34.8, 64 wide 130.9-133.5 ->
  //   118.0-118.8; 96 wide GELU 288.2-290.1 -> 264.9-266.2, SiLU 285.5-289.7 -> 266.0-267.5.
  //   The largest relative error doubles (GELU 16 wide 4.7e-4 -> 9.8e-4, 8 layers of 64 6.6e-4
  //   -> 1.7e-3; fp16's tolerance is 5e-3). bf16 keeps fp32 activations: in bf16x2 arithmetic
  //   (tanh.approx.bf16x2) 12-20% faster, but 16 layers of 64 reached 1.97e-2 of relative error
  //   against 5.3e-3 (bf16's tolerance is 2e-2; see docs/kernels.md);
  // - the other bf16 GELU and SiLU (16 wide, 32 wide SiLU in four warpgroups, 96 wide GELU in
  //   three, 128 wide): the accumulators start from them (kBiasPreload), but at 128 wide in four
  //   warpgroups of two stages;
  // - otherwise fp32 adds ahead of the activation.
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
  // kFold32's fma made four (two). At 48 and 96 wide the weight's padding holds the bias slice
  // (one more k16 slice a layer: 3 -> 4 at 48 wide, 6 -> 7 at 96). SiLU's factors are powers of
  // two, so its results are the same bits; GELU's 1 / s and s / 2 round the scaled weights and
  // biases once more. Three alternating rounds, a million rows, 5 layers unless said, us,
  // kFold32 / this: 48 wide GELU 99.2-100.4 -> 85.3-85.4 (8 layers 156.9-171.4 -> 132.3-140.6),
  // SiLU 86.0-87.2 -> 78.6-79.8 (8 layers 132.3-132.7 -> 123.3-125.2; 128 K rows level); 96 wide
  // GELU 256.9-263.9 -> 239.4-243.3 (4 layers 209.6-215.4 -> 175.7-186.7, 8 layers
  // 439.3-468.1 -> 408.9-420.1), SiLU 234.4-241.3 -> 220.0-223.4 (8 layers 399.4-405.2 ->
  // 380.4-385.9; 3 layers level); 32 wide SiLU (its biases already by wgmma, its factors
  // folded now) 55.8-56.1 -> 54.1-54.5, 8 layers 85.6-87.9 -> 83.4-84.9. The largest relative
  // errors: SiLU unchanged, GELU 4.16e-3 -> 4.89e-3 (48 wide), 3.98e-3 -> 4.82e-3 (96 wide), 8
  // layers 5.32e-3 -> 5.87e-3 and 5.21e-3 -> 6.35e-3 (bf16's tolerance is 2e-2). 64 wide, whose
  // weight has no padding, takes its slices from atoms of their own (Geometry::kBiasAtoms), in
  // five warpgroups (base_shape), and so does 32 wide GELU, against six with kFold32: 5 layers
  // 60.6-60.7 -> 57.0-57.1, 8 layers 94.0-94.2 -> 88.2-88.4, 4 M rows 220.1-223.6 ->
  // 203.7-208.8, 3 layers level (relative error 4.12e-3 -> 5.02e-3, 8 layers 5.80e-3 ->
  // 6.68e-3). 16 wide too, from the bias atoms by one m64n64k16 (four m64n16k16 from the
  // weight's rows: ptxas serialized the wgmmas, C7512, and in five warpgroups GELU measured
  // 31.2-32.5 -> 33.5-35.9, SiLU 28.6-30.0 -> 32.5-34.3), in six warpgroups: GELU 31.5-31.8 ->
  // 30.8-31.0 (8 layers 47.9-48.4 -> 46.6-47.4, 4 M rows 107.0-108.6 -> 103.5-104.8), SiLU
  // 29.0-29.7 -> 28.7-29.3 (8 layers 44.1-44.7 -> 43.2-44.2), but 128 K rows of SiLU 7.6-7.9
  // -> 8.3 and 3 layers level (GELU's relative error 3.76e-3 -> 4.47e-3); kBiasPreload has
  // since taken its place at 16 wide. Not at 128 wide (no room for the slices).
  static constexpr bool kFoldMma = kBiasMma && kHeavy;
  static constexpr bool kHalfBias =
      !kBiasMma && (A == Activation::kRelu || A == Activation::kNone || kHalfAct);
  // fp16 accumulators wherever the pairs get their biases in 16 bits (every fp16 kernel): the
  // accumulators are the pairs themselves, with no conversion, and the MMAs write half the
  // registers. A sum is rounded after every k16 slice, not once at the end. Against fp32
  // accumulators, three alternating rounds, a million rows, 5 layers fp16, us: 64 wide GELU
  // 122.0-123.1 -> 108.2-108.9, SiLU 113.7-115.3 -> 101.2-102.1, 8 layers relu 105.1-105.3
  // -> 95.9-96.1, 5 layers relu level (memory-bound); 48 wide GELU 95.4-96.1 -> 84.0-84.6,
  // SiLU 85.2-85.3 -> 78.4-78.5, 8 layers relu 76.5-76.7 -> 72.4; 96 wide relu 195.9-196.6 ->
  // 185.6-186.0, SiLU 255.0-256.9 -> 245.4-246.9, GELU level; 128 wide relu 230.3-230.5 ->
  // 214.2-214.5, SiLU 307.6-316.4 -> 270.4-281.6, GELU 325.4-353.7 -> 293.2-317.9. 32 wide fp16,
  // whose biases went in by wgmma with fp32 accumulators, now takes this form too: GELU 60.3
  // -> 52.6, SiLU 55.6-55.7 -> 50.3-50.5, relu 49.5-49.6 -> 49.2, 8 layers of GELU 93.1-93.8
  // -> 81.0-81.7. The largest relative error: 5 layers 1.2e-3 -> 1.3-1.6e-3, 16 layers of 64
  // GELU 2.7e-3 -> 2.8e-3 (fp16's tolerance is 5e-3). The biases by wgmma with fp16 accumulators
  // (48 wide in the weight's padding slice, 16 wide in a slice of their own; the same relative
  // errors) measured 4-11% slower at 16 and 48 wide GELU and SiLU.
  static constexpr bool kF16Acc = kHalfBias && std::is_same_v<T, __half>;
  // The fp16 accumulators start from the layer's biases (moved in before its MMAs, which add onto
  // them), so the epilogue applies the activation alone. Guess: one f16x2 instruction a pair
  // fewer after each MMA, for moves that need no MMA result. Look, two alternating rounds, a
  // million rows, 5 layers fp16, us: 96 wide GELU 259.4-261.9 -> 240.5-240.9, SiLU
  // 250.3-250.4 -> 239.1, relu 184.5-185.5 -> 183.4-183.6; 64 wide GELU 106.1-106.2 -> 104.5.
  // Slower elsewhere, so not there: 64 wide SiLU 101.6-102.0 -> 108.2-108.3 and 8 layers of relu
  // 95.9-96.0 -> 104.3, 48 wide GELU 80.3-80.9 -> 85.2-85.8 and SiLU 78.0-78.6 -> 83.4-84.0, 32
  // wide GELU 51.6 -> 54.6-54.7, 16 wide relu 23.8 -> 25.9-26.0, GELU 28.0-28.2 -> 28.9-29.2,
  // SiLU 27.1-27.3 -> 30.4-30.6, 128 wide GELU 283.6-283.7 -> 291.3-291.5 (128 wide SiLU
  // 267.7-281.5 -> 265.7, relu 214.2-214.3 -> 216.1-217.1). The biases enter the sum first:
  // the largest relative errors fell 5-20% (96 wide GELU 1.47e-3 -> 1.38e-3).
  static constexpr bool kBiasInAcc =
      kF16Acc && (W == 96 || (W == 64 && A == Activation::kGeluTanh));
  // GELU and SiLU in f16x2 with scale factors folded into the weights and biases (act_f16x2's
  // kFolded; the factors below). SiLU's activated layers take halved weights and biases and so
  // produce hx themselves: one multiply a pair fewer, the same bits out (a power of two
  // commutes with every rounding). Six alternating rounds, a million rows, 5 layers: 64 wide
  // SiLU 119.3-120.2 -> 116.0-117.0 us, 16 and 48 wide level; five rounds: 96 wide 265.3-266.8
  // -> 252.8-255.5, 128 wide level. GELU's layers before the last produce z = x / s, whose
  // argument is two instructions (act_f16x2), and emit 2 GELU / s: of five f16x2 instructions
  // a pair (bias, argument, product) one fewer than the halving alone, two fewer than none.
  // Against the halving alone (which measured 2% faster than none up to 64 wide, 11% slower at
  // 96), three alternating rounds, fp16 accumulators, us: 16 wide 28.1-28.4 -> 28.0-28.2 (8
  // layers 42.1-42.7 -> 41.5-41.8); 32 wide 52.5-52.7 -> 51.7-52.0; 48 wide 83.5-84.2 ->
  // 80.3-81.1 (8 layers 127.5-129.0 -> 123.6-123.8); 64 wide 107.5-107.7 -> 105.1-106.1 (8
  // layers 167.2-167.5 -> 162.6-162.7); and against no fold, 96 wide 264.0-265.2 ->
  // 260.2-261.9 (8 layers 462.4-466.9 -> 458.2-461.3), 128 wide 292.5-307.0 -> 281.2-290.7.
  // Relative errors within a few percent of before (16 layers of 64 2.80e-3 -> 2.65e-3).
  static constexpr bool kFold = kHalfBias && (A == Activation::kSilu || A == Activation::kGeluTanh);
  // At 128 wide, where no room is left for kFoldMma's bias slices, 16 wide, 32 wide SiLU in four
  // warpgroups and 96-wide GELU in three: the fp32 accumulators start from the layer's biases
  // (16-bit pairs in shared memory, a 16-byte load per four chunks, widened by integer
  // instructions, off the FMA pipe the MMAs share), and the factors go into the weights in shared
  // memory as kFoldMma's: the accumulator is the activation's argument, one fp32 instruction a
  // value fewer than kFold32's fma, and no MMA slice more. Guess: what kFoldMma gained at 48 and 96
  // wide. Look, alternating rounds (three or four), a million rows, 5 layers unless said, us,
  // before / after: 128 wide GELU 313.9-319.2 -> 298.7-311.3 (4 M rows 1369.6-1401.3 ->
  // 1288.9-1307.0; two warpgroups, 256 K rows 97.1-98.7 -> 91.0-91.6, 128 K 52.4-52.9
  // -> 51.0-51.5), SiLU 298.2-331.1 -> 286.9-305.4 (4 M rows 1270.2-1295.9 -> 1152.5-1174.3, 8
  // layers 550.9-554.0 -> 512.9-529.8, 4 layers 250.1-272.5 -> 236.9-248.2); 96 wide GELU against
  // kFoldMma 241.0-243.8 -> 227.9-230.2; 16 wide against kFoldMma from the atoms (where ptxas
  // serialized the wgmmas, C7511: no longer) GELU 30.6-31.1 -> 29.9-30.3 (8 layers 46.1-47.9
  // -> 44.8-46.4, 128 K rows 8.4-8.5 -> 7.9-8.0), SiLU 28.6-29.7 -> 28.1-29.2 (4 M rows 98.5-100.3
  // -> 97.6-98.8, 3 layers 26.5-27.7 -> 26.0-26.8); 32 wide SiLU's few-tiles shape, 128 K
  // rows 12.3-12.4 -> 11.9-12.1 (five warpgroups level: 52.5-52.7 / 52.3-52.6). ptxas spills 8 and
  // 16 bytes in the one-stage shape (4 x 1), and adding layer 0's biases after its MMAs there (no
  // spill) measured slower (GELU 304.5-315.4, 4 M rows 1309.3-1338.3). Not where it measured
  // slower: 128 wide in four warpgroups of two stages (3 layers of SiLU 198.1-200.3 -> 203.0-210.7,
  // 128 K rows of GELU 31.7-32.2 -> 32.8-33.0, which keep kFold32); against kFoldMma, 32 wide GELU
  // (56.0-56.6 -> 56.5-57.3, 8 layers 86.7-86.9 -> 87.0-88.8, 4 M rows 204.1-204.5 -> 205.0-206.2);
  // at 96 wide GELU in four warpgroups (4 layers 175.7-181.8 -> 179.8-187.3) and SiLU (8 layers
  // 387.0-395.3 -> 400.0-411.1, 5 layers level); 64 wide GELU 116.2-118.2 -> 119.1-120.3, SiLU
  // 103.6-109.9 -> 106.4-109.8; 48 wide GELU 8 layers 132.9-136.9 -> 136.3-142.3.
  static constexpr bool kBiasPreload =
      !kHalfBias && !kBiasMma && kHeavy && !(W == 128 && kWarpgroups == 4 && kStages == 2);
  // bf16 GELU and SiLU (fp32 epilogues) take the same factors, all of them in the fp32 fma that
  // adds the bias (acc * weight_factor + bias * bias_factor): the weights stay as they are, and
  // GELU's epilogue is four fp32 instructions a value and a tanh where it was six, SiLU's two
  // where it was three. Three alternating rounds, a million rows, 5 layers bf16, us: 64 wide
  // GELU 142.4-142.8 -> 138.9-139.2 (8 layers 223.3-225.4 -> 218.6-220.8, 16 layers
  // 464.4-467.0 -> 454.5-458.5), SiLU 129.2-130.4 -> 118.2-118.8; 48 wide GELU 110.2-111.1 ->
  // 108.0-109.1, SiLU 100.8-102.0 -> 98.9-99.7; 16 wide SiLU 31.4-31.8 -> 29.9-30.1 (16 layers
  // 100.5-101.2 -> 94.7-95.1). Not where it measured slower, though its instructions are fewer:
  // 16 wide GELU 33.8-34.2 -> 35.0-35.3, 96 wide GELU 296.9-299.5 -> 314.8-317.2 and SiLU
  // 292.2-292.7 -> 295.7-296.9, 128 wide GELU 371.4-373.7 -> 386.4-389.8 (SiLU 350.2-360.5 ->
  // 345.5-348.7, within the spread of 128 wide), nor at 32 wide, whose biases go in by wgmma
  // (with them by the fma: GELU level, SiLU 55.2-55.7 -> 56.1-56.6). The relative errors stayed
  // within 1% (16 layers of 64 GELU 5.33e-3 -> 5.24e-3; bf16's tolerance is 2e-2). With three
  // warpgroups at 96 wide, SiLU takes it there and at 128 too (two alternating rounds, us: 96
  // wide 251.9-252.9 -> 234.6-235.4, 128 wide 355.8-362.1 -> 349.4-350.0, 3 layers of 128
  // 213.9-215.5 -> 210.1-212.5, 128 K rows of 128 level); GELU at 96 still not (three rounds:
  // 259.2-260.1 -> 266.5-267.2, 8 layers 453.8-468.0 -> 476.7-477.7). GELU takes it at 128 wide
  // in more than two warpgroups (wide_shape), three alternating rounds, us: 5 layers (four of
  // one stage) 372.1-390.3 -> 354.2-357.2, 3 layers (four of two) 202.1-212.9 -> 199.3-200.0, 8
  // layers (5 + 3) 630.7-649.2 -> 615.0-626.0, 4 layers (three) level; still not in two (128 K
  // rows of 5 layers 57.1-60.4 -> 59.8-63.3) nor at 96 wide in four (4 layers 201.2-204.8 ->
  // 202.3-210.3, 3 layers level). And at 16 wide in six warpgroups (measured slower in four),
  // three alternating rounds, a million rows, us: 5 layers 33.9-34.1 -> 31.2, 8 layers
  // 51.0-51.6 -> 47.3-48.2, 3 layers 26.8-28.0 -> 26.5-27.8, 128 K rows 8.4-8.6 -> 8.1-8.4, 4 M
  // rows 117.0-119.7 -> 104.1-107.3, 16 layers 102.6-105.9 -> 96.1-99.4 (relative error 2.06e-2
  // both, over bf16's 2e-2 as every variant is there: eager 2.64e-2; 8 layers 4.74e-3). (At 32
  // wide, its biases in this fma rather than by wgmma, in six warpgroups, until kFoldMma.)
  // Up to 96 wide, kFoldMma has taken its place, and kBiasPreload at 128 but in four warpgroups of
  // two stages.
  static constexpr bool kFold32 =
      !kHalfBias && !kBiasMma && !kBiasPreload &&
      (A == Activation::kSilu || (A == Activation::kGeluTanh && kWarpgroups > 2));
  // The 16-bit biases in half_bias_word's order (16-byte loads), up to 64 wide.
  static constexpr bool kBiasVec = kHalfBias && kCols == 64;
  // A quarter or so of the GELU and SiLU pairs take the polynomial (act_poly_f16x2) in place of
  // the tanh: every kPolyEvery-th pair of a layer's, or none (0). Guess: the MUFU bounds these
  // epilogues (busy two thirds of the 16 and 48 wide kernels, the issue slots under half), so
  // moving some of its work to the FMA pipes pays until the two balance. Look, two alternating
  // rounds, a million rows, 5 layers fp16, us, none / every 4th / 5th / 6th / 8th pair: GELU 16
  // wide 28.1 / 27.4 / 27.3-27.4 / 27.6-27.8 / 27.6, 32 wide 51.8-52.3 / 51.0-51.1 / 50.5-50.6 /
  // 51.0 / 50.6, 48 wide 81.0-81.4 / 78.0-78.5 / 79.5 / 77.9-78.3 / 81.7-81.9, 128 wide
  // 292.8-297.6 / 279.9-280.2 / 276.6-277.5 / 275.7-276.6 / 277.3-277.5; SiLU 48 wide 78.5-78.7 /
  // 73.6-74.2 / 74.7-75.1 / 74.8-75.1 / 76.6-77.1, 64 wide 101.6-101.8 / 101.6-102.1 / 99.6 /
  // 100.8-101.0 / 100.8-101.2, 96 wide 239.2-239.3 / 238.5-239.6 / 240.8-242.0 / 247.7-249.4 /
  // 233.8-235.6, 32 wide 50.1 for each (every width and activation: docs/kernels.md). Every 2nd
  // pair was slower everywhere (16 wide SiLU 28.0-28.4, 64 wide 110.0-110.2): the FMA pipes and
  // the issue slots become the bound.
  static constexpr int kPolyEvery = !kFold                       ? 0
                                    : A == Activation::kGeluTanh ? (W == 32    ? 8
                                                                    : W == 128 ? 6
                                                                               : 4)
                                    : W == 32                    ? 0
                                    : W == 64                    ? 5
                                    : W == 96                    ? 8
                                                                 : 4;
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
// Q of degree 8.
template <Activation A>
__device__ __forceinline__ uint32_t act_poly_f16x2(uint32_t y) {
  static_assert(A == Activation::kGeluTanh || A == Activation::kSilu);
  constexpr bool kGelu = A == Activation::kGeluTanh;
  // Q's degree: one lower (5 and 7; max errors 1.8e-3 and 2.9e-3) measured 1-3% faster but
  // doubled the end-to-end error (8 layers of 48 wide GELU 2.0e-3 -> 5.0e-3, at fp16's tolerance).
  constexpr int kDegree = kGelu ? 6 : 8;
  // -Q's coefficients, v^0 first, as fp16 bits (scripts/fit_act_poly.py).
  constexpr uint16_t kGeluQ[] = {0xA91E, 0x3278, 0xB6E5, 0x370A, 0xAF7F, 0xB07E, 0x2D87};
  constexpr uint16_t kSiluQ[] = {0xA5A8, 0x2E47, 0xB2B5, 0x34CB, 0xB5B7,
                                 0x34BC, 0xA252, 0xB226, 0x2E60};
  const auto pair = [](uint32_t h) { return h * 0x10001u; };
  const auto q = [&](int i) { return pair(kGelu ? kGeluQ[i] : kSiluQ[i]); };
  const uint32_t cap = pair(kGelu ? 0x3D66 : 0x4480);    // c: 1.3496, 4.5
  const uint32_t scale = pair(kGelu ? 0x3DED : 0x371C);  // 2 / c: 1.4814, 0.44434
  const uint32_t minus_one = 0xBC00BC00u;
  uint32_t a, t, v, p;
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
