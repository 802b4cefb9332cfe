#include "sample_session.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "fusionscope/kernels/config.h"
#include "run_builder.h"

namespace fusionscope::sample {

namespace {

using storage::ApiDomain;
using storage::MemopKind;

constexpr uint32_t kThread = 48'213;  // the capturing thread's id, as a capture records it
constexpr uint32_t kStream = 7;

// The kernels the sample's variants launch. GEMM names are cuBLAS's on an H100 (from the
// reference PyTorch traces); the element-wise ones are mangled as our own kernels compile.
constexpr const char* kGemmGateUp = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT";
constexpr const char* kGemmDown = "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT";
constexpr const char* kGemmLinearBias = "nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN";
constexpr const char* kGelu = "_ZN11fusionscope7kernels9gelu_tanhI13__nv_bfloat16EEvPKT_PS3_l";
constexpr const char* kMul = "_ZN11fusionscope7kernels8multiplyI13__nv_bfloat16EEvPKT_S5_PS3_l";
constexpr const char* kGeluMul =
    "_ZN11fusionscope7kernels13gelu_tanh_mulI13__nv_bfloat16EEvPKT_S5_PS3_l";

struct Launch {
  const char* op;
  const char* kernel;
  double us;    // kernel time from the reference figures
  bool cublas;  // launched through the driver API, as cuBLAS does
  storage::Dim3 grid, block;
  uint32_t registers = 0, static_smem = 0, dynamic_smem = 0;
  double read_mb = 0, write_mb = 0;  // DRAM traffic from the reference figures; 0 = not given
};

// A small deterministic generator for timing jitter (no global state, same output everywhere).
class Jitter {
 public:
  explicit Jitter(uint64_t seed) : state_(seed) {}
  // A factor in [1 - spread, 1 + spread].
  double factor(double spread) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(state_ >> 11) / static_cast<double>(1ULL << 53);
    return 1.0 + spread * (2.0 * u - 1.0);
  }

