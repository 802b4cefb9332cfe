#include <exception>

#include "cupti_status.h"
#include "fusionscope/counters/kernel_counters.h"
#include "profiler_host.h"

namespace fusionscope::counters {

ChipMetricCheck check_metrics_for_chip(const std::string& chip,
                                       const std::vector<std::string>& metrics, bool pm_sampling) {
  ChipMetricCheck r;
  try {
    detail::ProfilerHost host(
        pm_sampling ? CUPTI_PROFILER_TYPE_PM_SAMPLING : CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip,
        {});
    const auto known = detail::known_metrics(host, metrics, r.missing);
    if (!known.empty()) {
      auto config = host.configure(known);
      r.passes = detail::ProfilerHost::passes(config);
    }
  } catch (const detail::CounterFailure& f) {
    r.status = f.status;
  } catch (const std::exception& e) {
    r.status = {CounterAvailability::kFailed, e.what()};
  }
  return r;
}

}  // namespace fusionscope::counters
