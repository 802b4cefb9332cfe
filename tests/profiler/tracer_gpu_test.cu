// The tracer on a real GPU with small kernels of its own: what CUPTI reports, how it is linked,
// and the failure modes (another CUPTI subscriber, dropped records).
#include <cuda_runtime.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "fusionscope/profiler/device_info.h"
#include "fusionscope/profiler/tracer.h"
#include "gpu_guard.h"
#include "memory_sink.h"

namespace fusionscope::profiler {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

__global__ void fill_kernel(float* p, int n, float v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

__global__ void scale_kernel(float* p, int n, float s) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= s;
}

__global__ void spin_kernel(long long cycles, int* out) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(out, 1);
}

nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA("fusionscope");
  return d;
}
void push(const char* name) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  nvtxDomainRangePushEx(domain(), &a);
}
void pop() {
  nvtxDomainRangePop(domain());
}

const storage::ApiCallRecord* api_with(const testing::MemorySink& sink, uint32_t correlation) {
  for (const auto& a : sink.api_calls)
    if (a.correlation_id == correlation && a.domain == storage::ApiDomain::kRuntime) return &a;
  for (const auto& a : sink.api_calls)
    if (a.correlation_id == correlation) return &a;
  return nullptr;
}

void print_api_histogram(const testing::MemorySink& sink) {
  std::map<std::string, int> count;
  for (const auto& a : sink.api_calls)
    count[(a.domain == storage::ApiDomain::kRuntime ? "rt " : "drv ") + sink.str(a.name)]++;
  for (const auto& [name, n] : count) std::printf("    %5d  %s\n", n, name.c_str());
}

constexpr int kN = 1 << 20;

