// Decoding CUPTI activity buffers into session records, on buffers built in memory.
#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "activity_buffer.h"
#include "buffer_pipeline.h"
#include "memory_sink.h"
#include "run_assembler.h"

namespace fusionscope::profiler {
namespace {

using storage::RangeKind;
using testing::ActivityBuffer;
using testing::MemorySink;
namespace t = fusionscope::testing;

constexpr uint32_t kThread = 4242;
constexpr const char* kDomain = "fusionscope";

const storage::RangeRecord* find_range(const MemorySink& sink, std::string_view name) {
  for (const auto& r : sink.ranges)
    if (sink.str(r.name) == name) return &r;
  return nullptr;
}

TEST(ActivityDecode, EveryKindBecomesItsSessionRecord) {
  MemorySink sink;
  RunAssembler assembler(sink, {});
  ActivityBuffer buf;
  buf.add(t::marker_start(1, 1000, kThread, "iteration 0", kDomain))
      .add(t::marker_start(2, 1100, kThread, "gate", kDomain))
      .add(t::launch_record(1200, kThread, 77))
      .add(t::marker_end(2, 1500, kThread))
      .add(t::marker_end(1, 9000, kThread))
      .add(t::kernel_record(2000, 5000, 77, "_Z9gate_gemmv"))
      .add(t::memcpy_record(100, 400, 70, 4096, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD))
      .add(t::memset_record(500, 600, 71, 512))
      .add(t::api_record(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, 90,
                         450, kThread, 70))
      .add(t::api_record(CUPTI_ACTIVITY_KIND_RUNTIME,
                         CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 5100, 9500, kThread,
                         80))
      .add(t::sync_record(5200, 9400, 80))
      .add(t::overhead_record(9600, 9700, kThread));
  ASSERT_TRUE(decode_buffer(buf.data(), buf.size(), assembler));
  const AssemblyStats stats = assembler.finish();

  ASSERT_EQ(sink.kernels.size(), 1u);
  const auto& k = sink.kernels[0];
  EXPECT_EQ(k.start_ns, 2000);
  EXPECT_EQ(k.end_ns, 5000);
  EXPECT_EQ(k.stream, 7u);
  EXPECT_EQ(k.correlation_id, 77u);
  EXPECT_EQ(sink.str(k.name), "_Z9gate_gemmv");
  EXPECT_EQ(sink.str(k.op), "gate");
  EXPECT_EQ(k.grid, (storage::Dim3{132, 2, 1}));
  EXPECT_EQ(k.block, (storage::Dim3{256, 1, 1}));
  EXPECT_EQ(k.registers, 96u);
  EXPECT_EQ(k.static_smem, 1024u);
  EXPECT_EQ(k.dynamic_smem, 49152u);

  ASSERT_EQ(sink.api_calls.size(), 3u);
  EXPECT_EQ(sink.str(sink.api_calls[0].name), "cudaLaunchKernel");
  EXPECT_EQ(sink.api_calls[0].domain, storage::ApiDomain::kRuntime);
  EXPECT_EQ(sink.api_calls[0].thread_id, kThread);
  EXPECT_EQ(sink.api_calls[0].correlation_id, 77u);
  EXPECT_EQ(sink.str(sink.api_calls[1].name), "cuMemcpyHtoD");
  EXPECT_EQ(sink.api_calls[1].domain, storage::ApiDomain::kDriver);

  ASSERT_EQ(sink.memops.size(), 2u);
  EXPECT_EQ(sink.memops[0].kind, storage::MemopKind::kMemcpy);
  EXPECT_EQ(sink.memops[0].copy_kind, storage::CopyKind::kHtoD);
  EXPECT_EQ(sink.memops[0].bytes, 4096u);
  EXPECT_EQ(sink.memops[0].correlation_id, 70u);
  EXPECT_EQ(sink.memops[1].kind, storage::MemopKind::kMemset);
  EXPECT_EQ(sink.memops[1].bytes, 512u);

  const auto* iteration = find_range(sink, "iteration 0");
  ASSERT_NE(iteration, nullptr);
  EXPECT_EQ(iteration->kind, RangeKind::kNvtx);
  EXPECT_EQ(iteration->start_ns, 1000);
  EXPECT_EQ(iteration->end_ns, 9000);
  EXPECT_EQ(iteration->thread_id, kThread);
  const auto* sync = find_range(sink, "stream synchronize");
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->kind, RangeKind::kSync);
  EXPECT_EQ(sync->thread_id, kThread);  // from the API call with the same correlation id
  EXPECT_EQ(sync->start_ns, 5200);
  const auto* overhead = find_range(sink, "CUPTI overhead: buffer flush");
  ASSERT_NE(overhead, nullptr);
  EXPECT_EQ(overhead->kind, RangeKind::kTracerOverhead);
  EXPECT_EQ(sink.ranges.size(), 4u);  // two NVTX, one sync, one overhead

