#include "metrics_common.h"

#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "fusionscope/analysis/configuration_key.h"

namespace fusionscope::ui {

namespace {

std::optional<std::string> property(const Session& session, const std::string& key) {
  for (const auto& [k, v] : session.properties)
    if (k == key) return v;
  return std::nullopt;
}

}  // namespace

analysis::MetricsAvailability kernel_metrics_status(const Session& session, const LoadedRun& run) {
  const int64_t id = run.data.info.id;
  return analysis::kernel_metrics_availability(
      run.data.info, !run.traffic.empty(),
      property(session, analysis::kernel_counters_property(id)));
}

analysis::MetricsAvailability samples_status(const Session& session, const LoadedRun& run) {
  const int64_t id = run.data.info.id;
  return analysis::samples_availability(run.data.info, !run.pm.empty(),
                                        property(session, analysis::pm_sampling_property(id)));
}

std::vector<const LoadedRun*> runs_with_variants(const AppState& app) {
  std::vector<const LoadedRun*> out;
  const Session& session = *app.session;
  for (int64_t id : app.runs.selected)
    if (const LoadedRun* r = session.find_run(id)) out.push_back(r);
  if (out.size() != 1) return out;
  const std::string key = analysis::configuration_key(out.front()->data.info);
  out.clear();
  for (const auto& r : session.runs)
    if (analysis::configuration_key(r->data.info) == key) out.push_back(r.get());
  return out;
}

ImU32 run_colour(size_t index) {
  static const ImU32 palette[] = {
      IM_COL32(240, 120, 90, 255),  IM_COL32(90, 170, 240, 255),  IM_COL32(120, 210, 120, 255),
      IM_COL32(230, 190, 70, 255),  IM_COL32(200, 130, 230, 255), IM_COL32(90, 210, 200, 255),
      IM_COL32(240, 150, 190, 255), IM_COL32(170, 170, 170, 255),
  };
  return palette[index % (sizeof palette / sizeof palette[0])];
}

std::string ceiling_source(bool calibrated) {
  return calibrated ? "calibrated" : "theoretical";
}

double l2_bytes_of(const Session& session) {
  const auto v = property(session, std::string(analysis::kL2BytesProperty));
  if (!v) return 0.0;
  try {
    const double bytes = std::stod(*v);
    return bytes > 0 ? bytes : 0.0;
  } catch (const std::exception&) {
    return 0.0;
  }
}

}  // namespace fusionscope::ui
