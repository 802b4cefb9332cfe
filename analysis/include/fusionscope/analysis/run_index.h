// What the timeline needs of a run, derived once when the run is loaded: one LaneIndex per row
// (GPU streams: kernels and memops; CPU threads: API calls and one row per range depth) and the
// links from a launching API call to the work it launched.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "fusionscope/analysis/lane_index.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

struct GpuRowIndex {
  uint32_t device = 0;
  uint32_t stream = 0;
  LaneIndex kernels;  // items index RunData::kernels
  LaneIndex memops;   // items index RunData::memops
};

struct CpuRowIndex {
  uint32_t thread_id = 0;
  LaneIndex api_calls;                     // items index RunData::api_calls
  std::vector<LaneIndex> ranges_by_depth;  // [depth]; items index RunData::ranges
};

// Correlation ids link an API call to the kernels and memops it launched (several for a graph
// launch). Lookups are binary searches over sorted (id, index) pairs.
class CorrelationIndex {
 public:
  explicit CorrelationIndex(const storage::RunData& run);
  CorrelationIndex() = default;

  std::optional<uint32_t> api_call(uint32_t correlation_id) const;
  std::vector<uint32_t> kernels(uint32_t correlation_id) const;
  std::vector<uint32_t> memops(uint32_t correlation_id) const;

 private:
  using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;
  static std::vector<uint32_t> all_of(const Pairs& pairs, uint32_t id);
  Pairs api_;
  Pairs kernels_;
  Pairs memops_;
};

struct RunIndex {
  std::vector<GpuRowIndex> gpu;  // in RunData::gpu_lanes order
  std::vector<CpuRowIndex> cpu;  // in RunData::cpu_lanes order
  CorrelationIndex correlation;
};

RunIndex build_run_index(const storage::RunData& run);

// Launch latency: from the start of the API call that launched a kernel to the kernel's start.
// Empty when the launch was not recorded.
std::optional<int64_t> launch_latency_ns(const storage::RunData& run, const RunIndex& index,
                                         uint32_t kernel_index);

}  // namespace fusionscope::analysis
