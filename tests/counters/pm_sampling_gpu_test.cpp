// Counters over time on a real GPU: during a long copy the sampled DRAM bandwidth must sit near
// what the copy achieves, and samples must line up with CUPTI's kernel records in time.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fusionscope/counters/calibration.h"
#include "fusionscope/counters/metric_names.h"
#include "fusionscope/counters/pm_sampler.h"
#include "gpu_guard.h"

namespace fc = fusionscope::counters;
namespace m = fusionscope::counters::metric;

namespace {

#define SKIP_IF_NO_SAMPLING(status)                              \
  do {                                                           \
    const auto a = (status).availability;                        \
    if (a == fc::CounterAvailability::kInsufficientPrivileges || \
        a == fc::CounterAvailability::kNotSupported)             \
      FUSIONSCOPE_GPU_TEST_CANNOT_RUN((status).describe());      \
  } while (0)

// Bytes per second the copy achieves, timed with events (median of 15 launches).
double copy_bandwidth(fc::CopyWorkload& copy) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ms;
  for (int i = 0; i < 18; ++i) {
    cudaEventRecord(a);
    copy.launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    if (i >= 3) ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return static_cast<double>(copy.bytes_moved()) / (ms[ms.size() / 2] * 1e-3);
}

double bandwidth_of(const fc::PmSamplingResult& r, const fc::PmSample& s) {
  return s.values[r.metric_index(m::kSampleDramRead)] +
         s.values[r.metric_index(m::kSampleDramWrite)];
}

// Kernel records from CUPTI activity tracing, on the activity clock.
struct KernelSpan {
  int64_t start, end;
};
std::mutex g_mutex;
std::vector<KernelSpan> g_kernels;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = size_t{4} << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      std::lock_guard<std::mutex> lock(g_mutex);
      g_kernels.push_back({static_cast<int64_t>(k->start), static_cast<int64_t>(k->end)});
    }
  }
  std::free(buffer);
}

}  // namespace

TEST(PmSamplingGpu, MeanDramBandwidthDuringALongCopyIsNearWhatTheCopyAchieves) {
  FUSIONSCOPE_REQUIRE_GPU();
  fc::CopyWorkload copy(size_t{1} << 30);
  const double achieved = copy_bandwidth(copy);
  fc::PmSamplingOptions options;
  options.interval_ns = 5000;
  const auto r = fc::sample_during(
      [&] {
        // About 75 ms of copies: within what CUPTI 13.0 keeps of a 5 us series before its
        // buffer overflows (docs/counters.md), so the series must cover the whole busy window.
        for (int i = 0; i < 100; ++i) copy.launch();
      },
      options);
  SKIP_IF_NO_SAMPLING(r.status);
  ASSERT_TRUE(r.status.ok()) << r.status.describe();
  ASSERT_GE(r.metric_index(m::kSampleDramRead), 0);
  ASSERT_GE(r.metric_index(m::kSampleDramWrite), 0);
  // The series must be complete while the copies run (checked below); CUPTI may still report an
  // overflow of its hardware buffer later (docs/counters.md).
  if (r.hardware_overflow) std::printf("note: CUPTI reported a hardware buffer overflow\n");

  // The busy window: from the first to the last sample above a quarter of the copy's bandwidth.
  size_t first = r.samples.size(), last = 0;
  for (size_t i = 0; i < r.samples.size(); ++i) {
    if (bandwidth_of(r, r.samples[i]) > 0.25 * achieved) {
      first = std::min(first, i);
      last = i;
    }
  }
  ASSERT_LT(first + 10, last) << r.samples.size() << " samples, none busy";
  double sum = 0, sm_active = 0;
  size_t n = 0;
  for (size_t i = first + 2; i + 2 <= last; ++i) {
    sum += bandwidth_of(r, r.samples[i]);
    sm_active += r.samples[i].values[r.metric_index(m::kSampleSmActivePct)];
    ++n;
  }
  const double mean = sum / static_cast<double>(n);
  const double window_ns = static_cast<double>(r.samples[last].end_ns - r.samples[first].start_ns);
  std::vector<int64_t> widths;
  for (const auto& s : r.samples) widths.push_back(s.end_ns - s.start_ns);
  std::sort(widths.begin(), widths.end());
  std::printf(
      "copy achieves %.1f GB/s (events); sampled mean %.1f GB/s over %zu samples "
      "(%.0f us busy, median sample %lld ns, %zu samples in all); SM active %.1f%%\n",
      achieved * 1e-9, mean * 1e-9, n, window_ns * 1e-3,
      static_cast<long long>(widths[widths.size() / 2]), r.samples.size(),
      sm_active / static_cast<double>(n));
  EXPECT_NEAR(mean, achieved, 0.10 * achieved);
  const double interval = static_cast<double>(options.interval_ns);
  EXPECT_NEAR(static_cast<double>(widths[widths.size() / 2]), interval, 0.2 * interval);
  EXPECT_GT(static_cast<double>(last - first), 0.8 * window_ns / interval);
}

