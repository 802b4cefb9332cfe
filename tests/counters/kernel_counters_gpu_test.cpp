// Per-kernel counters on a real GPU against workloads whose traffic and FLOPs are known exactly:
// a copy must move its bytes through DRAM, a GEMM must show 2*M*N*K tensor FLOPs.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "fusionscope/counters/calibration.h"
#include "fusionscope/counters/kernel_counters.h"
#include "fusionscope/counters/metric_names.h"
#include "gpu_guard.h"
#include "l2_reader.h"

namespace fc = fusionscope::counters;
namespace m = fusionscope::counters::metric;

namespace {

// Skips (with the reason) when the machine forbids or lacks counters: that is an environment
// property, not a defect; the status text is what the app shows in that case. Under
// FUSIONSCOPE_REQUIRE_GPU=1 (a GPU machine meant to run them) it fails instead.
#define SKIP_IF_NO_COUNTERS(pass)                                \
  do {                                                           \
    const auto a = (pass).status.availability;                   \
    if (a == fc::CounterAvailability::kInsufficientPrivileges || \
        a == fc::CounterAvailability::kNotSupported)             \
      FUSIONSCOPE_GPU_TEST_CANNOT_RUN((pass).status.describe()); \
  } while (0)

void print(const fc::CounterPassResult& r) {
  for (const auto& k : r.kernels) {
    std::printf("kernel %zu (range \"%s\")\n", k.index, k.range_name.c_str());
    for (size_t i = 0; i < r.metrics.size(); ++i) {
      std::printf("  %-70s %16.6g %s\n", r.metrics[i].c_str(), k.values[i], r.units[i].c_str());
    }
  }
}

}  // namespace

// 2 GiB each way: the 50 MB L2 can hide at most ~2.5% of the writes at kernel end.
TEST(KernelCountersGpu, CopyMovesItsBytesThroughDram) {
  FUSIONSCOPE_REQUIRE_GPU();
  const size_t bytes = size_t{2} << 30;
  fc::CopyWorkload copy(bytes);
  const auto pass = fc::run_counter_pass([&] { copy.launch(); });
  SKIP_IF_NO_COUNTERS(pass);
  ASSERT_TRUE(pass.status.ok()) << pass.status.describe();
  print(pass);
  EXPECT_TRUE(copy.verify()) << "kernel replay must leave the copy's result intact";
  ASSERT_EQ(pass.kernels.size(), 1u);
  EXPECT_EQ(pass.dropped_ranges, 0u);
  EXPECT_GE(pass.passes, 1u);
  const double read = pass.value(0, m::kDramRead), write = pass.value(0, m::kDramWrite);
  std::printf("copy of %zu bytes: DRAM read %.4f, write %.4f of the expected\n", bytes,
              read / static_cast<double>(bytes), write / static_cast<double>(bytes));
  EXPECT_NEAR(read, static_cast<double>(bytes), 0.05 * static_cast<double>(bytes));
  EXPECT_NEAR(write, static_cast<double>(bytes), 0.05 * static_cast<double>(bytes));
  EXPECT_NEAR(pass.value(0, m::kDramBytes), 2.0 * static_cast<double>(bytes),
              0.05 * 2.0 * static_cast<double>(bytes));
  // Every byte also crosses L2 and L1 (reads and writes requested there).
  EXPECT_GE(pass.value(0, m::kL2Bytes), 0.95 * 2.0 * static_cast<double>(bytes));
  EXPECT_GE(pass.value(0, m::kL1Bytes), 0.95 * 2.0 * static_cast<double>(bytes));
  EXPECT_GT(pass.value(0, m::kDuration), 0.0);
  EXPECT_GT(pass.value(0, m::kDramThroughputPct), 50.0);
  EXPECT_LT(pass.value(0, m::kTensorActivePct), 1.0);
  EXPECT_EQ(pass.value(0, m::kTensorFlops), 0.0);
  EXPECT_GT(pass.value(0, m::kDramBandwidth), 0.0);
}

TEST(KernelCountersGpu, GemmShowsTensorActivityAndItsFlops) {
  FUSIONSCOPE_REQUIRE_GPU();
  const int n = 4096;
  fc::GemmWorkload gemm(n, n, n);
  const auto pass = fc::run_counter_pass([&] { gemm.launch(); });
  SKIP_IF_NO_COUNTERS(pass);
  ASSERT_TRUE(pass.status.ok()) << pass.status.describe();
  print(pass);
  ASSERT_GE(pass.kernels.size(), 1u);
  double tensor_flops = 0, bf16_ops = 0, tensor_active = 0;
  for (size_t k = 0; k < pass.kernels.size(); ++k) {
    tensor_flops += pass.value(k, m::kTensorFlops);
    bf16_ops += pass.value(k, m::kTensorOpsBf16);
    tensor_active = std::max(tensor_active, pass.value(k, m::kTensorActivePct));
  }
  std::printf("GEMM %dx%dx%d: tensor FLOPs %.6g (2MNK %.6g, ratio %.4f); bf16 ops / 2MNK %.4f\n", n,
              n, n, tensor_flops, gemm.flops(), tensor_flops / gemm.flops(),
              bf16_ops / gemm.flops());
  EXPECT_NEAR(tensor_flops, gemm.flops(), 0.03 * gemm.flops());
  EXPECT_GT(tensor_active, 20.0);
  EXPECT_GT(pass.value(0, m::kTensorHmmaActivePct), 20.0);
  // A 4096^3 bf16 GEMM reads at least its inputs (2 x 32 MiB) and writes its output (32 MiB).
  EXPECT_GT(pass.value(0, m::kDramBytes), 0.5 * 3 * 32.0 * (1 << 20));
}

