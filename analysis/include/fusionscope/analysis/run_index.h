// What the timeline needs of a run, derived once when the run is loaded: one LaneIndex per row
// (GPU streams: kernels and memops; CPU threads: API calls and one row per range depth) and the
// links from a launching API call to the work it launched.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fusionscope/analysis/lane_index.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

// Rows are per process: two processes that both use stream 7 (two ranks, two workers) have two
// rows, each holding only its own process's records.
struct GpuRowIndex {
  uint32_t pid = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  std::string process;  // process_label(), the row's title prefix
  LaneIndex kernels;    // items index RunData::kernels
  LaneIndex memops;     // items index RunData::memops
};

struct CpuRowIndex {
  uint32_t pid = 0;
  uint32_t thread_id = 0;
  std::string process;                     // process_label(), the row's title prefix
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

// How a row names its process: "" when every lane of the run belongs to one process, so
// single-process runs keep their short titles; else the process's name (its first two words, from
// the run's process table) and pid, "python3 train.py [4242] ", or "pid 4242 " without a name.
std::string process_label(const storage::RunData& run, uint32_t pid);

// Launch latency: from the start of the API call that launched a kernel to the kernel's start.
// Empty when the launch was not recorded.
std::optional<int64_t> launch_latency_ns(const storage::RunData& run, const RunIndex& index,
                                         uint32_t kernel_index);

}  // namespace fusionscope::analysis
