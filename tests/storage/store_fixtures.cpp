#include "store_fixtures.h"

namespace fusionscope::storage::testing {

SessionInfo sample_session() {
  SessionInfo s;
  s.name = "reference workload";
  s.created_utc = "2026-01-02T03:04:05Z";
  s.host = "gpu-host-7";
  s.gpu_name = "NVIDIA H100 80GB HBM3";
  s.cc_major = 9;
  s.cc_minor = 0;
  s.sm_count = 132;
  s.mem_bandwidth_gbs = 3352.5;
  s.peak_fp32_tflops = 66.9;
  s.peak_tensor_tflops = 989.4;
  s.calibrated_bandwidth_gbs = 2950.25;
  s.calibrated_tensor_tflops = 701.5;
  s.driver_version = "580.65.06";
  s.cuda_version = "13.0";
  s.cupti_version = "28";
  s.notes = "line one\nline two, with 'quotes' and \"doubles\"";
  return s;
}

RunInfo sample_run(const char* name) {
  RunInfo r;
  r.name = name;
  r.config_json = R"({"kind":"gated","tokens":8192,"dim":768,"hidden":3072})";
  r.kind = "gated";
  r.variant = "eager";
  r.dtype = "bf16";
  r.warmup = 3;
  r.iterations = 20;
  r.cuda_graph = true;
  r.wall_ns = 5'432'100;
  r.status = RunStatus::kOk;
  r.error = "";
  r.trace_status = "partial: buffer full";
  r.dropped_records = 17;
  r.created_utc = "2026-01-02T03:04:06Z";
  return r;
}

SampleRecords sample_records(SessionStore& store, int64_t base_ns) {
  SampleRecords r;
  const StringId gemm = store.intern("sm90_xmma_gemm_bf16bf16_bf16f32");
  const StringId gelu = store.intern("triton_poi_fused_gelu_mul_0");
  const StringId op = store.intern("down(gelu(gate(x)) * up(x))");
  KernelRecord k;
  k.start_ns = base_ns + 100;
  k.end_ns = base_ns + 900;
  k.device = 1;
  k.stream = 7;
  k.correlation_id = 42;
  k.name = gemm;
  k.op = op;
  k.grid = {132, 2, 3};
  k.block = {384, 1, 2};
  k.registers = 168;
  k.static_smem = 1024;
  k.dynamic_smem = 232448;
  k.pid = 4242;
  // Version 4's fields on the first of each kind; the second keeps their defaults.
  k.external_id = (int64_t{1} << 40) + 1034;
  k.extra = store.intern(R"({"args": {"queued": 0, "context": 1, "blocks per SM": 1.0}})");
  r.kernels.push_back(k);
  k.external_id = 0;
  k.extra = kNoString;
  k.start_ns = base_ns + 1000;
  k.end_ns = base_ns + 1200;
  k.correlation_id = 43;
  k.name = gelu;
  k.grid = {6144, 1, 1};
  k.block = {128, 1, 1};
  k.registers = 32;
  k.static_smem = 0;
  k.dynamic_smem = 0;
  r.kernels.push_back(k);

  ApiCallRecord a;
  a.start_ns = base_ns + 10;
  a.end_ns = base_ns + 30;
  a.thread_id = 4242;
  a.correlation_id = 42;
  a.name = store.intern("cuLaunchKernelEx");
  a.domain = ApiDomain::kDriver;
  a.pid = 4242;
  a.external_id = 1034;
  a.extra = store.intern(R"({"args": {"cbid": 652}})");
  r.api_calls.push_back(a);

  RangeRecord g;
  g.start_ns = base_ns;
  g.end_ns = base_ns + 2000;
  g.thread_id = 4242;
  g.name = store.intern("iteration 0");
  g.kind = RangeKind::kNvtx;
  g.pid = 4242;
  r.ranges.push_back(g);
  g.start_ns = base_ns + 5;
  g.end_ns = base_ns + 40;
  g.name = op;
  g.kind = RangeKind::kUserAnnotation;
  g.external_id = 1026;
  g.extra = store.intern(R"({"args": {"Record function id": 0}})");
  g.event_index = 1;
  r.ranges.push_back(g);

  MemopRecord m;
  m.start_ns = base_ns + 1300;
  m.end_ns = base_ns + 1500;
  m.device = 1;
  m.stream = 7;
  m.correlation_id = 44;
  m.bytes = (uint64_t{1} << 33) + 5;  // above 4 GiB: must survive as 64 bits
  m.kind = MemopKind::kMemcpy;
  m.copy_kind = CopyKind::kDtoH;
  m.pid = 4242;
  m.external_id = 1044;
  m.extra = store.intern(R"j({"name": "Memcpy DtoH (Device -> Pageable)"})j");
  r.memops.push_back(m);

  KernelMetricRecord km;
  km.correlation_id = 42;
  km.name = store.intern("dram__bytes_read.sum");
  km.unit = store.intern("byte");
  km.value = 123456789.5;
  r.kernel_metrics.push_back(km);

  SampleRecord s;
  s.t_ns = base_ns + 500;
  s.metric = store.intern("dram__throughput.avg.pct_of_peak_sustained_elapsed");
  s.value = 87.25;
  r.samples.push_back(s);
  return r;
}

void insert_all(RunWriter& run, const SampleRecords& r) {
  run.add_kernels(r.kernels);
  run.add_api_calls(r.api_calls);
  run.add_ranges(r.ranges);
  run.add_memops(r.memops);
  run.add_kernel_metrics(r.kernel_metrics);
  run.add_samples(r.samples);
  if (!r.kernels.empty()) {
    run.add_process(4242, "python3 train.py");
    SessionStore& store = run.store();
    const ThreadRecord threads[] = {{4242, 4242, store.intern("thread 4242 (python3)")},
                                    {4242, 7, store.intern("data loader")}};
    run.add_threads(threads);
    run.set_extra("chrome.header", R"({"schemaVersion": 1, "trace_id": "C31A"})");
    run.set_extra("chrome.metadata", "[]");
  }
}

int64_t add_run(SessionStore& store, const RunInfo& info, const SampleRecords& r) {
  RunWriter run(store, info);
  insert_all(run, r);
  run.commit();
  return run.id();
}

}  // namespace fusionscope::storage::testing