 private:
  uint64_t state_;
};

// Lays out one run the way the lab drives it: upload inputs, `warmup` then `iterations` forward
// passes (each an NVTX range with one range per op), then a synchronize. The CPU issues launches
// ahead of the GPU; each kernel starts when its stream is free and its launch has arrived.
storage::RunData simulate(storage::RunInfo info, const std::vector<Launch>& plan, int64_t t0,
                          uint64_t input_bytes, uint64_t seed) {
  RunBuilder b(info);
  Jitter jitter(seed);
  int64_t cpu = t0;
  int64_t gpu_free = t0;
  uint32_t correlation = 1000 + static_cast<uint32_t>(seed % 97) * 100;
  auto ns = [](double us) { return static_cast<int64_t>(us * 1000.0); };

  // Input upload (pageable host memory: the call returns when the copy is done).
  {
    const int64_t api_start = cpu;
    const int64_t copy_start = api_start + ns(6.0 * jitter.factor(0.2));
    const int64_t copy_end =
        copy_start + ns(static_cast<double>(input_bytes) / 24.0e3);  // ~24 GB/s
    b.range(api_start - ns(1.0), copy_end + ns(4.0), "upload inputs", kThread);
    b.api_call(api_start, copy_end + ns(2.5), "cudaMemcpy", kThread, ++correlation);
    b.memop(copy_start, copy_end, MemopKind::kMemcpy, input_bytes, kStream, correlation).copy_kind =
        storage::CopyKind::kHtoD;
    cpu = copy_end + ns(12.0);
    gpu_free = copy_end;
  }

  int64_t timed_start = 0;
  const int passes = info.warmup + info.iterations;
  for (int pass = 0; pass < passes; ++pass) {
    const bool warm = pass < info.warmup;
    if (pass == info.warmup) {
      // The runner waits for the warm-up to drain before it starts the clock.
      const int64_t sync_end = std::max(cpu + ns(2.0), gpu_free + ns(3.5));
      b.api_call(cpu, sync_end, "cudaDeviceSynchronize", kThread, ++correlation);
      cpu = sync_end + ns(1.0);
      timed_start = cpu;
    }
    const int64_t pass_start = cpu;
    cpu += ns(0.6);  // NVTX push
    for (const Launch& l : plan) {
      const int64_t op_start = cpu;
      cpu += ns(0.5);
      const double call_us = (l.cublas ? 5.2 : 3.6) * jitter.factor(0.25);
      const int64_t api_start = cpu;
      const int64_t api_end = api_start + ns(call_us);
      ++correlation;
      b.api_call(api_start, api_end, l.cublas ? "cuLaunchKernelEx" : "cudaLaunchKernel", kThread,
                 correlation)
          .domain = l.cublas ? ApiDomain::kDriver : ApiDomain::kRuntime;
      // The first passes run cold (caches, clocks); later ones settle within about 1.5 %.
      const double cold = pass == 0 ? 1.12 : (pass == 1 ? 1.04 : 1.0);
      const int64_t arrival = api_start + ns(2.8 * jitter.factor(0.2));
      const int64_t k_start = std::max(gpu_free + ns(1.1 * jitter.factor(0.3)), arrival);
      const int64_t k_end = k_start + ns(l.us * cold * jitter.factor(warm ? 0.04 : 0.015));
      storage::KernelRecord& k = b.kernel(k_start, k_end, l.kernel, l.op, kStream, correlation);
      k.grid = l.grid;
      k.block = l.block;
      k.registers = l.registers;
      k.static_smem = l.static_smem;
      k.dynamic_smem = l.dynamic_smem;
      gpu_free = k_end;
      if (l.read_mb > 0) {
        b.metric(correlation, "dram__bytes_read.sum", "byte",
                 l.read_mb * 1e6 * jitter.factor(0.005));
        b.metric(correlation, "dram__bytes_write.sum", "byte",
                 l.write_mb * 1e6 * jitter.factor(0.005));
      }
      b.metric(correlation, "gpu__time_duration.sum", "ns", static_cast<double>(k_end - k_start));
      cpu = api_end + ns(0.4);
      b.range(op_start, cpu, l.op, kThread);
      cpu += ns(0.8 * jitter.factor(0.3));
    }
    cpu += ns(0.6);  // NVTX pop
    // The runner's convention: "iteration N", N counting over warm-up and timed passes together.
    b.range(pass_start, cpu, "iteration " + std::to_string(pass), kThread);
    cpu += ns(1.5 * jitter.factor(0.3));
  }
  // Wait for the GPU to drain.
  const int64_t sync_start = cpu;
  const int64_t sync_end = std::max(cpu + ns(2.0), gpu_free + ns(3.5));
  b.api_call(sync_start, sync_end, "cudaDeviceSynchronize", kThread, ++correlation);
  storage::RunData run = b.finish();
  run.info.wall_ns = sync_end - timed_start;
  return run;
}

// A run of a preset in one variant, described as the lab describes it.
storage::RunInfo run_info(const std::string& preset, kernels::Variant variant, int warmup,
                          int iterations) {
  const std::optional<kernels::MlpConfig> config = kernels::find_preset(preset);
  storage::RunInfo r;
  r.name = preset + " / " + std::string(kernels::to_string(variant));
  if (config) {
    r.config_json = kernels::to_json(*config);
    r.kind = std::string(kernels::to_string(config->kind));
    r.dtype = std::string(kernels::to_string(config->dtype));
  }
  r.variant = std::string(kernels::to_string(variant));
  r.warmup = warmup;
  r.iterations = iterations;
  r.status = storage::RunStatus::kOk;
  r.created_utc = "2025-01-01T00:00:00Z";
  return r;
}

// GeGLU 8192 x 768 -> 3072 -> 768: the cuBLAS GEMM launches as in the reference traces.
Launch gemm(const char* op, const char* name, double us, double read_mb, double write_mb,
            bool down) {
  Launch l{op, name, us, true, {2, 66, 1}, {384, 1, 1}};
  if (down) l.grid = {2, 48, 1};
  l.registers = 168;
  l.dynamic_smem = down ? 197'632 : 213'188;
  l.read_mb = read_mb;
  l.write_mb = write_mb;
  return l;
}

Launch elementwise(const char* op, const char* name, double us, double read_mb, double write_mb) {
  Launch l{op, name, us, false, {24'576, 1, 1}, {128, 1, 1}};
  l.registers = 32;
  l.read_mb = read_mb;
  l.write_mb = write_mb;
  return l;
}

}  // namespace

SampleSession make_sample_session() {
  SampleSession s;
  s.info.name = "Sample session";
  s.info.created_utc = "2025-01-01T00:00:00Z";
  s.info.host = "sample";
  s.info.gpu_name = "NVIDIA H100 80GB HBM3";
  s.info.cc_major = 9;
  s.info.cc_minor = 0;
  s.info.sm_count = 132;
  s.info.mem_bandwidth_gbs = 3352.0;
  s.info.peak_fp32_tflops = 66.9;
  s.info.peak_tensor_tflops = 989.4;
  s.info.notes =
      "Synthetic sample made by make_sample_session: kernel times and DRAM traffic follow the "
      "reference figures measured on an H100 (PyTorch eager and torch.compile); launch timing is "
      "modelled. Not a capture.";

  const int64_t base = 4'489'001'000'000'000;  // CUPTI-like timestamps
  const int64_t gap = 50'000'000;              // runs follow each other 50 ms apart

  using kernels::Variant;
  {  // Biased Linear, 1024 x 32 -> 64: one cuBLAS GEMM with the bias in its epilogue, as PyTorch.
    Launch linear{"linear", kGemmLinearBias, 2.56, true, {2, 64, 1}, {384, 1, 1}};
    linear.registers = 168;
    linear.dynamic_smem = 164'308;
    s.runs.push_back(simulate(run_info("linear-post", Variant::kEager, 3, 50), {linear}, base,
                              1024ULL * 32 * 2, 11));
  }
  {  // GeGLU: eager (five kernels) and the gelu*mul pointwise fusion (four), as torch.compile.
    const uint64_t x_bytes = 8192ULL * 768 * 2;
    const std::vector<Launch> eager = {
        gemm("gate", kGemmGateUp, 61.3, 25.8, 33.2, false),
        elementwise("gelu-tanh", kGelu, 34.9, 50.3, 29.7),
        gemm("up", kGemmGateUp, 62.4, 25.9, 31.3, false),
        elementwise("mul", kMul, 50.1, 100.7, 30.1),
        gemm("down", kGemmDown, 55.1, 59.9, 5.4, true),
    };
    const std::vector<Launch> fused = {
        gemm("gate", kGemmGateUp, 61.3, 25.9, 33.2, false),
        gemm("up", kGemmGateUp, 62.4, 25.8, 31.1, false),
        elementwise("gelu-tanh*mul", kGeluMul, 63.7, 100.7, 32.5),
        gemm("down", kGemmDown, 55.1, 59.7, 5.3, true),
    };
    s.runs.push_back(
        simulate(run_info("geglu-post", Variant::kEager, 3, 20), eager, base + gap, x_bytes, 21));
    s.runs.push_back(simulate(run_info("geglu-post", Variant::kPointwiseFused, 3, 20), fused,
                              base + 2 * gap, x_bytes, 22));
  }
  {  // A variant that does not apply: recorded as failed, with the library's reason, no trace.
    storage::RunInfo failed = run_info("geglu-post", Variant::kFullyFused, 3, 20);
    std::string why = "does not apply";
    if (const auto config = kernels::find_preset("geglu-post"))
      kernels::supports(*config, Variant::kFullyFused, &why);
    failed.status = storage::RunStatus::kFailed;
    failed.error = why;
    failed.trace_status = "not traced: the run did not start";
    storage::RunData empty;
    empty.info = failed;
    empty.strings.push_back("");
    s.runs.push_back(std::move(empty));
  }
  return s;
}

}  // namespace fusionscope::sample
