// The terminal report on a session built with the store API: no GPU needed.
#include <sstream>

#include <gtest/gtest.h>

#include "fixture_json.h"
#include "fusionscope/analysis/format.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/lab/session_report.h"
#include "fusionscope/storage/run_writer.h"
#include "test_paths.h"

namespace fusionscope::lab {
namespace {

using storage::ApiCallRecord;
using storage::KernelRecord;
using storage::RangeKind;
using storage::RangeRecord;

// A run of 1 warm-up + 2 timed iterations; each iteration launches gemm (10 us) and gelu (4 us),
// plus one setup kernel before the iterations.
int64_t add_geglu_like_run(storage::SessionStore& store) {
  storage::RunInfo info;
  info.name = "geglu-post / eager";
  info.kind = "gated";
  info.variant = "eager";
  info.dtype = "bf16";
  info.warmup = 1;
  info.iterations = 2;
  info.wall_ns = 60000;
  info.status = storage::RunStatus::kOk;
  storage::RunWriter run(store, info);
  const int64_t id = run.id();
  const auto gemm = store.intern("_Z11gemm_kernelIfLi128EEvPKfPfi");
  const auto gelu = store.intern("gelu_tanh_kernel");
  const auto setup = store.intern("_Z11init_randomPfm");
  const auto launch = store.intern("cudaLaunchKernel");
  std::vector<KernelRecord> kernels;
  std::vector<ApiCallRecord> api;
  std::vector<RangeRecord> ranges;
  uint32_t corr = 1;
  auto add = [&](int64_t cpu_t, int64_t gpu_t, int64_t dur, storage::StringId name) {
    api.push_back({cpu_t, cpu_t + 2000, 9, corr, launch, storage::ApiDomain::kRuntime});
    KernelRecord k;
    k.start_ns = gpu_t;
    k.end_ns = gpu_t + dur;
    k.correlation_id = corr++;
    k.name = name;
    kernels.push_back(k);
  };
  add(100, 5000, 3000, setup);
  for (int i = 0; i < 3; ++i) {
    const int64_t t = 100000 * (i + 1);
    ranges.push_back(
        {t, t + 50000, 9, store.intern("iteration " + std::to_string(i)), RangeKind::kNvtx, 0});
    add(t + 1000, t + 10000, 10000, gemm);
    add(t + 4000, t + 21000, 4000, gelu);
  }
  run.add_kernels(kernels);
  run.add_api_calls(api);
  run.add_ranges(ranges);
  run.commit();
  return id;
}

TEST(SessionReport, SummarizesKernelsLaunchesAndTimedIterations) {
  auto store = storage::SessionStore::create(testing::scratch_dir() / "r.fsdb", {});
  const int64_t id = add_geglu_like_run(store);
  const RunSummary s = summarize(store.load_run(id));
  EXPECT_EQ(s.kernels, 7u);
  EXPECT_EQ(s.launches, 7u);
  EXPECT_EQ(s.gpu_ns, 3000 + 3 * 14000);
  EXPECT_EQ(s.timed_kernels, 4u);  // iterations 1 and 2 only
  EXPECT_EQ(s.timed_gpu_ns, 2 * 14000);
  ASSERT_TRUE(s.top_is_timed);
  ASSERT_EQ(s.top.size(), 2u);
  EXPECT_EQ(s.top[0].name, "gemm_kernel");
  EXPECT_EQ(s.top[0].calls, 2u);
  EXPECT_EQ(s.top[0].total_ns, 20000);
  EXPECT_EQ(s.top[1].name, "gelu_tanh_kernel");
}

TEST(SessionReport, PrintsATablePerSession) {
  storage::SessionInfo session;
  session.name = "bench";
  session.gpu_name = "NVIDIA H100 80GB HBM3";
  session.cc_major = 9;
  session.sm_count = 132;
  session.mem_bandwidth_gbs = 3352;
  auto store = storage::SessionStore::create(testing::scratch_dir() / "r.fsdb", session);
  add_geglu_like_run(store);
  storage::RunInfo failed;
  failed.name = "geglu-post / gated-gemm";
  failed.status = storage::RunStatus::kFailed;
  failed.error = "out of device memory";
  failed.trace_status =
      "CUPTI dropped 12 records (no activity buffer was free); the trace is incomplete";
  failed.dropped_records = 12;
  storage::RunWriter(store, failed).commit();

  std::ostringstream out;
  write_report(store, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("NVIDIA H100 80GB HBM3, cc 9.0, 132 SMs, 3352 GB/s"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Runs     2"), std::string::npos) << text;
  EXPECT_NE(text.find("geglu-post / eager"), std::string::npos);
  EXPECT_NE(text.find("45.0 us"), std::string::npos) << text;  // GPU time of the run
  EXPECT_NE(text.find("14.0 us"), std::string::npos) << text;  // GPU per timed iteration
  EXPECT_NE(text.find("30.0 us"), std::string::npos) << text;  // wall per timed iteration
  EXPECT_NE(text.find("gemm_kernel"), std::string::npos);
  EXPECT_NE(text.find("71.4%"), std::string::npos) << text;  // gemm share of timed GPU time
  EXPECT_NE(text.find("12 dropped"), std::string::npos) << text;
  EXPECT_NE(text.find("error: out of device memory"), std::string::npos);
  EXPECT_NE(text.find("no kernels recorded"), std::string::npos);
}

TEST(SessionReport, EmptySession) {
  auto store = storage::SessionStore::create(testing::scratch_dir() / "r.fsdb", {});
  std::ostringstream out;
  write_report(store, out);
  EXPECT_NE(out.str().find("Runs     0"), std::string::npos) << out.str();
}

TEST(SessionReport, ShortKernelNames) {
  EXPECT_EQ(short_kernel_name("_Z11gemm_kernelIfLi128EEvPKfPfi"), "gemm_kernel");
  EXPECT_EQ(short_kernel_name("void ns::act<float>(float*, int)"), "ns::act");
  EXPECT_EQ(
      short_kernel_name("_ZN11fusionscope7kernels6detail12_GLOBAL__N_111gelu_kernelIfEEvPKT_PS3_l"),
      "fusionscope::kernels::detail::gelu_kernel");
  EXPECT_EQ(short_kernel_name("nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NNT"),
            "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NNT");
}

TEST(SessionReport, KernelsSharingAShortNameStaySeparateRowsWithDistinctNames) {
  // PyTorch's gelu and mul, as its profiler names them: both vectorized_elementwise_kernel.
  const std::string gelu =
      "void at::native::vectorized_elementwise_kernel<4, "
      "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::"
      "{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >"
      "(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::"
      "{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)";
  const std::string mul =
      "void at::native::vectorized_elementwise_kernel<4, "
      "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
      "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, "
      "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
      "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)";
  const auto names = distinct_kernel_names({gelu, mul, "_Z11gemm_kernelIfLi128EEvPKfPfi"});
  ASSERT_EQ(names.size(), 3u);
  EXPECT_NE(names[0], names[1]);
  EXPECT_EQ(names[0].rfind("at::native::vectorized_elementwise_kernel<...GeluCUDAKernelImpl", 0),
            0u)
      << names[0];
  EXPECT_EQ(names[1].rfind("at::native::vectorized_elementwise_kernel<...BinaryFunctor", 0), 0u)
      << names[1];
  EXPECT_EQ(names[2], "gemm_kernel");  // alone with its short name: unchanged
}

TEST(SessionReport, ImportedRunShowsGpuPerIterationItsDateAndNoUnknownBandwidth) {
  const auto path = testing::scratch_dir() / "imported.fsdb";
  const auto trace = interchange::read_torch_trace(testing::fixture_path(testing::kGegluEager));
  storage::SessionInfo info = trace.session;
  info.name = "imported";
  auto store = storage::SessionStore::create(path, info);
  interchange::write_torch_trace(store, trace);
  std::ostringstream out;
  write_report(store, out);
  const std::string text = out.str();
  EXPECT_EQ(text.find("0 GB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("NVIDIA H100 80GB HBM3, cc 9.0, 132 SMs\n"), std::string::npos) << text;
  // The trace's own date (its baseTimeNanoseconds), not the import's.
  EXPECT_NE(text.find("Captured 2026-10-01T"), std::string::npos) << text;
  EXPECT_NE(text.find("captured: 2026-10-01T"), std::string::npos) << text;
  // GPU time per profiler step: 3 steps, every kernel inside one.
  const RunSummary s = summarize(store.load_run(store.runs()[0].id));
  EXPECT_EQ(s.timed_kernels, 15u);
  EXPECT_NE(text.find("0+3"), std::string::npos) << text;
  const double per_step = static_cast<double>(s.timed_gpu_ns / 3);
  const std::string shown = analysis::format_duration(per_step, per_step < 1e6 ? 1 : 2);
  EXPECT_NE(text.find(shown), std::string::npos) << shown << "\n" << text;
  // gelu and mul are separate rows.
  EXPECT_NE(text.find("vectorized_elementwise_kernel<...Gelu"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorized_elementwise_kernel<...Binary"), std::string::npos) << text;
}

}  // namespace
}  // namespace fusionscope::lab