  EXPECT_EQ(stats.kernels, 1u);
  EXPECT_EQ(stats.api_calls, 3u);
  EXPECT_EQ(stats.memops, 2u);
  EXPECT_EQ(stats.ranges, 4u);
  EXPECT_EQ(stats.syncs, 1u);
  EXPECT_EQ(stats.overheads, 1u);
  EXPECT_EQ(stats.kernels_without_launch, 0u);
  EXPECT_EQ(stats.kernels_without_op, 0u);
}

TEST(ActivityDecode, OpIsTheInnermostRangeOfOurDomainAroundTheLaunchOnItsThread) {
  MemorySink sink;
  RunAssembler assembler(sink, {});
  ActivityBuffer buf;
  // Thread 1: iteration > up > (other domain range) > launch 1; a launch in the iteration but
  // outside any op (2); a launch inside a default-domain range only (3).
  // Thread 2: an op range "down" covering the same time as launch 1.
  buf.add(t::marker_start(1, 100, 1, "iteration 3", kDomain))
      .add(t::marker_start(2, 110, 1, "up", kDomain))
      .add(t::marker_start(3, 120, 1, "cublasLt", "cuBLAS"))
      .add(t::launch_record(130, 1, 501))
      .add(t::marker_end(3, 140, 1))
      .add(t::marker_end(2, 150, 1))
      .add(t::launch_record(160, 1, 502))
      .add(t::marker_end(1, 200, 1))
      .add(t::marker_start(4, 300, 1, "setup", nullptr))
      .add(t::launch_record(310, 1, 503))
      .add(t::marker_end(4, 320, 1))
      .add(t::marker_start(5, 0 + 105, 2, "down", kDomain))
      .add(t::marker_end(5, 400, 2))
      .add(t::kernel_record(1000, 1100, 501, "k1"))
      .add(t::kernel_record(1200, 1300, 502, "k2"))
      .add(t::kernel_record(1400, 1500, 503, "k3"))
      .add(t::kernel_record(1600, 1700, 999, "k4"));  // no launch record
  ASSERT_TRUE(decode_buffer(buf.data(), buf.size(), assembler));
  const AssemblyStats stats = assembler.finish();
  ASSERT_EQ(sink.kernels.size(), 4u);
  EXPECT_EQ(sink.str(sink.kernels[0].op), "up");
  EXPECT_EQ(sink.kernels[1].op, storage::kNoString);
  EXPECT_EQ(sink.kernels[2].op, storage::kNoString);
  EXPECT_EQ(sink.kernels[3].op, storage::kNoString);
  EXPECT_EQ(stats.kernels_without_launch, 1u);
  EXPECT_EQ(stats.kernels_without_op, 3u);
  EXPECT_NE(find_range(sink, "cuBLAS: cublasLt"), nullptr);  // other domains keep their name
  EXPECT_NE(find_range(sink, "setup"), nullptr);
}

TEST(ActivityDecode, AWholeCompiledProgramsKernelsTakeThePlansOpsByLaunchOrder) {
  MemorySink sink;
  RunAssembler::Options options;
  options.nvtx_domain = "";
  options.iteration_prefix = "iteration ";
  options.iteration_ops = {{"gate", true}, {"up", true}, {"gelu-tanh*mul", false}, {"down", true}};
  RunAssembler assembler(sink, options);
  ActivityBuffer buf;
  // Iteration 0: the compiled module's four kernels; iteration 1: an extra kernel (a recompile's
  // benchmark), so it does not fit; a kernel inside an op range keeps that op.
  buf.add(t::marker_start(1, 100, 1, "iteration 0", nullptr));
  const char* names[] = {"nvjet_tst", "nvjet_tst", "triton_poi_fused_gelu_mul_0", "nvjet_tst"};
  for (uint32_t i = 0; i < 4; ++i)
    buf.add(t::launch_record(110 + 10 * i, 1, 700 + i))
        .add(t::kernel_record(1000 + 100 * i, 1050 + 100 * i, 700 + i, names[i]));
  buf.add(t::marker_end(1, 200, 1)).add(t::marker_start(2, 300, 1, "iteration 1", nullptr));
  for (uint32_t i = 0; i < 5; ++i)
    buf.add(t::launch_record(310 + 10 * i, 1, 800 + i))
        .add(t::kernel_record(2000 + 100 * i, 2050 + 100 * i, 800 + i, "nvjet_tst"));
  buf.add(t::marker_start(3, 370, 1, "custom", nullptr))
      .add(t::launch_record(375, 1, 900))
      .add(t::kernel_record(3000, 3050, 900, "mine"))
      .add(t::marker_end(3, 380, 1))
      .add(t::marker_end(2, 400, 1));
  ASSERT_TRUE(decode_buffer(buf.data(), buf.size(), assembler));
  const AssemblyStats stats = assembler.finish();
  ASSERT_EQ(sink.kernels.size(), 10u);
  std::map<uint32_t, std::string> op;
  for (const auto& k : sink.kernels) op[k.correlation_id] = sink.str(k.op);
  EXPECT_EQ(op[700], "gate");
  EXPECT_EQ(op[701], "up");
  EXPECT_EQ(op[702], "gelu-tanh*mul");
  EXPECT_EQ(op[703], "down");
  EXPECT_EQ(op[800], "");
  EXPECT_EQ(op[900], "custom");
  EXPECT_EQ(stats.iterations_ops_by_order, 1u);
  EXPECT_EQ(stats.iterations_ops_unmatched, 1u);
  EXPECT_EQ(stats.ops_unmatched_reason, "iteration 1: 5 kernels for the plan's 4 ops");
  EXPECT_EQ(stats.kernels_without_op, 5u);
}

TEST(ActivityDecode, KernelsArrivingBeforeTheirLaunchAndRangeAreStillLinked) {
  MemorySink sink;
  RunAssembler assembler(sink, {});
  ActivityBuffer gpu, cpu;
  gpu.add(t::kernel_record(5000, 6000, 11, "late"));
  cpu.add(t::marker_start(9, 100, 3, "mul", kDomain))
      .add(t::launch_record(200, 3, 11))
      .add(t::marker_end(9, 300, 3));
  ASSERT_TRUE(decode_buffer(gpu.data(), gpu.size(), assembler));
  ASSERT_TRUE(decode_buffer(cpu.data(), cpu.size(), assembler));
  assembler.finish();
  ASSERT_EQ(sink.kernels.size(), 1u);
  EXPECT_EQ(sink.str(sink.kernels[0].op), "mul");
}

TEST(ActivityDecode, GraphReplayedKernelsTakeTheOpOfTheCapturedNode) {
  MemorySink sink;
  RunAssembler assembler(sink, {});
  // Capture: node 40 created inside op "gelu" on thread 8. Instantiation (later, outside any
  // op) creates node 41 and reports it as a clone of 40.
  const GraphNodeEvent events[] = {
      {GraphNodeEvent::Kind::kCreated, 40, 0, 8, 150},
      {GraphNodeEvent::Kind::kCreated, 41, 0, 8, 600},
      {GraphNodeEvent::Kind::kCloned, 41, 40, 0, 0},
  };
  ActivityBuffer buf;
  buf.add(t::marker_start(1, 100, 8, "gelu", kDomain))
      .add(t::marker_end(1, 200, 8))
      .add(t::launch_record(1000, 8, 60))  // cudaGraphLaunch, outside any op
      .add(t::kernel_record(2000, 2100, 60, "gelu_kernel", 7, 41))
      .add(t::kernel_record(2200, 2300, 60, "other_kernel", 7, 99));  // unknown node
  ASSERT_TRUE(decode_buffer(buf.data(), buf.size(), assembler));
  assembler.add_graph_nodes(events);
  const AssemblyStats stats = assembler.finish();
  EXPECT_EQ(stats.graph_kernels, 2u);
  ASSERT_EQ(sink.kernels.size(), 2u);
  EXPECT_EQ(sink.str(sink.kernels[0].op), "gelu");
  EXPECT_EQ(sink.kernels[0].correlation_id, 60u);
  EXPECT_EQ(sink.kernels[1].op, storage::kNoString);
}

TEST(ActivityDecode, WritesInBatchesOfTheConfiguredSize) {
  MemorySink sink;
  RunAssembler assembler(sink, {"fusionscope", "iteration", 2, {}});
  ActivityBuffer buf;
  for (uint32_t i = 0; i < 5; ++i) {
    buf.add(t::launch_record(100 * i + 10, 1, i + 1));
    buf.add(t::kernel_record(1000 + 100 * i, 1050 + 100 * i, i + 1, "k"));
  }
  ASSERT_TRUE(decode_buffer(buf.data(), buf.size(), assembler));
  // API calls stream out while the run goes on; kernels wait for the end of the run.
  EXPECT_EQ(sink.api_batches, (std::vector<size_t>{2, 2}));
  EXPECT_TRUE(sink.kernel_batches.empty());
  assembler.finish();
  EXPECT_EQ(sink.api_batches, (std::vector<size_t>{2, 2, 1}));
  EXPECT_EQ(sink.kernel_batches, (std::vector<size_t>{2, 2, 1}));
}

TEST(ActivityDecode, UntimedRecordsAndCutRangesAreCountedNotStored) {
  MemorySink sink;
  RunAssembler assembler(sink, {});
  ActivityBuffer buf;
  buf.add(t::kernel_record(0, 0, 1, "no_time"))
      .add(t::marker_end(77, 500, 1))                      // started before the run
      .add(t::marker_start(78, 600, 1, "open", kDomain));  // never ends
  ASSERT_TRUE(decode_buffer(buf.data(), buf.size(), assembler));
  const AssemblyStats stats = assembler.finish();
  EXPECT_TRUE(sink.kernels.empty());
  EXPECT_TRUE(sink.ranges.empty());
  EXPECT_EQ(stats.untimed_records, 1u);
  EXPECT_EQ(stats.unmatched_marker_ends, 1u);
  EXPECT_EQ(stats.unclosed_markers, 1u);
}

TEST(ActivityDecode, StripsCallbackVersionSuffixes) {
  EXPECT_EQ(strip_version_suffix("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(strip_version_suffix("cuMemcpyHtoD_v2"), "cuMemcpyHtoD");
  EXPECT_EQ(strip_version_suffix("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(strip_version_suffix("cu_vx"), "cu_vx");
  EXPECT_EQ(strip_version_suffix("name_v"), "name_v");
}

TEST(BufferPipeline, DecodesBuffersPushedFromManyThreads) {
  MemorySink sink;
  RunAssembler assembler(sink, {"fusionscope", "iteration", 64, {}});
  std::atomic<int> released{0};
  BufferPipeline pipeline([&](uint8_t* b) {
    std::free(b);
    ++released;
  });
  pipeline.attach(&assembler);
  std::vector<std::thread> threads;
  for (uint32_t th = 0; th < 4; ++th) {
    threads.emplace_back([&, th] {
      for (uint32_t i = 0; i < 50; ++i) {
        ActivityBuffer buf;
        buf.add(t::launch_record(1000 * i + 10, th + 1, th * 1000 + i + 1));
        pipeline.push(buf.release_copy(), buf.size());
      }
    });
  }
  for (auto& th : threads) th.join();
  pipeline.drain();
  EXPECT_EQ(released.load(), 200);
  pipeline.attach(nullptr);
  assembler.finish();
  EXPECT_EQ(sink.api_calls.size(), 200u);
  EXPECT_TRUE(pipeline.take_error().empty());
}

TEST(BufferPipeline, AStoreThatCannotWriteIsReportedAndNothingCrashes) {
  MemorySink sink;
  sink.fail_writes = true;
  RunAssembler assembler(sink, {"fusionscope", "iteration", 1, {}});
  BufferPipeline pipeline([](uint8_t* b) { std::free(b); });
  pipeline.attach(&assembler);
  for (int i = 0; i < 3; ++i) {
    ActivityBuffer buf;
    buf.add(t::launch_record(10, 1, 1));
    pipeline.push(buf.release_copy(), buf.size());
  }
  pipeline.drain();
  const std::string error = pipeline.take_error();
  EXPECT_NE(error.find("disk full"), std::string::npos) << error;
  pipeline.attach(nullptr);
}

TEST(BufferPipeline, BuffersWithoutARunAreCountedAndFreed) {
  std::atomic<int> released{0};
  BufferPipeline pipeline([&](uint8_t* b) {
    std::free(b);
    ++released;
  });
  ActivityBuffer buf;
  buf.add(t::launch_record(10, 1, 1));
  pipeline.push(buf.release_copy(), buf.size());
  pipeline.drain();
  EXPECT_EQ(pipeline.take_stray_buffers(), 1u);
  EXPECT_EQ(released.load(), 1);
}

}  // namespace
}  // namespace fusionscope::profiler