TEST(TracerGpu, CapturesKernelsLaunchesOpsMemopsAndSyncs) {
  FUSIONSCOPE_REQUIRE_GPU();
  Tracer tracer;
  ASSERT_TRUE(tracer.available()) << tracer.unavailable_reason();
  testing::MemorySink sink;
  tracer.begin_run(sink);

  float* d = nullptr;
  CUDA_OK(cudaMalloc(&d, kN * sizeof(float)));
  std::vector<float> host(kN, 1.0f);
  CUDA_OK(cudaMemcpy(d, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d, 0, kN * sizeof(float)));
  for (int it = 0; it < 3; ++it) {
    const std::string name = "iteration " + std::to_string(it);
    push(name.c_str());
    push("fill");
    fill_kernel<<<kN / 256, 256>>>(d, kN, 2.0f);
    pop();
    push("scale");
    scale_kernel<<<kN / 256, 256>>>(d, kN, 3.0f);
    pop();
    pop();
  }
  CUDA_OK(cudaStreamSynchronize(nullptr));
  CUDA_OK(cudaMemcpy(host.data(), d, kN * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(d));
  EXPECT_EQ(host[12345], 6.0f);
  const TraceOutcome out = tracer.end_run();

  std::printf(
      "  outcome: traced=%d status='%s' kernels=%zu api=%zu ranges=%zu memops=%zu dropped=%llu\n",
      out.traced, out.status.c_str(), out.kernels, out.api_calls, out.ranges, out.memops,
      static_cast<unsigned long long>(out.dropped_records));
  print_api_histogram(sink);
  EXPECT_TRUE(out.traced);
  EXPECT_TRUE(out.status.empty()) << out.status;
  EXPECT_EQ(out.dropped_records, 0u);

  const uint32_t me = static_cast<uint32_t>(gettid());
  int fills = 0, scales = 0;
  for (const auto& k : sink.kernels) {
    const std::string& name = sink.str(k.name);
    const bool fill = name.find("fill_kernel") != std::string::npos;
    const bool scale = name.find("scale_kernel") != std::string::npos;
    if (!fill && !scale) continue;
    fills += fill;
    scales += scale;
    EXPECT_EQ(sink.str(k.op), fill ? "fill" : "scale") << name;
    EXPECT_GT(k.end_ns, k.start_ns);
    EXPECT_EQ(k.grid, (storage::Dim3{kN / 256, 1, 1}));
    EXPECT_EQ(k.block, (storage::Dim3{256, 1, 1}));
    const auto* launch = api_with(sink, k.correlation_id);
    ASSERT_NE(launch, nullptr) << "no launch for correlation id " << k.correlation_id;
    EXPECT_EQ(sink.str(launch->name), "cudaLaunchKernel");
    EXPECT_EQ(launch->thread_id, me);
    EXPECT_LT(launch->start_ns, k.start_ns);  // one clock: the launch precedes the kernel
  }
  EXPECT_EQ(fills, 3);
  EXPECT_EQ(scales, 3);

  std::multiset<std::string> nvtx;
  bool sync = false;
  for (const auto& r : sink.ranges) {
    if (r.kind == storage::RangeKind::kNvtx) nvtx.insert(sink.str(r.name));
    if (r.kind == storage::RangeKind::kSync) {
      sync = true;
      EXPECT_EQ(r.thread_id, me);
    }
    if (r.kind == storage::RangeKind::kNvtx) EXPECT_EQ(r.thread_id, me);
  }
  EXPECT_EQ(nvtx.count("fill"), 3u);
  EXPECT_EQ(nvtx.count("scale"), 3u);
  EXPECT_EQ(nvtx.count("iteration 2"), 1u);
  EXPECT_TRUE(sync) << "no synchronization record for cudaStreamSynchronize";

  int htod = 0, dtoh = 0, memsets = 0;
  for (const auto& m : sink.memops) {
    if (m.kind == storage::MemopKind::kMemset && m.bytes == kN * sizeof(float)) ++memsets;
    if (m.copy_kind == storage::CopyKind::kHtoD && m.bytes == kN * sizeof(float)) ++htod;
    if (m.copy_kind == storage::CopyKind::kDtoH && m.bytes == kN * sizeof(float)) ++dtoh;
  }
  EXPECT_EQ(htod, 1);
  EXPECT_EQ(dtoh, 1);
  EXPECT_EQ(memsets, 1);
}

TEST(TracerGpu, KernelDurationsAgreeWithCudaEvents) {
  FUSIONSCOPE_REQUIRE_GPU();
  Tracer tracer;
  ASSERT_TRUE(tracer.available()) << tracer.unavailable_reason();
  int* counter = nullptr;
  CUDA_OK(cudaMalloc(&counter, sizeof(int)));
  int clock_khz = 0;
  CUDA_OK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const long long cycles = static_cast<long long>(clock_khz) * 1;  // about 1 ms
  spin_kernel<<<1, 32>>>(1000, counter);  // load the module outside the run
  CUDA_OK(cudaDeviceSynchronize());

  testing::MemorySink sink;
  tracer.begin_run(sink);
  constexpr int kReps = 5;
  std::vector<cudaEvent_t> events(2 * kReps);
  for (auto& e : events) CUDA_OK(cudaEventCreate(&e));
  // A long one-block kernel first keeps the GPU busy while the events and launches below are
  // queued, so each event pair times its kernel alone and not the host's launch latency (CUPTI's
  // first launch in a run costs hundreds of microseconds on the host).
  spin_kernel<<<1, 32>>>(5 * cycles, counter);
  for (int i = 0; i < kReps; ++i) {
    CUDA_OK(cudaEventRecord(events[2 * i]));
    spin_kernel<<<132, 128>>>(cycles, counter);
    CUDA_OK(cudaEventRecord(events[2 * i + 1]));
  }
  CUDA_OK(cudaDeviceSynchronize());
  const TraceOutcome out = tracer.end_run();
  ASSERT_TRUE(out.status.empty()) << out.status;

  std::vector<int64_t> cupti;
  for (const auto& k : sink.kernels)
    if (sink.str(k.name).find("spin_kernel") != std::string::npos && k.grid.x == 132)
      cupti.push_back(k.end_ns - k.start_ns);
  ASSERT_EQ(cupti.size(), static_cast<size_t>(kReps));
  for (int i = 0; i < kReps; ++i) {
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
    const double event_ns = ms * 1e6;
    const double diff = std::abs(static_cast<double>(cupti[i]) - event_ns) / event_ns;
    std::printf("  kernel %d: CUPTI %.1f us, events %.1f us, differ by %.2f%%\n", i, cupti[i] / 1e3,
                event_ns / 1e3, 100 * diff);
    EXPECT_LT(diff, 0.05);
  }
  for (auto& e : events) cudaEventDestroy(e);
  cudaFree(counter);
}

TEST(TracerGpu, GraphReplayedKernelsKeepTheirOps) {
  FUSIONSCOPE_REQUIRE_GPU();
  Tracer tracer;
  ASSERT_TRUE(tracer.available()) << tracer.unavailable_reason();
  float* d = nullptr;
  CUDA_OK(cudaMalloc(&d, kN * sizeof(float)));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  testing::MemorySink sink;
  tracer.begin_run(sink);
  cudaGraph_t graph;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  push("fill");
  fill_kernel<<<kN / 256, 256, 0, stream>>>(d, kN, 2.0f);
  pop();
  push("scale");
  scale_kernel<<<kN / 256, 256, 0, stream>>>(d, kN, 3.0f);
  pop();
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int it = 0; it < 3; ++it) {
    const std::string name = "iteration " + std::to_string(it);
    push(name.c_str());
    CUDA_OK(cudaGraphLaunch(exec, stream));
    pop();
  }
  CUDA_OK(cudaStreamSynchronize(stream));
  const TraceOutcome out = tracer.end_run();
  print_api_histogram(sink);
  EXPECT_TRUE(out.status.empty()) << out.status;

  int linked = 0;
  for (const auto& k : sink.kernels) {
    const std::string& name = sink.str(k.name);
    const auto* launch = api_with(sink, k.correlation_id);
    std::printf("  %s op='%s' launch=%s\n", name.c_str(), sink.str(k.op).c_str(),
                launch ? sink.str(launch->name).c_str() : "(none)");
    ASSERT_NE(launch, nullptr);
    EXPECT_EQ(sink.str(launch->name), "cudaGraphLaunch");
    EXPECT_EQ(sink.str(k.op), name.find("fill") != std::string::npos ? "fill" : "scale");
    ++linked;
  }
  EXPECT_EQ(linked, 6);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFree(d);
}

