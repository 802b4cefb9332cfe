// Sorting a run's records into lanes, and deriving range depth by nesting.
#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::storage {

namespace {

template <typename R>
bool by_gpu_lane(const R& a, const R& b) {
  return std::tie(a.pid, a.device, a.stream, a.start_ns, a.end_ns, a.correlation_id) <
         std::tie(b.pid, b.device, b.stream, b.start_ns, b.end_ns, b.correlation_id);
}

template <typename R>
auto gpu_lane_of(const R& r) {
  return std::tie(r.pid, r.device, r.stream);
}
template <typename R>
auto cpu_lane_of(const R& r) {
  return std::tie(r.pid, r.thread_id);
}

uint32_t index(size_t i) {
  return static_cast<uint32_t>(i);
}

void build_gpu_lanes(RunData& run) {
  const auto& k = run.kernels;
  const auto& m = run.memops;
  size_t ki = 0, mi = 0;
  while (ki < k.size() || mi < m.size()) {
    // The next lane is the smaller (pid, device, stream) of the two heads.
    const bool take_kernel =
        mi == m.size() || (ki < k.size() && gpu_lane_of(k[ki]) <= gpu_lane_of(m[mi]));
    GpuLane lane;
    lane.pid = take_kernel ? k[ki].pid : m[mi].pid;
    lane.device = take_kernel ? k[ki].device : m[mi].device;
    lane.stream = take_kernel ? k[ki].stream : m[mi].stream;
    const auto key = std::make_tuple(lane.pid, lane.device, lane.stream);
    lane.kernel_begin = index(ki);
    while (ki < k.size() && gpu_lane_of(k[ki]) == key) ++ki;
    lane.kernel_end = index(ki);
    lane.memop_begin = index(mi);
    while (mi < m.size() && gpu_lane_of(m[mi]) == key) ++mi;
    lane.memop_end = index(mi);
    run.gpu_lanes.push_back(lane);
  }
}

// Depth by nesting within one lane: a range is one deeper than the open ranges that still
// contain its start. GPU annotations (thread_id holds a stream) nest among themselves only.
uint16_t assign_depths(std::vector<RangeRecord>& ranges, size_t begin, size_t end) {
  std::vector<int64_t> open_cpu, open_gpu;
  uint16_t max_depth = 0;
  for (size_t i = begin; i < end; ++i) {
    RangeRecord& r = ranges[i];
    auto& open = r.kind == RangeKind::kGpuAnnotation ? open_gpu : open_cpu;
    while (!open.empty() && open.back() <= r.start_ns) open.pop_back();
    r.depth =
        static_cast<uint16_t>(std::min<size_t>(open.size(), std::numeric_limits<uint16_t>::max()));
    max_depth = std::max(max_depth, r.depth);
    open.push_back(r.end_ns);
  }
  return max_depth;
}

void build_cpu_lanes(RunData& run) {
  const auto& a = run.api_calls;
  auto& r = run.ranges;
  size_t ai = 0, ri = 0;
  while (ai < a.size() || ri < r.size()) {
    const bool take_api =
        ri == r.size() || (ai < a.size() && cpu_lane_of(a[ai]) <= cpu_lane_of(r[ri]));
    CpuLane lane;
    lane.pid = take_api ? a[ai].pid : r[ri].pid;
    lane.thread_id = take_api ? a[ai].thread_id : r[ri].thread_id;
    const auto key = std::make_tuple(lane.pid, lane.thread_id);
    lane.api_begin = index(ai);
    while (ai < a.size() && cpu_lane_of(a[ai]) == key) ++ai;
    lane.api_end = index(ai);
    lane.range_begin = index(ri);
    while (ri < r.size() && cpu_lane_of(r[ri]) == key) ++ri;
    lane.range_end = index(ri);
    lane.max_depth = assign_depths(r, lane.range_begin, lane.range_end);
    run.cpu_lanes.push_back(lane);
  }
}

void compute_extent(RunData& run) {
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  auto span = [&](int64_t s, int64_t e) {
    lo = std::min(lo, s);
    hi = std::max(hi, e);
  };
  for (const auto& x : run.kernels) span(x.start_ns, x.end_ns);
  for (const auto& x : run.memops) span(x.start_ns, x.end_ns);
  for (const auto& x : run.api_calls) span(x.start_ns, x.end_ns);
  for (const auto& x : run.ranges) span(x.start_ns, x.end_ns);
  for (const auto& x : run.samples) span(x.t_ns, x.t_ns);
  if (lo > hi) lo = hi = 0;
  run.begin_ns = lo;
  run.end_ns = hi;
}

template <typename T, typename Less>
void sort_if_needed(std::vector<T>& v, Less less) {
  // Captures usually arrive in order already; checking is much cheaper than sorting.
  if (!std::is_sorted(v.begin(), v.end(), less)) std::stable_sort(v.begin(), v.end(), less);
}

}  // namespace

void arrange_run(RunData& run) {
  sort_if_needed(run.kernels, by_gpu_lane<KernelRecord>);
  sort_if_needed(run.memops, by_gpu_lane<MemopRecord>);
  sort_if_needed(run.api_calls, [](const ApiCallRecord& a, const ApiCallRecord& b) {
    return std::tie(a.pid, a.thread_id, a.start_ns, a.end_ns) <
           std::tie(b.pid, b.thread_id, b.start_ns, b.end_ns);
  });
  // Longer first on equal starts, so that a parent precedes the children it contains.
  sort_if_needed(run.ranges, [](const RangeRecord& a, const RangeRecord& b) {
    return std::tie(a.pid, a.thread_id, a.start_ns, b.end_ns) <
           std::tie(b.pid, b.thread_id, b.start_ns, a.end_ns);
  });
  sort_if_needed(run.kernel_metrics, [](const KernelMetricRecord& a, const KernelMetricRecord& b) {
    return a.correlation_id < b.correlation_id;
  });
  sort_if_needed(run.samples, [](const SampleRecord& a, const SampleRecord& b) {
    return std::tie(a.metric, a.t_ns) < std::tie(b.metric, b.t_ns);
  });
  sort_if_needed(run.processes,
                 [](const ProcessRecord& a, const ProcessRecord& b) { return a.pid < b.pid; });
  sort_if_needed(run.threads, [](const ThreadRecord& a, const ThreadRecord& b) {
    return std::tie(a.pid, a.thread_id) < std::tie(b.pid, b.thread_id);
  });
  sort_if_needed(run.extras,
                 [](const RunExtraRecord& a, const RunExtraRecord& b) { return a.key < b.key; });
  run.gpu_lanes.clear();
  run.cpu_lanes.clear();
  build_gpu_lanes(run);
  build_cpu_lanes(run);
  compute_extent(run);
}

}  // namespace fusionscope::storage
