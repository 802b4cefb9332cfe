// Every variant against the fp32 reference on a real GPU (label gpu), and the runner's contract:
// progress, cancel, graphs, and errors reported rather than thrown.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <set>

#include "fusionscope/kernels/runner.h"
#include "gpu_guard.h"

namespace fk = fusionscope::kernels;

namespace {

fk::MlpConfig preset(const char* name) {
  return fk::find_preset(name).value();
}

fk::MlpConfig make(fk::MlpKind kind, int64_t rows, std::vector<int64_t> widths, bool bias,
                   fk::DType dtype, fk::Activation act) {
  fk::MlpConfig c;
  c.name = "test";
  c.kind = kind;
  c.rows = rows;
  c.widths = std::move(widths);
  c.bias = bias;
  c.dtype = dtype;
  c.activation = act;
  return c;
}

fk::RunOptions quick() {
  fk::RunOptions o;
  o.warmup_iterations = 1;
  o.timed_iterations = 3;
  return o;
}

// Runs and checks one configuration x variant; prints the error figures for the log.
void expect_correct(const fk::MlpConfig& c, fk::Variant v, fk::RunOptions o = quick()) {
  const fk::RunResult r = fk::run(c, v, o);
  ASSERT_TRUE(r.ok) << fk::describe(c) << " / " << fk::to_string(v) << ": " << r.error;
  ASSERT_TRUE(r.correctness.checked);
  std::printf("  %-55s %-16s rel %.2e  max abs %.2e (|ref| max %.2f)  %s\n",
              fk::describe(c).c_str(), std::string(fk::to_string(v)).c_str(),
              r.correctness.rel_error, r.correctness.max_abs_error, r.correctness.max_abs_reference,
              r.kernel_path.c_str());
  EXPECT_EQ(r.correctness.non_finite, 0u) << "unwritten or non-finite outputs";
  EXPECT_TRUE(r.correctness.passed)
      << fk::describe(c) << " / " << fk::to_string(v) << ": rel error " << r.correctness.rel_error
      << " > tolerance " << r.correctness.tolerance;
  EXPECT_GT(r.correctness.max_abs_reference, 0.01) << "reference is (near) zero: a vacuous check";
  EXPECT_EQ(r.iteration_ms.size(), static_cast<size_t>(o.timed_iterations));
  EXPECT_GT(r.median_ms, 0);
}

void expect_all_variants_correct(const fk::MlpConfig& c, fk::RunOptions o = quick()) {
  int ran = 0;
  for (auto v : fk::all_variants()) {
    if (!fk::supports(c, v)) continue;
    expect_correct(c, v, o);
    ++ran;
  }
  EXPECT_GT(ran, 0);
}

TEST(RunnerGpu, DeviceQuery) {
  FUSIONSCOPE_REQUIRE_GPU();
  const fk::DeviceInfo d = fk::query_device(0);
  ASSERT_TRUE(d.available) << d.unavailable_reason;
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.total_memory_bytes, 0u);
  EXPECT_GT(d.free_memory_bytes, 0u);
  EXPECT_GT(d.l2_bytes, 0u);
  EXPECT_GT(d.driver_version, 0);
  EXPECT_GT(d.runtime_version, 0);
  std::printf(
      "  %s cc %d.%d, %d SMs, %.1f GiB, L2 %.0f MiB, %.2f TB/s, %.0f TFLOP/s (%s), "
      "driver %d runtime %d\n",
      d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count,
      static_cast<double>(d.total_memory_bytes) / (1ull << 30),
      static_cast<double>(d.l2_bytes) / (1ull << 20), d.memory_bandwidth_bytes_per_s / 1e12,
      d.peak_tensor_flops / 1e12, d.peak_flops_note.c_str(), d.driver_version, d.runtime_version);
  const fk::DeviceInfo missing = fk::query_device(1000);
  EXPECT_FALSE(missing.available);
  EXPECT_NE(missing.unavailable_reason.find("does not exist"), std::string::npos);
}

// Small shapes: every variant of every kind and dtype (also what the sanitizers run).
TEST(RunnerGpuSmall, LinearAllDtypes) {
  FUSIONSCOPE_REQUIRE_GPU();
  for (auto dt : {fk::DType::kFp32, fk::DType::kFp16, fk::DType::kBf16})
    expect_all_variants_correct(
        make(fk::MlpKind::kLinear, 200, {32, 64}, true, dt, fk::Activation::kNone));
}

TEST(RunnerGpuSmall, MlpAllActivations) {
  FUSIONSCOPE_REQUIRE_GPU();
  for (auto act : {fk::Activation::kRelu, fk::Activation::kGeluTanh, fk::Activation::kSilu,
                   fk::Activation::kNone})
    for (auto dt : {fk::DType::kFp16, fk::DType::kBf16})
      expect_all_variants_correct(make(fk::MlpKind::kMlp, 333, {48, 128, 16, 32}, true, dt, act));
  expect_all_variants_correct(
      make(fk::MlpKind::kMlp, 100, {64, 96, 64}, false, fk::DType::kFp32, fk::Activation::kRelu));
}

TEST(RunnerGpuSmall, GatedBothPathsOddShapes) {
  FUSIONSCOPE_REQUIRE_GPU();
  for (auto act : {fk::Activation::kGeluTanh, fk::Activation::kSilu, fk::Activation::kRelu})
    for (auto dt : {fk::DType::kFp16, fk::DType::kBf16}) {
      // Rows, dim and hidden that are not multiples of any tile.
      const auto c = make(fk::MlpKind::kGated, 300, {200, 328}, false, dt, act);
      expect_all_variants_correct(c);
      fk::RunOptions o = quick();
      o.gated_path = fk::GatedGemmPath::kAmpereMmaSync;
      expect_correct(c, fk::Variant::kGatedGemm, o);
    }
  expect_all_variants_correct(
      make(fk::MlpKind::kGated, 64, {64, 128}, false, fk::DType::kFp32, fk::Activation::kGeluTanh));
}

