// What an area selection holds, grouped as Perfetto's area selection tables do: kernels by name,
// kernels by op, memcpy/memset, CUDA API calls and ranges by name, each with its count, total
// and mean time, share of the range, and DRAM bytes where the kernels were counted. No ImGui.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "timeline_items.h"

namespace fusionscope::ui {

struct AreaGroup {
  std::string name;
  uint64_t count = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0, max_ns = 0;
  double dram_bytes = 0;  // read + written, of the items counted
  uint64_t counted = 0;   // items with DRAM counters
  ImU32 colour = 0;       // the colour the timeline draws the group in
  double mean_ns() const {
    return count ? static_cast<double>(total_ns) / static_cast<double>(count) : 0.0;
  }
};

enum class AreaTable { kKernels, kOps, kMemops, kApiCalls, kRanges };
constexpr size_t kAreaTables = 5;

struct AreaSummary {
  double begin = 0, end = 0;                   // the range on the axis
  std::vector<AreaGroup> tables[kAreaTables];  // by AreaTable, each by total time, largest first
  const std::vector<AreaGroup>& of(AreaTable t) const { return tables[static_cast<size_t>(t)]; }
  // The totals of one table.
  AreaGroup total(AreaTable t) const;
  double length() const { return end - begin; }
};

// Kernels' swatches follow `mode`: the colour the timeline draws them in (their op's, or their
// name's).
AreaSummary summarize_area(std::span<const TimelineRun> runs, std::span<const ItemRef> items,
                           double begin, double end, ColorMode mode = ColorMode::kByOp);

// DRAM bytes (read + written) the counters pass measured for one kernel launch; false when it
// has no such counters.
bool kernel_dram_bytes(const LoadedRun& run, uint32_t kernel, double& bytes);

}  // namespace fusionscope::ui