TEST(KernelCountersGpu, KernelsComeBackInLaunchOrder) {
  FUSIONSCOPE_REQUIRE_GPU();
  const size_t mib = size_t{1} << 20;
  fc::CopyWorkload small(512 * mib), medium(1024 * mib), large(2048 * mib);
  const auto pass = fc::run_counter_pass([&] {
    medium.launch();
    small.launch();
    large.launch();
  });
  SKIP_IF_NO_COUNTERS(pass);
  ASSERT_TRUE(pass.status.ok()) << pass.status.describe();
  ASSERT_EQ(pass.kernels.size(), 3u);
  EXPECT_FALSE(pass.limit_reached);
  // DRAM bytes moved, read + written; sizes differ by 2x, so the order is unmistakable.
  const double expected[] = {2.0 * 1024 * mib, 2.0 * 512 * mib, 2.0 * 2048 * mib};
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(pass.kernels[k].index, k);
    EXPECT_NEAR(pass.value(k, m::kDramBytes), expected[k], 0.10 * expected[k]) << "kernel " << k;
  }
  EXPECT_NE(pass.kernels[0].range_name, pass.kernels[1].range_name);
}

TEST(KernelCountersGpu, StopsAtTheKernelLimitAndSaysSo) {
  FUSIONSCOPE_REQUIRE_GPU();
  fc::CopyWorkload copy(size_t{16} << 20);
  fc::CounterPassOptions options;
  options.max_kernels = 2;
  const auto pass = fc::run_counter_pass(
      [&] {
        for (int i = 0; i < 4; ++i) copy.launch();
      },
      options);
  SKIP_IF_NO_COUNTERS(pass);
  ASSERT_TRUE(pass.status.ok()) << pass.status.describe();
  EXPECT_EQ(pass.kernels.size(), 2u);
  EXPECT_TRUE(pass.limit_reached);
}

TEST(KernelCountersGpu, SessionCanBeRepeatedAndAWorkloadErrorPropagates) {
  FUSIONSCOPE_REQUIRE_GPU();
  fc::CopyWorkload copy(size_t{16} << 20);
  EXPECT_THROW(fc::run_counter_pass([&] {
                 copy.launch();
                 throw std::runtime_error("workload failed");
               }),
               std::runtime_error);
  const auto again = fc::run_counter_pass([&] { copy.launch(); });
  SKIP_IF_NO_COUNTERS(again);
  ASSERT_TRUE(again.status.ok()) << again.status.describe();
  EXPECT_EQ(again.kernels.size(), 1u);

  fc::KernelCounterSession session;
  EXPECT_FALSE(session.end().status.ok()) << "end() without begin() is an error, not a crash";
}

// A kernel that holds its data in the L2 at evict-last priority (the gated GEMM does so with an
// operand) must not leave it there for the next kernel: the sweep before each kernel removes it,
// whichever end it is asked for, so a second read of the same buffer comes from DRAM again, as
// after Nsight Compute's flush. Without the sweep the second read hits the L2 (the buffer is a
// quarter of it), which shows the case is real.
TEST(KernelCountersGpu, TheL2SweepRemovesLinesHeldAtEvictLastPriority) {
  FUSIONSCOPE_REQUIRE_GPU();
  int l2 = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), cudaSuccess);
  const size_t bytes = static_cast<size_t>(l2) / 4 / 4096 * 4096;
  void* buffer = nullptr;
  ASSERT_EQ(cudaMalloc(&buffer, bytes), cudaSuccess);
  ASSERT_EQ(cudaMemset(buffer, 1, bytes), cudaSuccess);
  struct Case {
    const char* name;
    bool sweep;
    fc::L2SweepEnd end;
  };
  for (const Case& c : {Case{"no sweep", false, fc::L2SweepEnd::kCleanLines},
                        Case{"sweep, clean lines left", true, fc::L2SweepEnd::kCleanLines},
                        Case{"sweep, lines discarded", true, fc::L2SweepEnd::kEmpty}}) {
    fc::CounterPassOptions options;
    options.replay = fc::ReplayMode::kUser;
    options.metrics = fc::dram_kernel_metrics();
    options.flush_l2 = c.sweep;
    options.l2_sweep_end = c.end;
    fc::KernelCounterSession session(options);
    const fc::CounterStatus begun = session.begin();
    if (begun.availability == fc::CounterAvailability::kInsufficientPrivileges ||
        begun.availability == fc::CounterAvailability::kNotSupported) {
      cudaFree(buffer);
      FUSIONSCOPE_GPU_TEST_CANNOT_RUN(begun.describe());
    }
    ASSERT_TRUE(begun.ok()) << begun.describe();
    while (session.begin_pass()) {
      session.before_kernel(nullptr);
      fc::test::launch_l2_read(buffer, bytes, true);
      session.before_kernel(nullptr);
      fc::test::launch_l2_read(buffer, bytes, false);
      session.end_pass();
    }
    const fc::CounterPassResult pass = session.end();
    ASSERT_TRUE(pass.status.ok()) << c.name << ": " << pass.status.describe();
    ASSERT_EQ(pass.kernels.size(), 2u) << c.name;
    const double first = pass.value(0, m::kDramRead), second = pass.value(1, m::kDramRead);
    std::printf("%-24s %.1f MB buffer: DRAM read %.2f MB (evict-last read), %.2f MB (again)\n",
                c.name, static_cast<double>(bytes) / 1e6, first / 1e6, second / 1e6);
    if (c.sweep)
      EXPECT_GT(second, 0.9 * static_cast<double>(bytes)) << c.name;
    else
      EXPECT_LT(second, 0.5 * static_cast<double>(bytes)) << c.name;
  }
  cudaFree(buffer);
}