TEST(RunnerGpuSmall, GraphModeMatches) {
  FUSIONSCOPE_REQUIRE_GPU();
  fk::RunOptions o = quick();
  o.use_graph = true;
  const auto c = make(fk::MlpKind::kGated, 256, {128, 256}, false, fk::DType::kBf16,
                      fk::Activation::kGeluTanh);
  for (auto v : {fk::Variant::kEager, fk::Variant::kGatedGemm}) {
    const auto r = fk::run(c, v, o);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(r.used_graph);
    EXPECT_TRUE(r.correctness.passed) << r.correctness.rel_error;
  }
}

// One tiny run per variant and kernel path: what compute-sanitizer (memcheck, racecheck,
// synccheck) runs, where full sizes would take too long under instrumentation. A case without a
// variant runs every variant its configuration supports.
struct SanitizeCase {
  const char* what;
  fk::MlpConfig config;
  std::optional<fk::Variant> variant;
  fk::GatedGemmPath path = fk::GatedGemmPath::kAuto;
};

TEST(RunnerGpuSanitize, EveryVariantOnce) {
  FUSIONSCOPE_REQUIRE_GPU();
  using K = fk::MlpKind;
  using D = fk::DType;
  using A = fk::Activation;
  const auto fused = fk::Variant::kFullyFused;
  const SanitizeCase cases[] = {
      {"gated, hidden not a multiple of a tile",
       make(K::kGated, 136, {64, 136}, false, D::kBf16, A::kGeluTanh),
       {}},
      {"gated, the sm_80 kernel", make(K::kGated, 136, {64, 136}, false, D::kFp16, A::kSilu),
       fk::Variant::kGatedGemm, fk::GatedGemmPath::kAmpereMmaSync},
      {"mlp, mixed widths", make(K::kMlp, 100, {32, 64, 32}, true, D::kFp16, A::kRelu), {}},
      {"mma.sync fully fused", make(K::kMlp, 40, {128, 112, 128}, true, D::kBf16, A::kSilu), fused},
      {"64 wide: the wgmma kernel", make(K::kMlp, 300, {64, 64, 64, 64}, true, D::kFp16, A::kRelu),
       fused},
      {"128 wide: 2 warpgroups, output staged in the input's stage",
       make(K::kMlp, 300, std::vector<int64_t>(4, 128), true, D::kFp16, A::kSilu), fused},
      {"48 wide: dense rows, a partial last tile",
       make(K::kMlp, 100, std::vector<int64_t>(3, 48), true, D::kBf16, A::kRelu), fused},
      {"96 wide: dense rows, a partial last tile",
       make(K::kMlp, 100, std::vector<int64_t>(3, 96), true, D::kFp16, A::kGeluTanh), fused},
      {"96 wide bf16 SiLU: three warpgroups, each stage of two refilled several times",
       make(K::kMlp, 100003, std::vector<int64_t>(3, 96), true, D::kBf16, A::kSilu), fused},
      {"96 wide bf16 SiLU, 3 layers: four warpgroups of two stages",
       make(K::kMlp, 100003, std::vector<int64_t>(4, 96), true, D::kBf16, A::kSilu), fused},
      {"128 wide bf16 SiLU, 3 layers: four warpgroups of two stages",
       make(K::kMlp, 100003, std::vector<int64_t>(4, 128), true, D::kBf16, A::kSilu), fused},
      {"128 wide fp16 GELU, 4 layers: three warpgroups of two stages",
       make(K::kMlp, 100003, std::vector<int64_t>(5, 128), true, D::kFp16, A::kGeluTanh), fused},
      {"128 wide bf16 GELU, 5 layers: four warpgroups of one stage, refilled after each store",
       make(K::kMlp, 600003, std::vector<int64_t>(6, 128), true, D::kBf16, A::kGeluTanh), fused},
      {"11 layers of 128: three kernels, two buffers in turn",
       make(K::kMlp, 300, std::vector<int64_t>(12, 128), true, D::kBf16, A::kRelu), fused},
      {"16 wide: one packed row of 4 and a tail of 3",
       make(K::kMlp, 7, std::vector<int64_t>(4, 16), true, D::kBf16, A::kGeluTanh), fused},
      {"16 wide fp16 relu: fp16 accumulators, a tail of 3",
       make(K::kMlp, 303, std::vector<int64_t>(4, 16), true, D::kFp16, A::kRelu), fused},
      {"16 wide fp16 relu: each stage refilled after its staged output was read",
       make(K::kMlp, 1000003, std::vector<int64_t>(3, 16), true, D::kFp16, A::kRelu), fused},
      {"16 wide fp16 GELU: the halving folded into the weights in shared memory",
       make(K::kMlp, 303, std::vector<int64_t>(4, 16), true, D::kFp16, A::kGeluTanh), fused},
      {"16 wide fp16 SiLU: six warpgroups, each stage of two refilled many times",
       make(K::kMlp, 1000003, std::vector<int64_t>(3, 16), true, D::kFp16, A::kSilu), fused},
      {"64 wide bf16 GELU: five warpgroups, biases by wgmma from their atom, stages refilled",
       make(K::kMlp, 200003, std::vector<int64_t>(3, 64), true, D::kBf16, A::kGeluTanh), fused},
      {"64 wide bf16 SiLU, 8 layers: the biases in two atoms, a partial last tile",
       make(K::kMlp, 1000, std::vector<int64_t>(9, 64), true, D::kBf16, A::kSilu), fused},
      {"48 wide bf16 SiLU: six warpgroups, dense rows, a partial last tile",
       make(K::kMlp, 102001, std::vector<int64_t>(3, 48), true, D::kBf16, A::kSilu), fused},
      {"48 wide bf16 GELU without biases: the kernel without the bias MMA, a partial last tile",
       make(K::kMlp, 100003, std::vector<int64_t>(3, 48), false, D::kBf16, A::kGeluTanh), fused},
      {"48 wide bf16 GELU in seven warpgroups, a partial last tile",
       make(K::kMlp, 102001, std::vector<int64_t>(6, 48), true, D::kBf16, A::kGeluTanh), fused},
      {"32 wide bf16 GELU: five warpgroups, its biases by wgmma",
       make(K::kMlp, 300001, std::vector<int64_t>(4, 32), true, D::kBf16, A::kGeluTanh), fused},
      {"96 wide bf16 GELU: biases by wgmma from the weight's padding, a partial last tile",
       make(K::kMlp, 100, std::vector<int64_t>(5, 96), true, D::kBf16, A::kGeluTanh), fused},
      {"96 wide bf16 GELU, 5 layers: biases preloaded into the accumulators, a partial tile",
       make(K::kMlp, 100, std::vector<int64_t>(6, 96), true, D::kBf16, A::kGeluTanh), fused},
      {"128 wide bf16 SiLU: two warpgroups, biases preloaded, a partial last tile",
       make(K::kMlp, 300, std::vector<int64_t>(6, 128), true, D::kBf16, A::kSilu), fused},
      {"32 wide bf16 SiLU, few tiles: biases preloaded, halved weights, a tail of 1",
       make(K::kMlp, 301, std::vector<int64_t>(4, 32), true, D::kBf16, A::kSilu), fused},
      {"32 wide bf16, no activation: 16-bit biases, a tail of 1",
       make(K::kMlp, 4001, std::vector<int64_t>(4, 32), true, D::kBf16, A::kNone), fused},
      {"32 wide: packed 2 to a row, a tail of 1",
       make(K::kMlp, 301, std::vector<int64_t>(4, 32), true, D::kFp16, A::kSilu), fused},
      {"64 wide, more tiles than warpgroups: each takes several in turn",
       make(K::kMlp, 40000, std::vector<int64_t>(3, 64), true, D::kBf16, A::kRelu), fused},
      {"fp32 eager linear", make(K::kLinear, 24, {16, 8}, true, D::kFp32, A::kNone),
       fk::Variant::kEager},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.what);
    fk::RunOptions o;
    o.warmup_iterations = 0;
    o.timed_iterations = 1;
    o.check_rows = 16384;  // the fp32 reference of every row took minutes under racecheck
    o.gated_path = k.path;
    if (k.variant)
      expect_correct(k.config, *k.variant, o);
    else
      expect_all_variants_correct(k.config, o);
  }
}

