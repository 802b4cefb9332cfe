#include "fusionscope/analysis/iteration_kernels.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <unordered_map>

#include "iteration_ranges.h"

namespace fusionscope::analysis {

std::vector<long> kernel_iterations(const storage::RunData& run) {
  // Iteration windows per (process, thread), sorted by start: (start, end, N). Processes are kept
  // apart: each numbers its own iterations, and thread ids may repeat across them.
  std::unordered_map<uint64_t, std::vector<std::tuple<int64_t, int64_t, long>>> windows;
  for (const storage::RangeRecord& r : run.ranges) {
    const long n = detail::iteration_number(run.str(r.name));
    if (n >= 0)
      windows[detail::thread_key(r.pid, r.thread_id)].emplace_back(r.start_ns, r.end_ns, n);
  }
  std::vector<long> out(run.kernels.size(), -1);
  if (windows.empty()) return out;
  for (auto& [thread, w] : windows) std::sort(w.begin(), w.end());
  auto iteration_at = [&](uint64_t thread, int64_t t) -> long {
    auto it = windows.find(thread);
    if (it == windows.end()) return -1;
    const auto& w = it->second;
    // Iteration ranges do not nest, so the last one starting at or before t is the candidate.
    auto up = std::upper_bound(w.begin(), w.end(), t,
                               [](int64_t v, const auto& e) { return v < std::get<0>(e); });
    if (up == w.begin()) return -1;
    const auto& [start, end, n] = *std::prev(up);
    return end >= t ? n : -1;
  };
  // Correlation id -> the earliest API call with it (a launch, not a later callback).
  std::unordered_map<uint32_t, std::pair<uint64_t, int64_t>> launch;
  launch.reserve(run.api_calls.size());
  for (const storage::ApiCallRecord& a : run.api_calls) {
    if (a.correlation_id == 0) continue;
    const uint64_t thread = detail::thread_key(a.pid, a.thread_id);
    auto [it, inserted] = launch.try_emplace(a.correlation_id, thread, a.start_ns);
    if (!inserted && a.start_ns < it->second.second) it->second = {thread, a.start_ns};
  }
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    auto it = launch.find(run.kernels[i].correlation_id);
    if (it != launch.end()) out[i] = iteration_at(it->second.first, it->second.second);
  }
  return out;
}

std::vector<uint32_t> iteration_kernels(const storage::RunData& run, long iteration) {
  const std::vector<long> of = kernel_iterations(run);
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < of.size(); ++i)
    if (of[i] == iteration) out.push_back(i);
  std::stable_sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    return run.kernels[a].start_ns < run.kernels[b].start_ns;
  });
  return out;
}

}  // namespace fusionscope::analysis
