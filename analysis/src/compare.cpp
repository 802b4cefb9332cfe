#include "fusionscope/analysis/compare.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>

#include "iteration_ranges.h"

namespace fusionscope::analysis {

namespace {

struct OpKernels {
  std::vector<KernelGroup> kernels;  // in order of first appearance
  int64_t total_ns = 0;
  uint64_t count = 0;
};

// Kernels of a run grouped by op, then by kernel name; ops in order of first appearance.
std::vector<std::pair<std::string, OpKernels>> group_by_op(const storage::RunData& run) {
  // Timed iterations only, when they can be told apart (see timed_kernel_mask).
  const std::vector<bool> mask = timed_kernel_mask(run);
  // Kernels are sorted per stream; order of appearance is by start time across streams.
  std::vector<uint32_t> order;
  order.reserve(run.kernels.size());
  for (uint32_t i = 0; i < run.kernels.size(); ++i)
    if (mask.empty() || mask[i]) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return run.kernels[a].start_ns < run.kernels[b].start_ns;
  });
  std::vector<std::pair<std::string, OpKernels>> ops;
  std::unordered_map<storage::StringId, size_t> op_slot;
  std::vector<std::unordered_map<storage::StringId, size_t>> kernel_slot;
  for (uint32_t i : order) {
    const storage::KernelRecord& k = run.kernels[i];
    const int64_t d = k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
    auto [op_it, new_op] = op_slot.try_emplace(k.op, ops.size());
    if (new_op) {
      ops.emplace_back(run.str(k.op), OpKernels{});
      kernel_slot.emplace_back();
    }
    OpKernels& op = ops[op_it->second].second;
    auto [k_it, new_kernel] = kernel_slot[op_it->second].try_emplace(k.name, op.kernels.size());
    if (new_kernel) op.kernels.push_back({run.str(k.name), 0, 0});
    KernelGroup& g = op.kernels[k_it->second];
    ++g.count;
    g.total_ns += d;
    ++op.count;
    op.total_ns += d;
  }
  return ops;
}

std::optional<double> ratio(double a, double b) {
  if (!(b > 0)) return std::nullopt;
  return a / b;
}

std::string_view without_counter(std::string_view name) {
  while (!name.empty() && (std::isdigit(static_cast<unsigned char>(name.back())) ||
                           name.back() == '#' || name.back() == ' '))
    name.remove_suffix(1);
  return name;
}

}  // namespace

RunComparison compare_runs(const storage::RunData& a, const storage::RunData& b) {
  RunComparison c;
  c.a = summarize(a);
  c.b = summarize(b);
  c.kernel_time_speedup =
      ratio(c.a.kernel_time_per_iteration_ns(), c.b.kernel_time_per_iteration_ns());
  c.wall_speedup = ratio(c.a.wall_per_iteration_ns(), c.b.wall_per_iteration_ns());

  auto ops_a = group_by_op(a);
  auto ops_b = group_by_op(b);
  std::map<std::string, size_t> b_slot;
  for (size_t i = 0; i < ops_b.size(); ++i) b_slot.emplace(ops_b[i].first, i);
  std::vector<bool> b_used(ops_b.size(), false);
  for (auto& [name, op] : ops_a) {
    OpDiff d;
    d.op = name;
    d.a = std::move(op.kernels);
    d.a_total_ns = op.total_ns;
    d.a_count = op.count;
    if (auto it = b_slot.find(name); it != b_slot.end()) {
      OpKernels& other = ops_b[it->second].second;
      d.presence = Presence::kBoth;
      d.b = std::move(other.kernels);
      d.b_total_ns = other.total_ns;
      d.b_count = other.count;
      b_used[it->second] = true;
    } else {
      d.presence = Presence::kOnlyA;
    }
    c.ops.push_back(std::move(d));
  }
  for (size_t i = 0; i < ops_b.size(); ++i) {
    if (b_used[i]) continue;
    OpDiff d;
    d.op = ops_b[i].first;
    d.presence = Presence::kOnlyB;
    d.b = std::move(ops_b[i].second.kernels);
    d.b_total_ns = ops_b[i].second.total_ns;
    d.b_count = ops_b[i].second.count;
    c.ops.push_back(std::move(d));
  }
  return c;
}