// Shapes no one chose: a seeded stream of gated MLPs (rows 1-8192, dim and hidden any multiple
// of 8 up to 4096 and 8192) and plain MLPs (widths 8-128, 1-8 layers, up to a million rows)
// through every variant that applies. FUSIONSCOPE_TEST_SEED picks another stream; the seed is
// printed so that a failure can be run again.
TEST(RunnerGpuRandom, SeededShapesEveryVariant) {
  FUSIONSCOPE_REQUIRE_GPU();
  const char* env = std::getenv("FUSIONSCOPE_TEST_SEED");
  const uint32_t seed = env ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : 20261128u;
  std::printf("  seed %u\n", seed);
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const fk::DType dtypes[] = {fk::DType::kFp16, fk::DType::kBf16};
  const int64_t rows_choices[] = {1, 3, 64, 127, 129, 1000, 2049, 4095, 5000, 8192};
  for (int i = 0; i < 12; ++i) {
    const int64_t rows = rows_choices[pick(0, 9)];
    const int64_t dim = 8 * pick(1, 512), hidden = 8 * pick(1, 1024);
    const auto act = pick(0, 1) ? fk::Activation::kSilu : fk::Activation::kGeluTanh;
    const fk::DType dtype = dtypes[pick(0, 1)];
    expect_all_variants_correct(make(fk::MlpKind::kGated, rows, {dim, hidden}, false, dtype, act));
  }
  const int64_t mlp_rows[] = {1, 100, 4097, 65536, 1000001};
  const fk::Activation acts[] = {fk::Activation::kRelu, fk::Activation::kGeluTanh,
                                 fk::Activation::kSilu, fk::Activation::kNone};
  for (int i = 0; i < 10; ++i) {
    // Drawn one statement at a time: the order of a call's arguments is the compiler's.
    // One width a multiple of 16 (the fully fused kernel's), or each its own multiple of 8.
    const auto n_widths = static_cast<size_t>(pick(2, 9));  // 1-8 layers
    std::vector<int64_t> widths(n_widths, 16 * pick(1, 8));
    if (i % 3 == 2)
      for (auto& w : widths) w = 8 * pick(1, 16);
    const int64_t rows = mlp_rows[pick(0, 4)];
    const bool bias = pick(0, 1) == 1;
    const fk::DType dtype = dtypes[pick(0, 1)];
    expect_all_variants_correct(
        make(fk::MlpKind::kMlp, rows, widths, bias, dtype, acts[pick(0, 3)]));
  }
}

// The reference workloads at full size.
TEST(RunnerGpuPresets, EveryPresetEveryVariant) {
  FUSIONSCOPE_REQUIRE_GPU();
  for (const char* name : {"linear-post", "geglu-post", "swiglu-post", "mlp-narrow", "mlp-wide"})
    expect_all_variants_correct(preset(name));
}

