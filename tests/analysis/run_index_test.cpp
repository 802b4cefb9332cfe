#include "fusionscope/analysis/run_index.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "fusionscope/analysis/iteration_kernels.h"
#include "fusionscope/analysis/stats.h"
#include "sample/run_builder.h"

namespace fusionscope::analysis {
namespace {

storage::RunData two_streams_two_threads() {
  sample::RunBuilder b;
  // Thread 1: an outer range with two nested ones, and two launches; thread 2: one launch.
  b.range(0, 100, "iteration 0", 1);
  b.range(5, 40, "gate", 1);
  b.range(45, 90, "up", 1);
  b.api_call(10, 15, "cudaLaunchKernel", 1, 501);
  b.api_call(50, 56, "cuLaunchKernelEx", 1, 502);
  b.api_call(60, 64, "cudaGraphLaunch", 2, 503);
  b.kernel(20, 60, "k_gate", "gate", 7, 501);
  b.kernel(70, 120, "k_up", "up", 7, 502);
  b.kernel(130, 140, "g1", "", 9, 503);  // a graph launch: two kernels, one correlation id
  b.kernel(141, 150, "g2", "", 9, 503);
  b.memop(0, 4, storage::MemopKind::kMemcpy, 4096, 7, 0);
  return b.finish();
}

TEST(RunIndex, OneRowPerLaneAndDepth) {
  const storage::RunData run = two_streams_two_threads();
  const RunIndex index = build_run_index(run);
  ASSERT_EQ(index.gpu.size(), 2u);
  EXPECT_EQ(index.gpu[0].stream, 7u);
  EXPECT_EQ(index.gpu[0].kernels.size(), 2u);
  EXPECT_EQ(index.gpu[0].memops.size(), 1u);
  EXPECT_EQ(index.gpu[1].stream, 9u);
  EXPECT_EQ(index.gpu[1].kernels.size(), 2u);
  ASSERT_EQ(index.cpu.size(), 2u);
  EXPECT_EQ(index.cpu[0].thread_id, 1u);
  ASSERT_EQ(index.cpu[0].ranges_by_depth.size(), 2u);
  EXPECT_EQ(index.cpu[0].ranges_by_depth[0].size(), 1u);
  EXPECT_EQ(index.cpu[0].ranges_by_depth[1].size(), 2u);
  EXPECT_EQ(run.str(run.ranges[index.cpu[0].ranges_by_depth[1].item[1]].name), "up");
  EXPECT_EQ(index.cpu[0].api_calls.size(), 2u);
  EXPECT_TRUE(index.cpu[1].ranges_by_depth.empty());
  // Items point back at their records, and every kernel is in exactly one row.
  std::vector<int> seen(run.kernels.size(), 0);
  for (const GpuRowIndex& row : index.gpu)
    for (size_t i = 0; i < row.kernels.size(); ++i) {
      ASSERT_LT(row.kernels.item[i], run.kernels.size());
      EXPECT_EQ(run.kernels[row.kernels.item[i]].start_ns, row.kernels.start[i]);
      EXPECT_EQ(run.kernels[row.kernels.item[i]].end_ns, row.kernels.end[i]);
      EXPECT_EQ(run.kernels[row.kernels.item[i]].stream, row.stream);
      ++seen[row.kernels.item[i]];
    }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(run.kernels.size()));
}

TEST(RunIndex, CorrelationLinksLaunchesAndKernels) {
  const storage::RunData run = two_streams_two_threads();
  const RunIndex index = build_run_index(run);
  const auto api = index.correlation.api_call(502);
  ASSERT_TRUE(api.has_value());
  EXPECT_EQ(run.str(run.api_calls[*api].name), "cuLaunchKernelEx");
  EXPECT_EQ(index.correlation.kernels(503).size(), 2u);
  EXPECT_TRUE(index.correlation.kernels(999).empty());
  EXPECT_FALSE(index.correlation.api_call(0).has_value());  // 0 = unknown, never linked
  EXPECT_TRUE(index.correlation.kernels(0).empty());

  // Launch latency: API start to kernel start, for the one kernel named k_up.
  std::vector<uint32_t> k_up;
  for (uint32_t k = 0; k < run.kernels.size(); ++k)
    if (run.str(run.kernels[k].name) == "k_up") k_up.push_back(k);
  ASSERT_EQ(k_up.size(), 1u);
  EXPECT_EQ(launch_latency_ns(run, index, k_up[0]), 20);  // 70 - 50
  // The graph launch's two kernels share its API call: latency from the one call's start.
  const std::vector<uint32_t> graph = index.correlation.kernels(503);
  ASSERT_EQ(graph.size(), 2u);
  EXPECT_EQ(launch_latency_ns(run, index, graph[0]), 70);  // 130 - 60
  EXPECT_EQ(launch_latency_ns(run, index, graph[1]), 81);  // 141 - 60
  EXPECT_FALSE(launch_latency_ns(run, index, 99).has_value());
}

TEST(RunIndex, EmptyRun) {
  sample::RunBuilder b;
  const storage::RunData run = b.finish();
  const RunIndex index = build_run_index(run);
  EXPECT_TRUE(index.gpu.empty());
  EXPECT_TRUE(index.cpu.empty());
}

// Two ranks of one launch: both use stream 7 and both have a thread 11 (thread ids can repeat
// across processes in imported traces). Nothing of one may land in the other's rows or windows.
storage::RunData two_ranks_on_stream_7() {
  sample::RunBuilder b;
  const storage::StringId rank0 = b.intern("python3 train.py --rank 0");
  const storage::StringId rank1 = b.intern("python3 train.py --rank 1");
  for (uint32_t pid : {100u, 200u}) {
    const int64_t t = pid == 100 ? 0 : 1000;  // rank 1 runs later
    b.range(t, t + 100, "iteration 0", 11).pid = pid;
    b.range(t + 200, t + 300, "iteration 1", 11).pid = pid;
    b.api_call(t + 10, t + 15, "cudaLaunchKernel", 11, pid + 1).pid = pid;
    b.api_call(t + 210, t + 215, "cudaLaunchKernel", 11, pid + 2).pid = pid;
    b.kernel(t + 20, t + 60, "k", "", 7, pid + 1).pid = pid;
    b.kernel(t + 220, t + 260, "k", "", 7, pid + 2).pid = pid;
  }
  // Rank 1's iteration 0 window (1000..1100) on thread 11 overlaps nothing of rank 0, but rank
  // 0's launch at 1010 would fall into it if windows were matched by thread alone.
  b.api_call(1010, 1012, "cudaLaunchKernel", 11, 150).pid = 100;
  b.kernel(1020, 1030, "late", "", 7, 150).pid = 100;
  storage::RunData run = b.finish();
  run.processes = {{100, rank0}, {200, rank1}};
  return run;
}

TEST(RunIndex, TwoProcessesOnTheSameStreamNumberHaveTheirOwnRows) {
  const storage::RunData run = two_ranks_on_stream_7();
  const RunIndex index = build_run_index(run);
  ASSERT_EQ(index.gpu.size(), 2u);
  ASSERT_EQ(index.cpu.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const uint32_t pid = r == 0 ? 100 : 200;
    EXPECT_EQ(index.gpu[r].pid, pid);
    EXPECT_EQ(index.gpu[r].stream, 7u);
    EXPECT_EQ(index.gpu[r].kernels.size(), pid == 100 ? 3u : 2u);
    for (uint32_t item : index.gpu[r].kernels.item) EXPECT_EQ(run.kernels[item].pid, pid);
    EXPECT_EQ(index.cpu[r].pid, pid);
    for (const auto& depth : index.cpu[r].ranges_by_depth)
      for (uint32_t item : depth.item) EXPECT_EQ(run.ranges[item].pid, pid);
    for (uint32_t item : index.cpu[r].api_calls.item) EXPECT_EQ(run.api_calls[item].pid, pid);
  }
  // Row titles say whose they are once a run has several processes.
  EXPECT_EQ(index.gpu[0].process, "python3 train.py [100] ");
  EXPECT_EQ(index.cpu[1].process, "python3 train.py [200] ");
  EXPECT_EQ(process_label(run, 300), "pid 300 ");
  EXPECT_EQ(build_run_index(two_streams_two_threads()).gpu[0].process, "");
}

TEST(RunIndex, IterationWindowsArePerProcessEvenWhereThreadIdsRepeat) {
  const storage::RunData run = two_ranks_on_stream_7();
  const std::vector<long> of = kernel_iterations(run);
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    const auto& k = run.kernels[i];
    const long expected =
        k.correlation_id == 150 ? -1 : static_cast<long>(k.correlation_id % 100) - 1;
    EXPECT_EQ(of[i], expected) << "kernel " << k.correlation_id << " of pid " << k.pid;
  }
  storage::RunData timed = run;
  timed.info.warmup = 1;
  const std::vector<bool> mask = timed_kernel_mask(timed);
  for (size_t i = 0; i < run.kernels.size(); ++i)
    EXPECT_EQ(mask[i], run.kernels[i].correlation_id % 100 == 2) << run.kernels[i].correlation_id;
}

}  // namespace
}  // namespace fusionscope::analysis
