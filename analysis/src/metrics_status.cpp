#include "fusionscope/analysis/metrics_status.h"

namespace fusionscope::analysis {

namespace {

MetricsAvailability availability(const storage::RunInfo& info, bool recorded,
                                 const std::optional<std::string>& property, const char* what,
                                 const char* pass, const char* option) {
  MetricsAvailability a;
  if (recorded) {
    a.available = true;
    a.note = property.value_or("");
    return a;
  }
  if (info.kind == "imported") {
    a.why = std::string("imported trace: ") + what + " are recorded only by `fusionscope capture " +
            option + "`";
    return a;
  }
  if (property && !property->empty()) {
    const std::string& p = *property;
    // "ok: ..." with nothing stored (every value was NaN, or no kernel matched) still says so.
    a.why = p.starts_with(kMetricsOk) ? std::string(what) + ": none stored (" + p + ")" : p;
    return a;
  }
  a.why = std::string("no ") + pass + " in this run (capture with " + option + ")";
  return a;
}

}  // namespace

std::string kernel_counters_property(int64_t run_id) {
  return "counters.run." + std::to_string(run_id) + ".kernels";
}

std::string pm_sampling_property(int64_t run_id) {
  return "counters.run." + std::to_string(run_id) + ".samples";
}

MetricsAvailability kernel_metrics_availability(const storage::RunInfo& info, bool recorded,
                                                const std::optional<std::string>& property) {
  return availability(info, recorded, property, "hardware counters", "counters pass", "--counters");
}

MetricsAvailability samples_availability(const storage::RunInfo& info, bool recorded,
                                         const std::optional<std::string>& property) {
  return availability(info, recorded, property, "PM-sampled series", "PM sampling",
                      "--pm-sampling");
}

}  // namespace fusionscope::analysis