TEST(RunnerGpuPresets, FullyFusedWidthBuckets) {
  FUSIONSCOPE_REQUIRE_GPU();
  // 16-32 wide, 64 wide with uneven widths, 128 wide at 5 layers (4 warps' shared memory).
  expect_correct(make(fk::MlpKind::kMlp, 100003, {16, 32, 32, 16}, true, fk::DType::kFp16,
                      fk::Activation::kGeluTanh),
                 fk::Variant::kFullyFused);
  expect_correct(make(fk::MlpKind::kMlp, 65537, {64, 48, 64, 16}, false, fk::DType::kBf16,
                      fk::Activation::kRelu),
                 fk::Variant::kFullyFused);
  // All 64 wide (the wgmma kernel on Hopper), rows that fill no tile, no bias, 2 and 8 layers.
  expect_correct(make(fk::MlpKind::kMlp, 65537, std::vector<int64_t>(5, 64), false,
                      fk::DType::kBf16, fk::Activation::kSilu),
                 fk::Variant::kFullyFused);
  expect_correct(make(fk::MlpKind::kMlp, 1000, std::vector<int64_t>(3, 64), true, fk::DType::kFp16,
                      fk::Activation::kGeluTanh),
                 fk::Variant::kFullyFused);
  expect_correct(make(fk::MlpKind::kMlp, 4099, std::vector<int64_t>(9, 64), true, fk::DType::kBf16,
                      fk::Activation::kRelu),
                 fk::Variant::kFullyFused);
  expect_correct(make(fk::MlpKind::kMlp, 50000, std::vector<int64_t>(6, 128), true,
                      fk::DType::kFp16, fk::Activation::kRelu),
                 fk::Variant::kFullyFused);
}

// All 16 or all 32 wide: on Hopper, 4 or 2 rows packed into each 64-wide row of the wgmma
// kernel; all 48 or 96 wide: rows as they are, n48 or n96 MMAs; all 128 wide:
// its 2-warpgroup form. Rows that leave a partial packed row (the tail tile),
// rows that are only a tail, 2 to 8 layers, both dtypes; an unwritten row would show as non-finite.
TEST(RunnerGpuPresets, FullyFusedHopperWidths) {
  FUSIONSCOPE_REQUIRE_GPU();
  struct Case {
    int64_t rows, width;
    size_t layers;
    bool bias;
    fk::Activation act;
  };
  const Case cases[] = {
      {100003, 16, 5, true, fk::Activation::kRelu},      // packed 4 to a row, a tail of 3
      {65537, 32, 2, false, fk::Activation::kGeluTanh},  // packed 2 to a row, a tail of 1
      {3, 16, 8, true, fk::Activation::kSilu},           // only a tail
      {4097, 32, 8, true, fk::Activation::kRelu},
      {65537, 48, 5, true, fk::Activation::kRelu},  // 48 and 96: padded MMAs
      {4099, 48, 8, false, fk::Activation::kSilu},
      {65537, 96, 5, true, fk::Activation::kGeluTanh},
      {65537, 128, 5, false, fk::Activation::kGeluTanh},  // the most whose weights fit
      {1000, 128, 1, true, fk::Activation::kRelu},
  };
  for (auto dt : {fk::DType::kFp16, fk::DType::kBf16})
    for (const Case& k : cases)
      expect_correct(make(fk::MlpKind::kMlp, k.rows, std::vector<int64_t>(k.layers + 1, k.width),
                          k.bias, dt, k.act),
                     fk::Variant::kFullyFused);
}

// Layers whose weights do not fit in one block's shared memory (6 or more at 128 wide, or a deep
// mix of widths) run as several fully fused kernels with the activations between them in device
// memory: 2 kernels for 6 to 8 layers of 128 or 96, 3 (two buffers in turn) for 11; each is one
// launch of the run's plan. 8 layers of 16 or 32 stay one kernel (on Hopper the wgmma one). Both
// dtypes, every activation, rows that leave a partial tile.
TEST(RunnerGpuPresets, FullyFusedDeepWideTakesSeveralKernels) {
  FUSIONSCOPE_REQUIRE_GPU();
  struct Case {
    int64_t rows;
    std::vector<int64_t> widths;
    bool bias;
    fk::DType dtype;
    fk::Activation act;
    size_t kernels;
  };
  const Case cases[] = {
      {65537, std::vector<int64_t>(7, 128), true, fk::DType::kFp16, fk::Activation::kRelu, 2},
      {4099, std::vector<int64_t>(8, 128), false, fk::DType::kBf16, fk::Activation::kGeluTanh, 2},
      {100003, std::vector<int64_t>(9, 128), true, fk::DType::kBf16, fk::Activation::kSilu, 2},
      {20001, std::vector<int64_t>(12, 128), true, fk::DType::kFp16, fk::Activation::kGeluTanh, 3},
      {3001,
       {64, 128, 128, 128, 128, 128, 128, 32},
       true,
       fk::DType::kFp16,
       fk::Activation::kRelu,
       0},  // mixed widths (mma.sync): as many kernels as fused_segments() says
      // Cut where the Hopper kernel is full (5 layers at 96), not where the mma.sync one is.
      {70001, std::vector<int64_t>(9, 96), true, fk::DType::kBf16, fk::Activation::kSilu, 2},
      // 8 layers of 16 and of 32 fit the Hopper kernel whole.
      {100003, std::vector<int64_t>(9, 16), true, fk::DType::kFp16, fk::Activation::kGeluTanh, 1},
      {50001, std::vector<int64_t>(9, 32), false, fk::DType::kBf16, fk::Activation::kRelu, 1},
  };
  const bool hopper = fk::query_device(0).cc_major == 9;
  for (const Case& k : cases) {
    const fk::MlpConfig c = make(fk::MlpKind::kMlp, k.rows, k.widths, k.bias, k.dtype, k.act);
    expect_correct(c, fk::Variant::kFullyFused);
    const fk::RunResult r = fk::run(c, fk::Variant::kFullyFused, quick());
    ASSERT_TRUE(r.ok) << r.error;
    if (k.kernels == 1) {
      EXPECT_EQ(r.plan.launches.size(), 1u) << fk::describe(c);
      if (hopper) {
        EXPECT_NE(r.kernel_path.find("wgmma"), std::string::npos) << r.kernel_path;
      }
    } else if (k.kernels > 0) {
      EXPECT_EQ(r.plan.launches.size(), k.kernels) << fk::describe(c);
      EXPECT_NE(r.kernel_path.find(std::to_string(k.kernels) + " fully fused kernels"),
                std::string::npos)
          << r.kernel_path;
    } else {
      EXPECT_GE(r.plan.launches.size(), 2u) << fk::describe(c);
    }
  }
}