TEST(PmSamplingGpu, SamplesLineUpWithKernelRecordsOnTheActivityClock) {
  FUSIONSCOPE_REQUIRE_GPU();
  fc::CopyWorkload copy(size_t{1} << 30);
  const double achieved = copy_bandwidth(copy);
  const auto clock = fc::measure_gpu_clock_offset();
  ASSERT_TRUE(clock.ok) << clock.error;
  std::printf("CUPTI clock - GPU global timer: %lld ns +- %lld ns\n",
              static_cast<long long>(clock.offset_ns),
              static_cast<long long>(clock.uncertainty_ns));

  g_kernels.clear();
  ASSERT_EQ(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  fc::PmSamplingOptions options;
  options.interval_ns = 5000;
  options.clock_offset_ns = clock.offset_ns;  // measured before tracing: no probe kernels traced
  const auto r = fc::sample_during(
      [&] {
        for (int i = 0; i < 8; ++i) {  // busy ~0.7 ms, idle ~1 ms, eight times
          copy.launch();
          cudaDeviceSynchronize();
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      },
      options);
  cuptiActivityFlushAll(1);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  SKIP_IF_NO_SAMPLING(r.status);
  ASSERT_TRUE(r.status.ok()) << r.status.describe();
  EXPECT_EQ(r.clock_mapping.find("unverified"), std::string::npos) << r.clock_mapping;
  std::vector<KernelSpan> kernels;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    kernels = g_kernels;
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const KernelSpan& a, const KernelSpan& b) { return a.start < b.start; });
  ASSERT_EQ(kernels.size(), 8u);
  ASSERT_FALSE(r.samples.empty());
  std::printf(
      "%zu samples from %lld to %lld (%s, offset %lld applied); kernels from %lld to "
      "%lld\n",
      r.samples.size(), static_cast<long long>(r.samples.front().start_ns),
      static_cast<long long>(r.samples.back().end_ns), r.clock_mapping.c_str(),
      static_cast<long long>(r.clock_offset_ns), static_cast<long long>(kernels.front().start),
      static_cast<long long>(kernels.back().end));
  {  // busy stretches as sampled, relative to the first kernel's start
    int shown = 0;
    for (size_t i = 0; i < r.samples.size() && shown < 10; ++i) {
      if (bandwidth_of(r, r.samples[i]) <= 0.5 * achieved) continue;
      size_t j = i;
      while (j + 1 < r.samples.size() && bandwidth_of(r, r.samples[j + 1]) > 0.5 * achieved) ++j;
      std::printf("  busy samples %zu..%zu: %+.1f .. %+.1f us\n", i, j,
                  static_cast<double>(r.samples[i].start_ns - kernels.front().start) * 1e-3,
                  static_cast<double>(r.samples[j].end_ns - kernels.front().start) * 1e-3);
      ++shown;
      i = j;
    }
    for (size_t k = 0; k < kernels.size(); ++k) {
      std::printf("  kernel %zu: %+.1f .. %+.1f us\n", k,
                  static_cast<double>(kernels[k].start - kernels.front().start) * 1e-3,
                  static_cast<double>(kernels[k].end - kernels.front().start) * 1e-3);
    }
  }

  // For each kernel: the first sample above half the copy's bandwidth, relative to its start,
  // and the last one, relative to its end. A kernel the sampler reports lost (a gap: its decode
  // at stop ran out of time on a slow host, and once the tail of the series, kernel 7 and all)
  // has nothing to line up; most must.
  const int64_t margin = 4 * static_cast<int64_t>(options.interval_ns);
  size_t checked = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const auto& span = kernels[k];
    const int64_t idle_until = k + 1 < kernels.size() ? kernels[k + 1].start : span.end + 900'000;
    const bool lost = std::any_of(r.gaps.begin(), r.gaps.end(), [&](const fc::PmGap& g) {
      return g.start_ns < idle_until && g.end_ns > span.start - 300'000;
    });
    if (lost) {
      std::printf("kernel %zu: in a gap the sampler reported, not lined up\n", k);
      continue;
    }
    ++checked;
    double busy = 0, idle = 0;
    size_t busy_n = 0, idle_n = 0;
    int64_t rise = INT64_MAX, fall = INT64_MIN;
    const int64_t idle_end = k + 1 < kernels.size() ? kernels[k + 1].start : span.end + 900'000;
    for (const auto& s : r.samples) {
      const int64_t mid = s.start_ns + (s.end_ns - s.start_ns) / 2;
      const double bw = bandwidth_of(r, s);
      if (mid > span.start - 300'000 && mid < span.end + 300'000 && bw > 0.5 * achieved) {
        rise = std::min(rise, s.start_ns - span.start);
        fall = std::max(fall, s.end_ns - span.end);
      }
      if (mid > span.start + margin && mid < span.end - margin) {
        busy += bw;
        ++busy_n;
      } else if (mid > span.end + margin + 20'000 && mid < idle_end - margin - 20'000) {
        idle += bw;
        ++idle_n;
      }
    }
    busy /= static_cast<double>(std::max<size_t>(busy_n, 1));
    idle /= static_cast<double>(std::max<size_t>(idle_n, 1));
    std::printf(
        "kernel %zu: %.1f us; busy %.0f GB/s, idle %.0f GB/s; first busy sample starts "
        "%+.1f us from the kernel start, last ends %+.1f us from its end\n",
        k, static_cast<double>(span.end - span.start) * 1e-3, busy * 1e-9, idle * 1e-9,
        static_cast<double>(rise) * 1e-3, static_cast<double>(fall) * 1e-3);
    EXPECT_GT(busy_n, 0u);
    EXPECT_GT(idle_n, 0u);
    EXPECT_GT(busy, 0.6 * achieved) << "kernel " << k;
    EXPECT_LT(idle, 0.1 * achieved) << "kernel " << k;
    EXPECT_LT(std::abs(rise), 20'000) << "kernel " << k;
    EXPECT_LT(std::abs(fall), 20'000) << "kernel " << k;
  }
  EXPECT_GE(checked, kernels.size() - 2) << "the sampler lost most of the kernels";
}

TEST(PmSamplingGpu, TensorPipeIsBusyDuringGemms) {
  FUSIONSCOPE_REQUIRE_GPU();
  fc::GemmWorkload gemm(8192, 8192, 8192);
  const auto r = fc::sample_during([&] {
    for (int i = 0; i < 40; ++i) gemm.launch();
  });
  SKIP_IF_NO_SAMPLING(r.status);
  ASSERT_TRUE(r.status.ok()) << r.status.describe();
  const int tensor = r.metric_index(m::kSampleTensorActivePct);
  ASSERT_GE(tensor, 0);
  double peak = 0, sum = 0;
  size_t n = 0;
  for (const auto& s : r.samples) {
    peak = std::max(peak, s.values[tensor]);
    if (s.values[tensor] > 10.0) {
      sum += s.values[tensor];
      ++n;
    }
  }
  ASSERT_GT(n, 0u);
  std::printf("tensor pipe during GEMMs: mean %.1f%% over %zu busy samples, peak %.1f%%\n",
              sum / static_cast<double>(n), n, peak);
  EXPECT_GT(sum / static_cast<double>(n), 50.0);
  EXPECT_LE(peak, 100.5);
}

namespace {

void print_times(const fc::PmSamplingResult& r, double seconds) {
  std::printf(
      "%.1f s at %llu us: %zu samples; %zu gaps, %.3f ms lost; overflow %d; stop took %.3f s "
      "(decode in progress %.3f, the rest %.3f, evaluation %.3f, release %.3f); decode %.3f s in "
      "%zu calls (longest %.3f), evaluation %.3f s over %zu images\n",
      seconds, static_cast<unsigned long long>(r.interval_ns / 1000), r.samples.size(),
      r.gaps.size(), static_cast<double>(r.lost_ns()) * 1e-6, r.hardware_overflow ? 1 : 0,
      r.times.stop_s, r.times.stop_join_s, r.times.stop_decode_s, r.times.stop_evaluate_s,
      r.times.stop_release_s, r.times.decode_s, r.times.decode_calls, r.times.decode_longest_s,
      r.times.evaluate_s, r.times.images);
  for (size_t i = 0; i < r.gaps.size() && i < 8; ++i)
    std::printf("  lost %.3f ms from %.3f ms after the start\n",
                static_cast<double>(r.gaps[i].end_ns - r.gaps[i].start_ns) * 1e-6,
                static_cast<double>(r.gaps[i].start_ns - r.started_ns) * 1e-6);
}

}  // namespace

// Two seconds of a copy loop sampled every 10 us with `metrics`.
fc::PmSamplingResult sample_two_seconds(const std::vector<std::string>& metrics) {
  fc::CopyWorkload copy(size_t{1} << 30);
  copy.launch();
  fc::PmSamplingOptions options;
  options.interval_ns = 10'000;
  options.metrics = metrics;
  fc::PmSampler sampler(options);
  fc::PmSamplingResult r;
  r.status = sampler.start();
  if (!r.status.ok()) return r;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) {
    for (int i = 0; i < 10; ++i) copy.launch();
    cudaDeviceSynchronize();
  }
  return sampler.stop();
}

