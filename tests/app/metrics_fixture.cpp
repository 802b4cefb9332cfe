#include "metrics_fixture.h"

#include <string>
#include <vector>

#include "fusionscope/analysis/metrics_status.h"
#include "fusionscope/kernels/config.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "sample/run_builder.h"

namespace fusionscope::testing {

namespace {

constexpr uint32_t kThread = 401;

struct Kernel {
  const char* op;
  const char* name;
  int64_t ns;
  double read, write, flops;
};

storage::RunData geglu(const std::string& variant, const std::vector<Kernel>& kernels,
                       bool counters) {
  storage::RunInfo info;
  info.name = "geglu-post / " + variant;
  info.config_json = kernels::to_json(*kernels::find_preset("geglu-post"));
  info.kind = "gated";
  info.variant = variant;
  info.dtype = "bf16";
  info.warmup = 1;
  info.iterations = 2;
  info.status = storage::RunStatus::kOk;
  sample::RunBuilder b(info);
  int64_t t = 1'000'000;
  uint32_t corr = 10;
  for (int it = 0; it < 3; ++it) {
    const int64_t start = t;
    for (const Kernel& k : kernels) {
      ++corr;
      b.api_call(t, t + 3'000, "cudaLaunchKernel", kThread, corr);
      const int64_t k0 = t + 5'000, k1 = k0 + k.ns;
      b.kernel(k0, k1, k.name, k.op, 7, corr);
      if (counters && it == 1) {
        b.metric(corr, "dram__bytes_read.sum", "byte", k.read);
        b.metric(corr, "dram__bytes_write.sum", "byte", k.write);
        b.metric(corr, "fusionscope/flops", "flop", k.flops);
        b.metric(corr, "gpu__time_duration.sum", "nanosecond", static_cast<double>(k.ns));
      }
      // PM samples every 10 us over the kernel: its bandwidth, SM and tensor activity.
      if (counters) {
        for (int64_t s = k0; s < k1; s += 10'000) {
          const double bw = (k.read + k.write) / (static_cast<double>(k.ns) * 1e-9);
          b.sample(s, "dram__bytes_read.sum.per_second", bw * k.read / (k.read + k.write));
          b.sample(s, "dram__bytes_write.sum.per_second", bw * k.write / (k.read + k.write));
          b.sample(s, "fusionscope/dram_bandwidth", bw);
          b.sample(s, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", 95.0);
          b.sample(s, "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
                   k.flops > 1e9 ? 80.0 : 0.0);
        }
      }
      t = k1;
    }
    b.range(start, t, "iteration " + std::to_string(it), kThread);
    t += 20'000;
  }
  return b.finish();
}

void store_run(storage::SessionStore& store, const storage::RunData& run) {
  storage::RunInfo info = run.info;
  storage::RunWriter writer(store, info);
  const int64_t id = writer.id();
  auto sid = [&](storage::StringId s) { return store.intern(run.str(s)); };
  std::vector<storage::KernelRecord> kernels = run.kernels;
  for (auto& k : kernels) k.name = sid(k.name), k.op = sid(k.op);
  std::vector<storage::ApiCallRecord> calls = run.api_calls;
  for (auto& a : calls) a.name = sid(a.name);
  std::vector<storage::RangeRecord> ranges = run.ranges;
  for (auto& r : ranges) r.name = sid(r.name);
  std::vector<storage::KernelMetricRecord> metrics = run.kernel_metrics;
  for (auto& m : metrics) m.name = sid(m.name), m.unit = sid(m.unit);
  std::vector<storage::SampleRecord> samples = run.samples;
  for (auto& s : samples) s.metric = sid(s.metric);
  writer.add_kernels(kernels);
  writer.add_api_calls(calls);
  writer.add_ranges(ranges);
  writer.add_kernel_metrics(metrics);
  writer.add_samples(samples);
  writer.commit();
  if (!metrics.empty())
    store.set_property(analysis::kernel_counters_property(id), "ok: counters of iteration 1");
  else
    store.set_property(analysis::kernel_counters_property(id),
                       "counters: not permitted: the driver restricts GPU performance counters "
                       "to administrators");
}

}  // namespace

void write_metrics_session(const std::filesystem::path& path) {
  storage::SessionInfo info;
  info.name = "metrics views";
  info.gpu_name = "NVIDIA H100 80GB HBM3";
  info.mem_bandwidth_gbs = 3352;
  info.peak_fp32_tflops = 66.9;
  info.peak_tensor_tflops = 1070;
  info.calibrated_bandwidth_gbs = 2818;
  info.calibrated_tensor_tflops = 808;
  auto store = storage::SessionStore::create(path, info);
  store_run(store, geglu("eager",
                         {{"gate", "gemm_gate", 57'000, 25.9e6, 52.0e6, 3.87e10},
                          {"gelu-tanh", "activation_kernel", 33'000, 50.3e6, 48.1e6, 2.0e8},
                          {"up", "gemm_up", 57'000, 25.8e6, 51.4e6, 3.87e10},
                          {"mul", "multiply_kernel", 50'000, 100.7e6, 51.4e6, 2.5e7},
                          {"down", "gemm_down", 51'000, 60.0e6, 26.4e6, 3.87e10}},
                         true));
  store_run(
      store,
      geglu("gated-gemm",
            {{"gate_up+gelu-tanh*mul", "gated_gemm_sm90_kernel", 128'000, 25.8e6, 55.2e6, 7.76e10},
             {"down", "gemm_down", 51'000, 59.7e6, 25.6e6, 3.87e10}},
            true));
  store_run(store, geglu("pointwise-fused",
                         {{"gate", "gemm_gate", 57'000, 0, 0, 0},
                          {"up", "gemm_up", 57'000, 0, 0, 0},
                          {"gelu-tanh*mul", "activation_multiply_kernel", 50'000, 0, 0, 0},
                          {"down", "gemm_down", 51'000, 0, 0, 0}},
                         false));
}

}  // namespace fusionscope::testing