// Biases added to the 16-bit pairs and activated there: every fp16 kernel (with fp16
// accumulators, so no conversion at all) and ReLU or none in bf16 but at 32 wide; with and
// without biases, in one kernel and as the segments of a longer MLP (the activation on a
// segment's last layer too). GELU and SiLU run with scale factors folded into the weights and
// biases (GELU: 1 / s on the first layer, 1 / 2 between, s / 2 on the last; SiLU halved), so
// 1, 2 and many layers each take their own factors.
TEST(RunnerGpuPresets, FullyFusedSixteenBitBiases) {
  FUSIONSCOPE_REQUIRE_GPU();
  using A = fk::Activation;
  using D = fk::DType;
  struct Case {
    int64_t rows;
    std::vector<int64_t> widths;
    bool bias;
    D dtype;
    A act;
  };
  const Case cases[] = {
      {100003, std::vector<int64_t>(6, 16), true, D::kFp16, A::kRelu},  // fp16 accumulators
      {4097, std::vector<int64_t>(4, 16), false, D::kFp16, A::kRelu},   // no biases
      {50001, std::vector<int64_t>(12, 16), true, D::kFp16, A::kRelu},  // 8 + 3 layers
      {30001, std::vector<int64_t>(4, 16), true, D::kFp16, A::kNone},   // no activation
      {100003, std::vector<int64_t>(6, 16), true, D::kBf16, A::kRelu},  // fp32 accumulators
      {65537, std::vector<int64_t>(5, 48), true, D::kFp16, A::kRelu},   // dense rows
      {65537, std::vector<int64_t>(5, 64), true, D::kBf16, A::kNone},
      {20001, std::vector<int64_t>(10, 64), true, D::kBf16, A::kRelu},   // 8 + 1 layers
      {20001, std::vector<int64_t>(6, 96), true, D::kBf16, A::kRelu},    // n96 MMAs
      {20001, std::vector<int64_t>(4, 128), true, D::kFp16, A::kNone},   // 2 warpgroups
      {30001, std::vector<int64_t>(10, 128), true, D::kFp16, A::kRelu},  // 5 + 4 layers
      {100003, std::vector<int64_t>(6, 16), true, D::kFp16, A::kGeluTanh},
      {100003, std::vector<int64_t>(6, 16), true, D::kBf16, A::kGeluTanh},  // biases preloaded
      {100003, std::vector<int64_t>(4, 16), true, D::kBf16, A::kGeluTanh},  // 3 layers: 3 stages
      {65539, std::vector<int64_t>(5, 16), false, D::kFp16, A::kSilu},      // 4 layers, a tail
      {50001, std::vector<int64_t>(12, 16), true, D::kFp16, A::kSilu},      // 8 + 3 layers
      {65537, std::vector<int64_t>(5, 48), false, D::kFp16, A::kSilu},
      {20001, std::vector<int64_t>(10, 64), true, D::kFp16, A::kGeluTanh},
      {20001, std::vector<int64_t>(4, 128), true, D::kFp16, A::kSilu},
      {50001, std::vector<int64_t>(12, 32), true, D::kFp16, A::kGeluTanh},  // 8 + 3 layers
      {65537, std::vector<int64_t>(6, 32), true, D::kFp16, A::kSilu},
      {65537, std::vector<int64_t>(3, 32), false, D::kFp16, A::kRelu},
      {65537, std::vector<int64_t>(9, 32), true, D::kBf16, A::kNone},  // 16-bit biases, 8 layers
      // bf16 GELU and SiLU with biases by wgmma and factors in the weights (kFoldMma)
      {65537, std::vector<int64_t>(6, 32), false, D::kBf16, A::kSilu},       // halved, no biases
      {300001, std::vector<int64_t>(6, 32), true, D::kBf16, A::kSilu},       // five, bias atoms
      {100003, std::vector<int64_t>(9, 96), true, D::kBf16, A::kSilu},       // 5 + 3 layers
      {100003, std::vector<int64_t>(10, 48), true, D::kBf16, A::kGeluTanh},  // 8 + 1 layers
      {30001, std::vector<int64_t>(2, 96), true, D::kBf16, A::kGeluTanh},    // one layer: no act
      {65537, std::vector<int64_t>(3, 64), true, D::kFp16, A::kGeluTanh},    // first and last
      {65537, std::vector<int64_t>(2, 64), true, D::kFp16, A::kGeluTanh},    // one layer: no act
      {20001, std::vector<int64_t>(9, 96), true, D::kFp16, A::kGeluTanh},    // 5 + 3 layers
      {20001, std::vector<int64_t>(6, 96), false, D::kFp16, A::kSilu},
      {100003, std::vector<int64_t>(6, 96), true, D::kBf16, A::kGeluTanh},  // 5 layers: the most
      // GELU cut into 5 + 4 layers at 128 wide; at 48 wide its halving folded into the weights
      {30001, std::vector<int64_t>(10, 128), true, D::kFp16, A::kGeluTanh},
      // bf16 GELU at 128 wide: the sums after the first layer fp16, started from fp16 biases
      {100003, std::vector<int64_t>(6, 128), true, D::kBf16, A::kGeluTanh},  // one stage
      {100003, std::vector<int64_t>(3, 128), true, D::kBf16, A::kGeluTanh},  // first and last
      {20001, std::vector<int64_t>(10, 128), true, D::kBf16, A::kGeluTanh},  // 5 + 4 layers
      {65537, std::vector<int64_t>(2, 128), true, D::kBf16, A::kGeluTanh},   // one layer
      {100003, std::vector<int64_t>(3, 128), true, D::kBf16, A::kSilu},      // and SiLU's
      {65537, std::vector<int64_t>(5, 48), true, D::kFp16, A::kGeluTanh},
      // 16 wide, ReLU or none: five stages a warpgroup, the output staged in the input's stage;
      // enough tiles (about 7 a warpgroup) that each warpgroup refills stages it staged output in
      {1000003, std::vector<int64_t>(6, 16), true, D::kFp16, A::kRelu},
      {1000003, std::vector<int64_t>(9, 16), true, D::kBf16, A::kNone},  // 8 layers: the most
      // bf16 GELU and SiLU (fp32 accumulators): six warpgroups at 48 wide (seven at 5 and 6
      // layers), five at 32 and in 64 wide SiLU, and four where there are few tiles
      {300001, std::vector<int64_t>(6, 48), true, D::kBf16, A::kGeluTanh},
      {65537, std::vector<int64_t>(4, 48), true, D::kBf16, A::kSilu},        // few tiles
      {300001, std::vector<int64_t>(10, 64), true, D::kBf16, A::kGeluTanh},  // 8 + 1 layers
      {300001, std::vector<int64_t>(6, 64), false, D::kBf16, A::kSilu},      // no bias MMA
      {300001, std::vector<int64_t>(6, 48), false, D::kBf16, A::kGeluTanh},  // nor here
      {65537, std::vector<int64_t>(4, 64), false, D::kBf16, A::kGeluTanh},   // few: four
      {100003, std::vector<int64_t>(10, 48), false, D::kBf16, A::kSilu},     // 8 + 1 layers
      {300001, std::vector<int64_t>(6, 64), true, D::kFp16, A::kSilu},
      {65537, std::vector<int64_t>(6, 32), true, D::kBf16, A::kGeluTanh},
      {300001, std::vector<int64_t>(6, 32), true, D::kBf16, A::kGeluTanh},  // five
      // 96 and 128 wide with GELU or SiLU: more warpgroups the fewer the layers (wide_shape)
      {100003, std::vector<int64_t>(4, 96), true, D::kFp16, A::kSilu},        // four of two
      {100003, std::vector<int64_t>(5, 96), true, D::kBf16, A::kGeluTanh},    // four of two
      {100003, std::vector<int64_t>(4, 128), true, D::kBf16, A::kSilu},       // four of two
      {100003, std::vector<int64_t>(4, 128), true, D::kBf16, A::kGeluTanh},   // four, folded
      {100003, std::vector<int64_t>(4, 128), true, D::kFp16, A::kGeluTanh},   // two of two
      {100003, std::vector<int64_t>(5, 128), true, D::kFp16, A::kGeluTanh},   // three of two
      {1000003, std::vector<int64_t>(6, 128), true, D::kBf16, A::kGeluTanh},  // four of one
      {1000003, std::vector<int64_t>(9, 128), false, D::kFp16, A::kSilu},     // 4 x 1, 2 x 2
      {300001, std::vector<int64_t>(6, 128), true, D::kBf16, A::kSilu},       // few: two of two
      {1000003, std::vector<int64_t>(6, 128), true, D::kBf16, A::kRelu},      // four of one
      {1000003, std::vector<int64_t>(5, 128), true, D::kBf16, A::kSilu},      // four of one
      // bf16 GELU and SiLU with the biases preloaded into the accumulators (kBiasPreload)
      {300001, std::vector<int64_t>(6, 128), true, D::kBf16, A::kGeluTanh},   // two of two
      {100003, std::vector<int64_t>(6, 128), false, D::kBf16, A::kGeluTanh},  // no biases
      {100003, std::vector<int64_t>(5, 128), true, D::kBf16, A::kGeluTanh},   // three of two
      {100003, std::vector<int64_t>(9, 128), true, D::kBf16, A::kSilu},       // 5 + 3 layers
      {100003, std::vector<int64_t>(9, 96), true, D::kBf16, A::kGeluTanh},    // 5 + 3 layers
      {50001, std::vector<int64_t>(12, 16), true, D::kBf16, A::kSilu},        // 8 + 3 layers
      {100003, std::vector<int64_t>(6, 32), true, D::kBf16, A::kSilu},        // few: four
  };
  const fk::DeviceInfo device = fk::query_device(0);
  const bool hopper = device.cc_major == 9;
  for (const Case& k : cases) {
    const fk::MlpConfig c = make(fk::MlpKind::kMlp, k.rows, k.widths, k.bias, k.dtype, k.act);
    SCOPED_TRACE(fk::describe(c));
    expect_correct(c, fk::Variant::kFullyFused);
    if (hopper) {
      const fk::RunResult r = fk::run(c, fk::Variant::kFullyFused, quick());
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_NE(r.kernel_path.find("wgmma"), std::string::npos) << r.kernel_path;
      const char* acc = k.dtype == D::kFp16 ? "fp16 accumulators" : "fp32 accumulators";
      EXPECT_NE(r.kernel_path.find(acc), std::string::npos) << r.kernel_path;
      // The first kernel's warpgroups and stages, which the plan names: six of two where GELU or
      // SiLU bound the kernel (16 and 64 wide, 48 and 32 wide in bf16; at 32 to 64 wide
      // only with two rounds of tiles for six; five at 32 wide bf16 and 64 wide bf16 SiLU, seven
      // at 48 wide bf16 of 5 or 6 layers; of three at 16 wide up to 4 layers); at 96 and 128 wide
      // more the fewer the layers (wide_shape); three of two at 96 wide, two of two at 128, four of
      // five at 16 wide with ReLU or none, four of three otherwise.
      const int64_t w = k.widths[0];
      const int layers = std::min(static_cast<int>(k.widths.size()) - 1, w > 64 ? 5 : 8);
      const bool heavy = k.act == A::kGeluTanh || k.act == A::kSilu;
      const int64_t tiles = (k.rows / (w < 48 ? 64 / w : 1) + 63) / 64;  // 64-row tiles
      const bool many = tiles >= 2 * 6 * int64_t{device.sm_count};
      const bool six = heavy && (w == 16 || (many && (w == 64 || (w == 48 && k.dtype == D::kBf16) ||
                                                      (w == 32 && k.dtype == D::kBf16))));
      int warpgroups =
          w == 96  ? 3
          : w > 64 ? 2
          : six    ? ((w == 32 || (w == 64 && k.act == A::kSilu)) && k.dtype == D::kBf16 ? 5 : 6)
                   : 4;
      int stages = w > 64 ? 2 : six ? (w == 16 && layers <= 4 ? 3 : 2) : w == 16 && !heavy ? 5 : 3;
      if (six && w == 48 && k.dtype == D::kBf16 && (layers == 5 || layers == 6)) warpgroups = 7;
      if (heavy && w == 96 && (layers == 3 || layers == 4)) warpgroups = 4;
      if (w == 128) {
        const bool bf16 = heavy && k.dtype == D::kBf16;  // an fp32 epilogue
        if (layers == 4 && heavy) warpgroups = 3;
        if (layers == 3 && bf16) warpgroups = 4;
        if (tiles >= 16 * 4 * int64_t{device.sm_count} && (layers == 5 || (layers == 4 && bf16)))
          warpgroups = 4, stages = 1;
      }
      const std::string shape = std::to_string(warpgroups) + " warpgroups of " +
                                std::to_string(stages) + (stages == 1 ? " stage x" : " stages x");
      EXPECT_NE(r.kernel_path.find(shape), std::string::npos) << shape << ": " << r.kernel_path;
      // bf16 GELU (but 128 wide in four warpgroups of two stages, whose fp32 fma folds the
      // factors) and bf16 SiLU at 16 and 96 wide, and at 128 with the same exception, have fp16
      // hidden layers and take some pairs by polynomial, as fp16 GELU and SiLU do but 32 wide SiLU;
      // the plan says
      const bool hidden = k.widths.size() > 2;
      const bool half_hidden =
          hidden && k.dtype == D::kBf16 &&
          ((k.act == A::kGeluTanh && !(w == 128 && warpgroups == 4 && stages == 2)) ||
           (k.act == A::kSilu &&
            (w == 16 || w == 96 || (w == 128 && !(warpgroups == 4 && stages == 2)))));
      EXPECT_EQ(r.kernel_path.find("hidden activations and weights in fp16") != std::string::npos,
                half_hidden)
          << r.kernel_path;
      // and from 32 to 96 wide, where a wgmma adds the biases (at 96 wide GELU in three
      // warpgroups the fp16 sums start from them instead), and at 128 wide, where they start from
      // them, accumulate in fp16 after layer 0
      const bool half_acc = half_hidden && (w >= 96 || (k.act == A::kGeluTanh && w >= 32));
      EXPECT_EQ(r.kernel_path.find("fp16 accumulators after the first layer") != std::string::npos,
                half_acc)
          << r.kernel_path;
      // and at 16 wide GELU, in the hidden layers (the last one's in fp32)
      const bool hidden_acc = half_hidden && k.act == A::kGeluTanh && w == 16;
      EXPECT_EQ(r.kernel_path.find("fp16 accumulators in the hidden layers") != std::string::npos,
                hidden_acc)
          << r.kernel_path;
      const bool poly =
          hidden && heavy && (k.dtype == D::kFp16 ? !(k.act == A::kSilu && w == 32) : half_hidden);
      EXPECT_EQ(r.kernel_path.find("by polynomial") != std::string::npos, poly) << r.kernel_path;
    }
  }
}

