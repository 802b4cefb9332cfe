// Whether a run has hardware counters, and if not, why, in words the views show. A capture with
// --counters or --pm-sampling records the outcome of each pass per run as a session property
// (docs/bandwidth.md): "ok: ..." when it stored data, otherwise the reason (not permitted, not
// supported, skipped for a CUDA-graph run...). Runs without the property had no such pass.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

// Session property keys of a run's counters pass (per-kernel metrics) and PM sampling outcome.
std::string kernel_counters_property(int64_t run_id);
std::string pm_sampling_property(int64_t run_id);

// Session property: the GPU's L2 size in bytes, stored by the counters pass (the fewest-bytes
// model of bandwidth.h needs it: fewest_counted()).
inline constexpr std::string_view kL2BytesProperty = "gpu.l2_bytes";

// Property values start with this when the pass stored its data.
inline constexpr std::string_view kMetricsOk = "ok";

struct MetricsAvailability {
  bool available = false;  // the run has the data
  std::string why;         // when not: one sentence for a person
  std::string note;        // when available: what the pass recorded (the property's text)
};

// Per-kernel metrics of a run: `recorded` is whether any are stored, `property` the run's
// kernel_counters_property value if the session has one.
MetricsAvailability kernel_metrics_availability(const storage::RunInfo& info, bool recorded,
                                                const std::optional<std::string>& property);
// The same for PM-sampled series.
MetricsAvailability samples_availability(const storage::RunInfo& info, bool recorded,
                                         const std::optional<std::string>& property);

}  // namespace fusionscope::analysis