std::vector<int64_t> iteration_starts(const storage::RunData& run) {
  // The runner's "iteration N" ranges: the timed ones, in order of N.
  std::vector<std::pair<long, int64_t>> numbered;
  bool runner_ranges = false;
  for (const storage::RangeRecord& r : run.ranges) {
    const long n = detail::iteration_number(run.str(r.name));
    if (n < 0) continue;
    runner_ranges = true;
    if (n >= run.info.warmup) numbered.emplace_back(n, r.start_ns);
  }
  if (runner_ranges) {
    std::sort(numbered.begin(), numbered.end());
    std::vector<int64_t> out;
    for (const auto& [n, start] : numbered) out.push_back(start);
    return out;
  }
  // Otherwise the most repeated top-level range (a framework's "ProfilerStep#N", ...).
  std::map<std::string_view, std::vector<int64_t>> by_name;
  std::map<std::string_view, int64_t> first_seen;
  for (const storage::RangeRecord& r : run.ranges) {
    if (r.depth != 0) continue;
    const std::string_view name = without_counter(run.str(r.name));
    if (name.empty()) continue;
    by_name[name].push_back(r.start_ns);
    auto [it, inserted] = first_seen.try_emplace(name, r.start_ns);
    if (!inserted) it->second = std::min(it->second, r.start_ns);
  }
  const std::vector<int64_t>* best = nullptr;
  std::string_view best_name;
  for (const auto& [name, starts] : by_name) {
    if (starts.size() < 2) continue;
    if (!best || starts.size() > best->size() ||
        (starts.size() == best->size() && first_seen[name] < first_seen[best_name])) {
      best = &starts;
      best_name = name;
    }
  }
  if (!best) return {};
  std::vector<int64_t> out = *best;
  std::sort(out.begin(), out.end());
  return out;
}

int64_t alignment_origin(const storage::RunData& run, Alignment alignment, int iteration) {
  if (run.kernels.empty() || alignment == Alignment::kRunStart) return run.begin_ns;
  // First kernel starting at or after t, across streams (each stream is sorted by start).
  auto first_kernel_from = [&](int64_t t) -> std::optional<int64_t> {
    std::optional<int64_t> best;
    auto consider = [&](uint32_t begin, uint32_t end) {
      if (begin >= end) return;
      const auto first = run.kernels.begin() + begin, last = run.kernels.begin() + end;
      auto it = std::lower_bound(
          first, last, t, [](const storage::KernelRecord& k, int64_t v) { return k.start_ns < v; });
      if (it != last && (!best || it->start_ns < *best)) best = it->start_ns;
    };
    if (run.gpu_lanes.empty()) {
      consider(0, static_cast<uint32_t>(run.kernels.size()));
    } else {
      for (const storage::GpuLane& lane : run.gpu_lanes)
        consider(std::min<uint32_t>(lane.kernel_begin, static_cast<uint32_t>(run.kernels.size())),
                 std::min<uint32_t>(lane.kernel_end, static_cast<uint32_t>(run.kernels.size())));
    }
    return best;
  };
  const std::optional<int64_t> first = first_kernel_from(std::numeric_limits<int64_t>::min());
  if (alignment == Alignment::kFirstKernel || iteration < 0) return first.value_or(run.begin_ns);
  const std::vector<int64_t> starts = iteration_starts(run);
  if (static_cast<size_t>(iteration) >= starts.size()) return first.value_or(run.begin_ns);
  return first_kernel_from(starts[static_cast<size_t>(iteration)])
      .value_or(first.value_or(run.begin_ns));
}

}  // namespace fusionscope::analysis