TEST(RunnerGpuPresets, GegluHopperAndAmperePathsAgree) {
  FUSIONSCOPE_REQUIRE_GPU();
  const fk::DeviceInfo d = fk::query_device(0);
  fk::RunOptions o = quick();
  o.gated_path = fk::GatedGemmPath::kAmpereMmaSync;
  expect_correct(preset("geglu-post"), fk::Variant::kGatedGemm, o);
  if (d.cc_major == 9) {
    o.gated_path = fk::GatedGemmPath::kHopperWgmma;
    expect_correct(preset("geglu-post"), fk::Variant::kGatedGemm, o);
  }
}

// A run writes down what its set-up chose by timing; a run pinned to those choices runs the same
// kernels without timing, correct; pins that cannot apply are refused with the reason.
TEST(RunnerGpuPresets, PinnedKernelsRunAsChosen) {
  FUSIONSCOPE_REQUIRE_GPU();
  const fk::DeviceInfo d = fk::query_device(0);
  const fk::MlpConfig c = preset("geglu-post");
  if (d.cc_major != 9) {
    fk::RunOptions o = quick();
    o.pin_kernels = "gated=coop:2:16";
    const fk::RunResult r = fk::run(c, fk::Variant::kGatedGemm, o);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("kernel pin"), std::string::npos) << r.error;
    return;
  }
  const fk::RunResult chosen = fk::run(c, fk::Variant::kGatedGemm, quick());
  ASSERT_TRUE(chosen.ok) << chosen.error;
  EXPECT_NE(chosen.kernel_choices.find("gated="), std::string::npos) << chosen.kernel_choices;
  EXPECT_NE(chosen.kernel_choices.find("down="), std::string::npos) << chosen.kernel_choices;
  // Pinned to a configuration set-up did not necessarily choose, and to ours for the down GEMM.
  for (const std::string& pin : {chosen.kernel_choices, std::string("gated=pp:1:16 down=coop:1:16"),
                                 std::string("gated=coop:2x2:8:n:nn:0 down=cublaslt")}) {
    fk::RunOptions o = quick();
    o.pin_kernels = pin;
    const fk::RunResult r = fk::run(c, fk::Variant::kGatedGemm, o);
    ASSERT_TRUE(r.ok) << pin << ": " << r.error;
    EXPECT_EQ(r.kernel_choices, pin);
    EXPECT_NE(r.kernel_path.find("(pinned)"), std::string::npos) << r.kernel_path;
    EXPECT_TRUE(r.correctness.passed) << pin << ": rel error " << r.correctness.rel_error;
  }
  fk::RunOptions o = quick();
  o.pin_kernels = "gated=coop:2:16";
  const fk::RunResult eager = fk::run(c, fk::Variant::kEager, o);
  EXPECT_FALSE(eager.ok);
  EXPECT_NE(eager.error.find("only the gated-gemm variant"), std::string::npos) << eager.error;
  o.gated_path = fk::GatedGemmPath::kAmpereMmaSync;
  const fk::RunResult ampere = fk::run(c, fk::Variant::kGatedGemm, o);
  EXPECT_FALSE(ampere.ok);
  EXPECT_NE(ampere.error.find("does not run here"), std::string::npos) << ampere.error;
  o = quick();
  o.pin_kernels = "gated=coop:9:16";
  const fk::RunResult bad = fk::run(c, fk::Variant::kGatedGemm, o);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.error.find("cluster along M"), std::string::npos) << bad.error;
}

