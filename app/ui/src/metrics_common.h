// What the memory-bandwidth views share: why a run has (or lacks) hardware counters, the runs a
// view shows, colours per run, and figures with their units.
#pragma once

#include <string>
#include <vector>

#include <imgui.h>

#include "app_state.h"
#include "fusionscope/analysis/format.h"
#include "fusionscope/analysis/metrics_status.h"

namespace fusionscope::ui {

// From the run's records and the session's properties (analysis/metrics_status.h).
analysis::MetricsAvailability kernel_metrics_status(const Session& session, const LoadedRun& run);
analysis::MetricsAvailability samples_status(const Session& session, const LoadedRun& run);

// The runs selected in the runs panel; when only one is, it and the other variants of its
// configuration (same configuration, same graph mode), in table order.
std::vector<const LoadedRun*> runs_with_variants(const AppState& app);

// A distinct colour per position in a list of runs.
ImU32 run_colour(size_t index);

// Rates with their units come from analysis/format.h, as every number the app prints.
using analysis::format_bandwidth;
using analysis::format_flop_rate;

// "DRAM: from the calibrated 2.82 TB/s" / "... theoretical ...": where a ceiling comes from.
std::string ceiling_source(bool calibrated);

// The GPU's L2 size the counters pass stored (analysis::kL2BytesProperty); 0 when unknown.
double l2_bytes_of(const Session& session);

}  // namespace fusionscope::ui