TEST(TracerGpu, DroppedRecordsAreCountedAndReported) {
  FUSIONSCOPE_REQUIRE_GPU();
  TracerOptions options;
  options.buffer_bytes = 4096;
  options.max_buffers = 1;  // one small buffer per run: the rest of the records are dropped
  Tracer tracer(options);
  ASSERT_TRUE(tracer.available()) << tracer.unavailable_reason();
  float* d = nullptr;
  CUDA_OK(cudaMalloc(&d, 1024 * sizeof(float)));
  testing::MemorySink sink;
  tracer.begin_run(sink);
  for (int i = 0; i < 2000; ++i) fill_kernel<<<4, 256>>>(d, 1024, 1.0f);
  CUDA_OK(cudaDeviceSynchronize());
  const TraceOutcome out = tracer.end_run();
  std::printf("  dropped %llu, kept %zu kernels and %zu API calls; status: %s\n",
              static_cast<unsigned long long>(out.dropped_records), out.kernels, out.api_calls,
              out.status.c_str());
  EXPECT_GT(out.dropped_records, 0u);
  EXPECT_LT(out.kernels, 2000u);
  EXPECT_NE(out.status.find("dropped"), std::string::npos) << out.status;
  cudaFree(d);
}

void CUPTIAPI ignore_callbacks(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

TEST(TracerGpu, AnotherSubscriberLeavesRunsWorkingButUntraced) {
  FUSIONSCOPE_REQUIRE_GPU();
  // Another tool (Nsight Systems, the PyTorch profiler) holds CUPTI's one subscriber slot.
  CUpti_SubscriberHandle other = nullptr;
  ASSERT_EQ(cuptiSubscribe(&other, ignore_callbacks, nullptr), CUPTI_SUCCESS);
  {
    Tracer tracer;
    EXPECT_FALSE(tracer.available());
    std::printf("  reason: %s\n", tracer.unavailable_reason().c_str());
    EXPECT_NE(tracer.unavailable_reason().find("another profiler"), std::string::npos);
    testing::MemorySink sink;
    tracer.begin_run(sink);
    float* d = nullptr;
    CUDA_OK(cudaMalloc(&d, 1024 * sizeof(float)));
    fill_kernel<<<4, 256>>>(d, 1024, 5.0f);
    float v = 0;
    CUDA_OK(cudaMemcpy(&v, d + 7, sizeof v, cudaMemcpyDeviceToHost));
    EXPECT_EQ(v, 5.0f);  // the work itself ran
    cudaFree(d);
    const TraceOutcome out = tracer.end_run();
    EXPECT_FALSE(out.traced);
    EXPECT_EQ(out.status, tracer.unavailable_reason());
    EXPECT_TRUE(sink.kernels.empty());
  }
  ASSERT_EQ(cuptiUnsubscribe(other), CUPTI_SUCCESS);
  Tracer after;
  EXPECT_TRUE(after.available()) << after.unavailable_reason();
}

TEST(TracerGpu, DescribesTheDevice) {
  FUSIONSCOPE_REQUIRE_GPU();
  storage::SessionInfo info;
  std::string why;
  ASSERT_TRUE(describe_device(0, info, &why)) << why;
  std::printf(
      "  %s cc %d.%d, %d SMs, %.0f GB/s, fp32 %.1f TF, tensor %.0f TF\n  driver %s, CUDA %s, CUPTI "
      "%s\n  %s\n",
      info.gpu_name.c_str(), info.cc_major, info.cc_minor, info.sm_count, info.mem_bandwidth_gbs,
      info.peak_fp32_tflops, info.peak_tensor_tflops, info.driver_version.c_str(),
      info.cuda_version.c_str(), info.cupti_version.c_str(), info.notes.c_str());
  EXPECT_FALSE(info.gpu_name.empty());
  EXPECT_GE(info.cc_major, 7);
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GT(info.mem_bandwidth_gbs, 100.0);
  EXPECT_FALSE(info.driver_version.empty());
  EXPECT_FALSE(info.cuda_version.empty());
  EXPECT_FALSE(info.cupti_version.empty());
}

}  // namespace
}  // namespace fusionscope::profiler
