#include "fusionscope/analysis/iterations.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_map>

#include "iteration_ranges.h"

namespace fusionscope::analysis {

namespace {

std::string_view without_counter(std::string_view name) {
  while (!name.empty() && (std::isdigit(static_cast<unsigned char>(name.back())) ||
                           name.back() == '#' || name.back() == ' '))
    name.remove_suffix(1);
  return name;
}

struct Window {
  size_t range = 0;  // index into RunData::ranges
  long number = 0;
  bool timed = true;
};

// The iteration ranges: the runner's, else the top-level name that repeats most.
std::vector<Window> iteration_windows(const storage::RunData& run) {
  std::vector<Window> out;
  for (size_t i = 0; i < run.ranges.size(); ++i) {
    const long n = detail::iteration_number(run.str(run.ranges[i].name));
    if (n >= 0) out.push_back({i, n, n >= run.info.warmup});
  }
  if (!out.empty()) return out;
  std::map<std::string_view, std::vector<size_t>> by_name;
  for (size_t i = 0; i < run.ranges.size(); ++i) {
    const storage::RangeRecord& r = run.ranges[i];
    if (r.depth != 0) continue;
    const std::string_view name = without_counter(run.str(r.name));
    if (!name.empty()) by_name[name].push_back(i);
  }
  const std::vector<size_t>* best = nullptr;
  for (const auto& [name, ranges] : by_name) {
    if (ranges.size() < 2) continue;
    if (!best || ranges.size() > best->size() ||
        (ranges.size() == best->size() &&
         run.ranges[ranges.front()].start_ns < run.ranges[best->front()].start_ns))
      best = &ranges;
  }
  if (!best) return out;
  for (size_t i : *best) out.push_back({i, -1, true});  // numbered by position below
  return out;
}

}  // namespace

RunIterations run_iterations(const storage::RunData& run) {
  RunIterations out;
  out.of_kernel.assign(run.kernels.size(), -1);
  std::vector<Window> windows = iteration_windows(run);
  if (windows.empty()) return out;
  std::sort(windows.begin(), windows.end(), [&](const Window& a, const Window& b) {
    return run.ranges[a.range].start_ns < run.ranges[b.range].start_ns;
  });
  for (size_t i = 0; i < windows.size(); ++i) {
    const storage::RangeRecord& r = run.ranges[windows[i].range];
    Iteration it;
    it.number = windows[i].number >= 0 ? windows[i].number : static_cast<long>(i);
    it.timed = windows[i].timed;
    it.cpu_begin = r.start_ns;
    it.cpu_end = r.end_ns;
    out.iterations.push_back(it);
  }
  // Per thread, the iterations by start (they do not nest within a thread).
  std::unordered_map<uint32_t, std::vector<int32_t>> by_thread;
  for (size_t i = 0; i < windows.size(); ++i)
    by_thread[run.ranges[windows[i].range].thread_id].push_back(static_cast<int32_t>(i));
  auto iteration_at = [&](uint32_t thread, int64_t t) -> int32_t {
    auto found = by_thread.find(thread);
    if (found == by_thread.end()) return -1;
    const std::vector<int32_t>& w = found->second;
    auto up = std::upper_bound(w.begin(), w.end(), t, [&](int64_t v, int32_t i) {
      return v < out.iterations[static_cast<size_t>(i)].cpu_begin;
    });
    if (up == w.begin()) return -1;
    const int32_t i = *std::prev(up);
    return out.iterations[static_cast<size_t>(i)].cpu_end >= t ? i : -1;
  };
  // Correlation id -> the earliest API call with it (the launch).
  std::unordered_map<uint32_t, std::pair<uint32_t, int64_t>> launch;
  launch.reserve(run.api_calls.size());
  for (const storage::ApiCallRecord& a : run.api_calls) {
    if (a.correlation_id == 0) continue;
    auto [it, inserted] = launch.try_emplace(a.correlation_id, a.thread_id, a.start_ns);
    if (!inserted && a.start_ns < it->second.second) it->second = {a.thread_id, a.start_ns};
  }
  for (size_t k = 0; k < run.kernels.size(); ++k) {
    const storage::KernelRecord& kr = run.kernels[k];
    auto l = launch.find(kr.correlation_id);
    if (l == launch.end()) continue;
    const int32_t i = iteration_at(l->second.first, l->second.second);
    if (i < 0) continue;
    out.of_kernel[k] = i;
    Iteration& it = out.iterations[static_cast<size_t>(i)];
    if (it.kernels++ == 0) {
      it.gpu_begin = kr.start_ns;
      it.gpu_end = kr.end_ns;
    } else {
      it.gpu_begin = std::min(it.gpu_begin, kr.start_ns);
      it.gpu_end = std::max(it.gpu_end, kr.end_ns);
    }
    it.kernel_ns += std::max<int64_t>(kr.end_ns - kr.start_ns, 0);
  }
  return out;
}

std::optional<TimeSpan> timed_span(const RunIterations& iterations) {
  std::optional<TimeSpan> span;
  for (const Iteration& it : iterations.iterations) {
    if (!it.timed) continue;
    if (!span)
      span = TimeSpan{it.begin(), it.end()};
    else
      span = TimeSpan{std::min(span->begin, it.begin()), std::max(span->end, it.end())};
  }
  return span;
}

double figure_of(const Iteration& it, IterationFigure figure) {
  return figure == IterationFigure::kGpuSpan ? static_cast<double>(it.gpu_span())
                                             : static_cast<double>(it.kernel_ns);
}

IterationSpread iteration_spread(const RunIterations& iterations, IterationFigure figure) {
  IterationSpread s;
  std::vector<std::pair<double, size_t>> values;
  for (size_t i = 0; i < iterations.iterations.size(); ++i) {
    const Iteration& it = iterations.iterations[i];
    if (it.timed && it.has_gpu()) values.emplace_back(figure_of(it, figure), i);
  }
  s.count = values.size();
  if (values.empty()) return s;
  std::vector<double> sorted;
  double sum = 0;
  for (const auto& [v, i] : values) {
    sorted.push_back(v);
    sum += v;
  }
  std::sort(sorted.begin(), sorted.end());
  const auto median_of = [](const std::vector<double>& v) {
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  s.mean = sum / static_cast<double>(values.size());
  s.median = median_of(sorted);
  s.min = sorted.front();
  s.max = sorted.back();
  double var = 0;
  for (double v : sorted) var += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(var / static_cast<double>(sorted.size()));
  std::vector<double> deviations;
  for (double v : sorted) deviations.push_back(std::abs(v - s.median));
  std::sort(deviations.begin(), deviations.end());
  const double mad = median_of(deviations);
  for (const auto& [v, i] : values) {
    const double d = std::abs(v - s.median);
    if (d > 3 * mad && d > 0.05 * s.median) s.outliers.push_back(i);
  }
  return s;
}

}  // namespace fusionscope::analysis