// Samples of several back-to-back passes between two events: one figure per sample (the last
// one takes what is left), each its sample's mean pass; a sample cut short by a cancel is not
// counted.
TEST(RunnerGpu, SamplesOfPasses) {
  FUSIONSCOPE_REQUIRE_GPU();
  fk::RunOptions o;
  o.warmup_iterations = 2;
  o.timed_iterations = 25;
  o.passes_per_sample = 10;
  o.check = false;
  const auto r = fk::run(preset("linear-post"), fk::Variant::kEager, o);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.iteration_ms.size(), 3u);
  for (double ms : r.iteration_ms) EXPECT_GT(ms, 0);
  // The whole timed loop, host included, took at least the 25 passes the samples average.
  EXPECT_LE(r.iteration_ms[0] * 10 + r.iteration_ms[1] * 10 + r.iteration_ms[2] * 5,
            r.wall_ms * 1.01);

  std::atomic<bool> cancel{false};
  o.cancel = &cancel;
  o.on_progress = [&](const fk::RunProgress& p) {
    if (p.phase == fk::RunProgress::Phase::kTimed && p.iteration == 14) cancel = true;
  };
  const auto cut = fk::run(preset("linear-post"), fk::Variant::kEager, o);
  EXPECT_TRUE(cut.cancelled);
  EXPECT_EQ(cut.iteration_ms.size(), 1u);  // passes 0-9; 10-14 never closed their sample
}

