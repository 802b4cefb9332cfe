#include "kernel_summary.h"

#include <algorithm>

#include "fusionscope/analysis/stats.h"

namespace fusionscope::cli {

std::vector<interchange::KernelSummaryRow> summarize_kernels(const storage::RunData& run) {
  std::vector<interchange::KernelSummaryRow> rows;
  for (const analysis::KernelStat& s : analysis::kernel_stats(run)) {
    interchange::KernelSummaryRow& row = rows.emplace_back();
    row.name = run.str(s.key);
    row.count = s.count;
    row.total_ns = s.total_ns;
    row.mean_ns = s.mean_ns;
    row.min_ns = s.min_ns;
    row.max_ns = s.max_ns;
    row.percent_of_gpu_time = s.percent;
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return rows;
}

}  // namespace fusionscope::cli
