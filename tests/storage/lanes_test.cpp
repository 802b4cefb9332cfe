// Lanes, range depth and extent, from arrange_run() directly and through load_run().
#include <gtest/gtest.h>

#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace fusionscope::storage {
namespace {

KernelRecord kernel(uint32_t device, uint32_t stream, int64_t start, int64_t end) {
  KernelRecord k;
  k.device = device;
  k.stream = stream;
  k.start_ns = start;
  k.end_ns = end;
  return k;
}

MemopRecord memop(uint32_t device, uint32_t stream, int64_t start, int64_t end) {
  MemopRecord m;
  m.device = device;
  m.stream = stream;
  m.start_ns = start;
  m.end_ns = end;
  return m;
}

RangeRecord range(uint32_t thread, int64_t start, int64_t end, RangeKind kind = RangeKind::kNvtx) {
  RangeRecord r;
  r.thread_id = thread;
  r.start_ns = start;
  r.end_ns = end;
  r.kind = kind;
  return r;
}

ApiCallRecord api(uint32_t thread, int64_t start, int64_t end) {
  ApiCallRecord a;
  a.thread_id = thread;
  a.start_ns = start;
  a.end_ns = end;
  return a;
}

RunData sample_run_data() {
  RunData d;
  d.kernels = {kernel(1, 7, 500, 600), kernel(0, 13, 300, 400), kernel(0, 7, 200, 250),
               kernel(0, 7, 100, 150), kernel(0, 13, 50, 60)};
  d.memops = {memop(2, 3, 700, 900), memop(0, 13, 10, 20)};
  d.api_calls = {api(20, 5, 6), api(10, 30, 40), api(10, 1, 2)};
  d.ranges = {
      // thread 10: A contains B contains C; D inside A; E starts where A ends (not inside).
      range(10, 0, 100),    // A depth 0
      range(10, 20, 30),    // C depth 2 (listed before B on purpose)
      range(10, 10, 50),    // B depth 1
      range(10, 60, 90),    // D depth 1
      range(10, 100, 110),  // E depth 0
      // thread 10: equal starts, the longer is the parent.
      range(10, 200, 250),  // G depth 1
      range(10, 200, 300),  // F depth 0
      // thread 10: partial overlap stacks too.
      range(10, 400, 500),  // H depth 0
      range(10, 450, 600),  // I depth 1
      // thread 20: a GPU annotation overlapping a CPU range nests only among its own kind.
      range(20, 0, 1000, RangeKind::kCpuOp),           // depth 0
      range(20, 100, 200, RangeKind::kGpuAnnotation),  // depth 0
      range(20, 120, 150, RangeKind::kGpuAnnotation),  // depth 1
      range(20, 130, 140, RangeKind::kCpuOp),          // depth 1
  };
  SampleRecord s;
  s.t_ns = 5000;
  d.samples = {s};
  d.strings = {""};
  return d;
}

void expect_arranged(const RunData& d) {
  ASSERT_EQ(d.gpu_lanes.size(), 4u);
  // (0,7): two kernels; (0,13): two kernels and a memcpy; (1,7): one kernel; (2,3): one memop.
  const GpuLane& l0 = d.gpu_lanes[0];
  EXPECT_EQ(std::tie(l0.device, l0.stream), std::make_tuple(0u, 7u));
  EXPECT_EQ(std::tie(l0.kernel_begin, l0.kernel_end, l0.memop_begin, l0.memop_end),
            std::make_tuple(0u, 2u, 0u, 0u));
  const GpuLane& l1 = d.gpu_lanes[1];
  EXPECT_EQ(std::tie(l1.device, l1.stream), std::make_tuple(0u, 13u));
  EXPECT_EQ(std::tie(l1.kernel_begin, l1.kernel_end, l1.memop_begin, l1.memop_end),
            std::make_tuple(2u, 4u, 0u, 1u));
  const GpuLane& l2 = d.gpu_lanes[2];
  EXPECT_EQ(std::tie(l2.device, l2.stream), std::make_tuple(1u, 7u));
  EXPECT_EQ(std::tie(l2.kernel_begin, l2.kernel_end, l2.memop_begin, l2.memop_end),
            std::make_tuple(4u, 5u, 1u, 1u));
  const GpuLane& l3 = d.gpu_lanes[3];
  EXPECT_EQ(std::tie(l3.device, l3.stream), std::make_tuple(2u, 3u));
  EXPECT_EQ(std::tie(l3.kernel_begin, l3.kernel_end, l3.memop_begin, l3.memop_end),
            std::make_tuple(5u, 5u, 1u, 2u));
  EXPECT_EQ(d.kernels[0].start_ns, 100);
  EXPECT_EQ(d.kernels[1].start_ns, 200);
  EXPECT_EQ(d.kernels[2].start_ns, 50);

  ASSERT_EQ(d.cpu_lanes.size(), 2u);
  const CpuLane& t10 = d.cpu_lanes[0];
  EXPECT_EQ(t10.thread_id, 10u);
  EXPECT_EQ(std::tie(t10.api_begin, t10.api_end, t10.range_begin, t10.range_end),
            std::make_tuple(0u, 2u, 0u, 9u));
  EXPECT_EQ(t10.max_depth, 2);
  EXPECT_EQ(d.api_calls[0].start_ns, 1);
  const CpuLane& t20 = d.cpu_lanes[1];
  EXPECT_EQ(t20.thread_id, 20u);
  EXPECT_EQ(std::tie(t20.api_begin, t20.api_end, t20.range_begin, t20.range_end),
            std::make_tuple(2u, 3u, 9u, 13u));
  EXPECT_EQ(t20.max_depth, 1);

  std::vector<std::tuple<int64_t, int64_t, int>> got;
  for (const RangeRecord& r : d.ranges) got.emplace_back(r.start_ns, r.end_ns, r.depth);
  const std::vector<std::tuple<int64_t, int64_t, int>> expected = {
      {0, 100, 0},   {10, 50, 1},   {20, 30, 2},   {60, 90, 1},   {100, 110, 0},
      {200, 300, 0}, {200, 250, 1}, {400, 500, 0}, {450, 600, 1}, {0, 1000, 0},
      {100, 200, 0}, {120, 150, 1}, {130, 140, 1}};
  EXPECT_EQ(got, expected);
  EXPECT_EQ(d.begin_ns, 0);
  EXPECT_EQ(d.end_ns, 5000);
}

TEST(StoreLanes, ArrangeRunBuildsLanesDepthsAndExtent) {
  RunData d = sample_run_data();
  arrange_run(d);
  expect_arranged(d);
  // Arranging again changes nothing.
  RunData again = d;
  arrange_run(again);
  EXPECT_EQ(again.ranges, d.ranges);
  EXPECT_EQ(again.kernels, d.kernels);
  EXPECT_EQ(again.gpu_lanes.size(), d.gpu_lanes.size());
}

TEST(StoreLanes, LoadRunArrangesWhatWasStored) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  SessionStore store = SessionStore::create(path, SessionInfo{});
  RunWriter writer(store, RunInfo{});
  const RunData d = sample_run_data();
  writer.add_kernels(d.kernels);
  writer.add_memops(d.memops);
  writer.add_api_calls(d.api_calls);
  writer.add_ranges(d.ranges);
  writer.add_samples(d.samples);
  writer.commit();
  expect_arranged(store.load_run(writer.id()));
}

TEST(StoreLanes, EmptyRunHasNoLanesAndZeroExtent) {
  RunData d;
  arrange_run(d);
  EXPECT_TRUE(d.gpu_lanes.empty());
  EXPECT_TRUE(d.cpu_lanes.empty());
  EXPECT_EQ(d.begin_ns, 0);
  EXPECT_EQ(d.end_ns, 0);
  EXPECT_EQ(d.str(5), "");  // no string table at all: still safe
}

}  // namespace
}  // namespace fusionscope::storage