TEST(RunnerGpu, ProgressAndCancel) {
  FUSIONSCOPE_REQUIRE_GPU();
  std::atomic<bool> cancel{false};
  std::set<fk::RunProgress::Phase> phases;
  fk::RunOptions o;
  o.warmup_iterations = 2;
  o.timed_iterations = 50;
  o.cancel = &cancel;
  o.on_progress = [&](const fk::RunProgress& p) {
    phases.insert(p.phase);
    if (p.phase == fk::RunProgress::Phase::kTimed && p.iteration == 4) cancel = true;
  };
  const auto r = fk::run(preset("linear-post"), fk::Variant::kEager, o);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.cancelled);
  EXPECT_NE(r.error.find("cancelled"), std::string::npos);
  EXPECT_EQ(r.iteration_ms.size(), 5u);
  EXPECT_TRUE(phases.count(fk::RunProgress::Phase::kWarmup));
  EXPECT_TRUE(phases.count(fk::RunProgress::Phase::kTimed));

  cancel = false;
  phases.clear();
  o.on_progress = [&](const fk::RunProgress& p) { phases.insert(p.phase); };
  o.timed_iterations = 5;
  const auto full = fk::run(preset("linear-post"), fk::Variant::kEager, o);
  ASSERT_TRUE(full.ok) << full.error;
  EXPECT_TRUE(phases.count(fk::RunProgress::Phase::kCheck));
  EXPECT_TRUE(phases.count(fk::RunProgress::Phase::kDone));
  EXPECT_GT(full.wall_ms, 0);
  EXPECT_GT(full.input_sets, 1) << "a 192 KiB working set should rotate through copies";
}

TEST(RunnerGpu, ErrorsAreReportedNotThrown) {
  FUSIONSCOPE_REQUIRE_GPU();
  auto bad = preset("geglu-post");
  bad.rows = 0;
  auto r = fk::run(bad, fk::Variant::kEager);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("rows must be positive"), std::string::npos) << r.error;

  r = fk::run(preset("geglu-post"), fk::Variant::kFullyFused);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("not gated"), std::string::npos) << r.error;

  auto huge = preset("geglu-large");
  huge.rows = int64_t{1} << 30;  // terabytes of activations
  r = fk::run(huge, fk::Variant::kEager);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("are free"), std::string::npos) << r.error;

  // The process is still healthy afterwards.
  r = fk::run(preset("linear-post"), fk::Variant::kEpilogue, quick());
  EXPECT_TRUE(r.ok) << r.error;
}

}  // namespace
