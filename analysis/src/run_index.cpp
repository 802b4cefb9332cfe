#include "fusionscope/analysis/run_index.h"

#include <algorithm>

namespace fusionscope::analysis {

namespace {

template <class Record>
std::vector<std::pair<uint32_t, uint32_t>> by_correlation(const std::vector<Record>& records) {
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  pairs.reserve(records.size());
  for (uint32_t i = 0; i < records.size(); ++i)
    if (records[i].correlation_id != 0) pairs.emplace_back(records[i].correlation_id, i);
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

}  // namespace

CorrelationIndex::CorrelationIndex(const storage::RunData& run)
    : api_(by_correlation(run.api_calls)),
      kernels_(by_correlation(run.kernels)),
      memops_(by_correlation(run.memops)) {}

std::vector<uint32_t> CorrelationIndex::all_of(const Pairs& pairs, uint32_t id) {
  std::vector<uint32_t> out;
  if (id == 0) return out;
  auto it = std::lower_bound(pairs.begin(), pairs.end(), std::make_pair(id, uint32_t{0}));
  for (; it != pairs.end() && it->first == id; ++it) out.push_back(it->second);
  return out;
}

std::optional<uint32_t> CorrelationIndex::api_call(uint32_t correlation_id) const {
  const auto all = all_of(api_, correlation_id);
  if (all.empty()) return std::nullopt;
  return all.front();
}

std::vector<uint32_t> CorrelationIndex::kernels(uint32_t correlation_id) const {
  return all_of(kernels_, correlation_id);
}

std::vector<uint32_t> CorrelationIndex::memops(uint32_t correlation_id) const {
  return all_of(memops_, correlation_id);
}

RunIndex build_run_index(const storage::RunData& run) {
  RunIndex index;
  const std::span<const storage::KernelRecord> kernels(run.kernels);
  const std::span<const storage::MemopRecord> memops(run.memops);
  const std::span<const storage::ApiCallRecord> api(run.api_calls);
  for (const storage::GpuLane& lane : run.gpu_lanes) {
    GpuRowIndex row;
    row.pid = lane.pid;
    row.process = process_label(run, lane.pid);
    row.device = lane.device;
    row.stream = lane.stream;
    row.kernels = index_lane(kernels, lane.kernel_begin, lane.kernel_end);
    row.memops = index_lane(memops, lane.memop_begin, lane.memop_end);
    index.gpu.push_back(std::move(row));
  }
  for (const storage::CpuLane& lane : run.cpu_lanes) {
    CpuRowIndex row;
    row.pid = lane.pid;
    row.process = process_label(run, lane.pid);
    row.thread_id = lane.thread_id;
    row.api_calls = index_lane(api, lane.api_begin, lane.api_end);
    // Ranges come sorted by start within the thread; each depth keeps that order.
    uint16_t deepest = lane.max_depth;
    for (uint32_t i = lane.range_begin; i < lane.range_end && i < run.ranges.size(); ++i)
      deepest = std::max(deepest, run.ranges[i].depth);
    if (lane.range_end > lane.range_begin) row.ranges_by_depth.resize(size_t{deepest} + 1);
    for (uint32_t i = lane.range_begin; i < lane.range_end && i < run.ranges.size(); ++i) {
      const storage::RangeRecord& r = run.ranges[i];
      row.ranges_by_depth[r.depth].push(r.start_ns, r.end_ns, i);
    }
    index.cpu.push_back(std::move(row));
  }
  index.correlation = CorrelationIndex(run);
  return index;
}

std::string process_label(const storage::RunData& run, uint32_t pid) {
  bool several = false;
  auto differs = [pid](const auto& lane) { return lane.pid != pid; };
  several = std::any_of(run.gpu_lanes.begin(), run.gpu_lanes.end(), differs) ||
            std::any_of(run.cpu_lanes.begin(), run.cpu_lanes.end(), differs);
  if (!several) return {};
  const auto it =
      std::lower_bound(run.processes.begin(), run.processes.end(), pid,
                       [](const storage::ProcessRecord& p, uint32_t v) { return p.pid < v; });
  std::string name = it != run.processes.end() && it->pid == pid ? run.str(it->name) : "";
  // The program and its script, not every argument.
  size_t cut = name.find(' ');
  if (cut != std::string::npos) cut = name.find(' ', cut + 1);
  if (cut != std::string::npos) name.resize(cut);
  if (name.size() > 28) name = name.substr(0, 25) + "...";
  return name.empty() ? "pid " + std::to_string(pid) + " "
                      : name + " [" + std::to_string(pid) + "] ";
}

std::optional<int64_t> launch_latency_ns(const storage::RunData& run, const RunIndex& index,
                                         uint32_t kernel_index) {
  if (kernel_index >= run.kernels.size()) return std::nullopt;
  const storage::KernelRecord& k = run.kernels[kernel_index];
  const auto api = index.correlation.api_call(k.correlation_id);
  if (!api) return std::nullopt;
  return k.start_ns - run.api_calls[*api].start_ns;
}

}  // namespace fusionscope::analysis
