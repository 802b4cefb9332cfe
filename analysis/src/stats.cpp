#include "fusionscope/analysis/stats.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "iteration_ranges.h"

namespace fusionscope::analysis {

namespace {

int64_t duration(int64_t start, int64_t end) {
  return end > start ? end - start : 0;
}

// Length of the union of [start, end) intervals.
int64_t union_length(std::vector<std::pair<int64_t, int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  int64_t total = 0;
  int64_t cur_begin = 0, cur_end = 0;
  bool open = false;
  for (const auto& [b, e] : intervals) {
    if (e <= b) continue;
    if (!open || b > cur_end) {
      if (open) total += cur_end - cur_begin;
      cur_begin = b;
      cur_end = e;
      open = true;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (open) total += cur_end - cur_begin;
  return total;
}

double per_iteration(double value, int iterations) {
  return iterations > 0 ? value / iterations : value;
}

// Groups kernels by `key_of(kernel)`; `other_of` names the second key counted in `distinct`.
template <class KeyOf, class OtherOf>
std::vector<KernelStat> group_kernels(const storage::RunData& run, const std::vector<bool>& mask,
                                      KeyOf key_of, OtherOf other_of) {
  std::unordered_map<storage::StringId, size_t> slot;
  std::vector<KernelStat> stats;
  std::vector<std::unordered_set<storage::StringId>> others;
  int64_t all = 0;
  const bool masked = mask.size() == run.kernels.size();
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    if (masked && !mask[i]) continue;
    const storage::KernelRecord& k = run.kernels[i];
    const int64_t d = duration(k.start_ns, k.end_ns);
    all += d;
    auto [it, inserted] = slot.try_emplace(key_of(k), stats.size());
    if (inserted) {
      KernelStat s;
      s.key = key_of(k);
      s.min_ns = std::numeric_limits<int64_t>::max();
      s.max_ns = 0;
      stats.push_back(s);
      others.emplace_back();
    }
    KernelStat& s = stats[it->second];
    ++s.count;
    s.total_ns += d;
    s.min_ns = std::min(s.min_ns, d);
    s.max_ns = std::max(s.max_ns, d);
    others[it->second].insert(other_of(k));
  }
  for (size_t i = 0; i < stats.size(); ++i) {
    KernelStat& s = stats[i];
    s.mean_ns = static_cast<double>(s.total_ns) / static_cast<double>(s.count);
    s.percent = all > 0 ? 100.0 * static_cast<double>(s.total_ns) / static_cast<double>(all) : 0.0;
    s.distinct = static_cast<uint32_t>(others[i].size());
  }
  std::stable_sort(stats.begin(), stats.end(), [](const KernelStat& a, const KernelStat& b) {
    return a.total_ns > b.total_ns;
  });
  return stats;
}

}  // namespace

std::vector<bool> timed_kernel_mask(const storage::RunData& run) {
  // Timed windows per (process, thread), sorted by start.
  std::unordered_map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> windows;
  bool any_iteration = false;
  for (const storage::RangeRecord& r : run.ranges) {
    const long n = detail::iteration_number(run.str(r.name));
    if (n < 0) continue;
    any_iteration = true;
    if (n >= run.info.warmup)
      windows[detail::thread_key(r.pid, r.thread_id)].emplace_back(r.start_ns, r.end_ns);
  }
  if (!any_iteration) return {};
  for (auto& [thread, w] : windows) std::sort(w.begin(), w.end());
  auto in_window = [&](uint64_t thread, int64_t t) {
    auto it = windows.find(thread);
    if (it == windows.end()) return false;
    const auto& w = it->second;
    auto up = std::upper_bound(w.begin(), w.end(),
                               std::make_pair(t, std::numeric_limits<int64_t>::max()));
    return up != w.begin() && std::prev(up)->second >= t;
  };
  std::unordered_map<uint32_t, bool>
      launched_timed;  // correlation id -> launched in a timed window
  launched_timed.reserve(run.api_calls.size());
  for (const storage::ApiCallRecord& a : run.api_calls)
    if (a.correlation_id != 0)
      launched_timed[a.correlation_id] =
          in_window(detail::thread_key(a.pid, a.thread_id), a.start_ns);
  std::vector<bool> mask(run.kernels.size(), false);
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    auto it = launched_timed.find(run.kernels[i].correlation_id);
    mask[i] = it != launched_timed.end() && it->second;
  }
  return mask;
}

double RunSummary::kernel_time_per_iteration_ns() const {
  return per_iteration(static_cast<double>(timed_kernel_time_ns), iterations);
}
double RunSummary::wall_per_iteration_ns() const {
  return per_iteration(static_cast<double>(wall_ns), iterations);
}
double RunSummary::kernels_per_iteration() const {
  return per_iteration(static_cast<double>(timed_kernels), iterations);
}

RunSummary summarize(const storage::RunData& run) {
  RunSummary s;
  s.kernels = run.kernels.size();
  s.memops = run.memops.size();
  s.api_calls = run.api_calls.size();
  s.ranges = run.ranges.size();
  std::vector<std::pair<int64_t, int64_t>> busy;
  busy.reserve(run.kernels.size() + run.memops.size());
  std::unordered_set<uint32_t> launches;
  uint64_t uncorrelated = 0;
  for (const storage::KernelRecord& k : run.kernels) {
    s.kernel_time_ns += duration(k.start_ns, k.end_ns);
    busy.emplace_back(k.start_ns, k.end_ns);
    if (k.correlation_id != 0)
      launches.insert(k.correlation_id);
    else
      ++uncorrelated;  // no id: count each such kernel as its own launch
  }
  s.launches = launches.size() + uncorrelated;
  for (const storage::MemopRecord& m : run.memops) {
    s.memop_time_ns += duration(m.start_ns, m.end_ns);
    busy.emplace_back(m.start_ns, m.end_ns);
  }
  s.gpu_busy_ns = union_length(busy);
  s.span_ns = duration(run.begin_ns, run.end_ns);
  s.wall_ns = run.info.wall_ns;
  if (s.wall_ns <= 0) {
    s.wall_ns = s.span_ns;
    s.wall_is_span = true;
  }
  s.iterations = run.info.iterations > 0 ? run.info.iterations : 0;

  const std::vector<bool> mask = timed_kernel_mask(run);
  s.timed_split = !mask.empty();
  std::unordered_set<uint32_t> timed_launches;
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    if (s.timed_split && !mask[i]) continue;
    const storage::KernelRecord& k = run.kernels[i];
    ++s.timed_kernels;
    s.timed_kernel_time_ns += duration(k.start_ns, k.end_ns);
    if (k.correlation_id != 0)
      timed_launches.insert(k.correlation_id);
    else
      ++s.timed_launches;
  }
  s.timed_launches += timed_launches.size();
  if (s.timed_split) {
    busy.clear();
    for (size_t i = 0; i < run.kernels.size(); ++i)
      if (mask[i]) busy.emplace_back(run.kernels[i].start_ns, run.kernels[i].end_ns);
    s.gpu_busy_ns = union_length(std::move(busy));
  }
  return s;
}