// Stopping waits for the decode in progress at most, then takes well under a second; and every
// interval from the first sample to the stop is either a sample or a reported gap, so a series
// that lost samples says exactly when. One CUPTI decode cannot be cut short, and its length is
// CUPTI's: on an H200 one of the default metrics' took 1.16 s, where the H100's took under 0.4.
void expect_kept_or_accounted_for(const fc::PmSamplingResult& r) {
  print_times(r, 2.0);
  ASSERT_FALSE(r.samples.empty());
  EXPECT_LE(r.times.stop_join_s, r.times.decode_longest_s + 0.05);
  EXPECT_LT(r.times.stop_s - r.times.stop_join_s, 1.0);
  // Samples and gaps tile the time from the first sample to the last one (or to the stop).
  int64_t covered = 0;
  for (const auto& s : r.samples) covered += s.end_ns - s.start_ns;
  const int64_t span =
      std::max(r.samples.back().end_ns, r.gaps.empty() ? 0 : r.gaps.back().end_ns) -
      r.samples.front().start_ns;
  std::printf("covered by samples %.3f ms + gaps %.3f ms of %.3f ms\n",
              static_cast<double>(covered) * 1e-6, static_cast<double>(r.lost_ns()) * 1e-6,
              static_cast<double>(span) * 1e-6);
  EXPECT_NEAR(static_cast<double>(covered + r.lost_ns()), static_cast<double>(span),
              0.01 * static_cast<double>(span));
  // Sampling ran for the whole loop: at least 2 s between the first sample and the stop.
  EXPECT_GT(static_cast<double>(r.stopped_ns - r.samples.front().start_ns), 1.9e9);
  if (r.gaps.empty()) {
    EXPECT_GT(r.samples.size(), 190'000u);
  }
}

// The default metrics (DRAM, SM and tensor activity): on an H100 with CUPTI 13.0 their samples
// decode slower than 10 us apiece, so samples are lost, and the gaps say where.
TEST(PmSamplingGpu, TwoSecondsAtTenMicrosecondsAreKeptOrAccountedFor) {
  FUSIONSCOPE_REQUIRE_GPU();
  const fc::PmSamplingResult r = sample_two_seconds(fc::default_sample_metrics());
  SKIP_IF_NO_SAMPLING(r.status);
  ASSERT_TRUE(r.status.ok()) << r.status.describe();
  expect_kept_or_accounted_for(r);
}

// DRAM bytes alone decode fast enough for 10 us: (nearly) every sample is kept.
TEST(PmSamplingGpu, DramBytesAtTenMicrosecondsKeepUpForTwoSeconds) {
  FUSIONSCOPE_REQUIRE_GPU();
  const fc::PmSamplingResult r = sample_two_seconds(fc::dram_sample_metrics());
  SKIP_IF_NO_SAMPLING(r.status);
  ASSERT_TRUE(r.status.ok()) << r.status.describe();
  expect_kept_or_accounted_for(r);
  const double span = static_cast<double>(r.samples.back().end_ns - r.samples.front().start_ns);
  EXPECT_LT(static_cast<double>(r.lost_ns()), 0.05 * span);
}
