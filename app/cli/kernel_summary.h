// The per-name kernel summary that `export --summary-csv` writes: the statistics view's figures
// (analysis::kernel_stats) as the CSV's rows.
#pragma once

#include <vector>

#include "fusionscope/interchange/csv_export.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::cli {

// One row per kernel name, sorted by total time, largest first (ties by name).
std::vector<interchange::KernelSummaryRow> summarize_kernels(const storage::RunData& run);

}  // namespace fusionscope::cli