std::vector<KernelStat> kernel_stats(const storage::RunData& run, const std::vector<bool>& mask) {
  return group_kernels(
      run, mask, [](const storage::KernelRecord& k) { return k.name; },
      [](const storage::KernelRecord& k) { return k.op; });
}

std::vector<KernelStat> op_stats(const storage::RunData& run, const std::vector<bool>& mask) {
  return group_kernels(
      run, mask, [](const storage::KernelRecord& k) { return k.op; },
      [](const storage::KernelRecord& k) { return k.name; });
}

void sort_stats(std::vector<KernelStat>& stats, StatColumn column, bool ascending,
                const storage::RunData& run) {
  auto less = [&](const KernelStat& a, const KernelStat& b) {
    switch (column) {
      case StatColumn::kKey:
        return run.str(a.key) < run.str(b.key);
      case StatColumn::kCount:
        return a.count < b.count;
      case StatColumn::kTotal:
        return a.total_ns < b.total_ns;
      case StatColumn::kMean:
        return a.mean_ns < b.mean_ns;
      case StatColumn::kMin:
        return a.min_ns < b.min_ns;
      case StatColumn::kMax:
        return a.max_ns < b.max_ns;
      case StatColumn::kPercent:
        return a.percent < b.percent;
    }
    return false;
  };
  if (ascending)
    std::stable_sort(stats.begin(), stats.end(), less);
  else
    std::stable_sort(stats.begin(), stats.end(),
                     [&](const KernelStat& a, const KernelStat& b) { return less(b, a); });
}

}  // namespace fusionscope::analysis
