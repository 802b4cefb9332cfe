#include "profiler_host.h"

#include <string>

#include "cupti_status.h"

namespace fusionscope::counters::detail {

ProfilerHost::ProfilerHost(CUpti_ProfilerType type, const std::string& chip,
                           const std::vector<uint8_t>& availability) {
  auto p = detail::cupti_params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  p.profilerType = type;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  check_cupti(cuptiProfilerHostInitialize(&p), "preparing the metric tables for chip " + chip);
  host_ = p.pHostObject;
}

ProfilerHost::~ProfilerHost() {
  auto p = detail::cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  trace("releasing the metric tables", cuptiProfilerHostDeinitialize(&p));
}

bool ProfilerHost::has_metric(const std::string& metric) const {
  auto p = detail::cupti_params<CUpti_Profiler_Host_GetMetricProperties_Params>(
      CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.pMetricName = metric.c_str();
  return cuptiProfilerHostGetMetricProperties(&p) == CUPTI_SUCCESS;
}

std::string ProfilerHost::unit(const std::string& metric) const {
  auto p = detail::cupti_params<CUpti_Profiler_Host_GetMetricProperties_Params>(
      CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.pMetricName = metric.c_str();
  if (cuptiProfilerHostGetMetricProperties(&p) != CUPTI_SUCCESS || p.pDimUnit == nullptr) return {};
  return p.pDimUnit;
}

std::vector<uint8_t> ProfilerHost::configure(const std::vector<std::string>& metrics) {
  metrics_ = metrics;
  names_.clear();
  for (const auto& m : metrics_) names_.push_back(m.c_str());
  if (names_.empty())
    fail(CounterAvailability::kNotSupported, "none of the metrics exist on this GPU");

  auto add = detail::cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host_;
  add.ppMetricNames = names_.data();
  add.numMetrics = names_.size();
  check_cupti(cuptiProfilerHostConfigAddMetrics(&add), "scheduling the metrics");

  auto size = detail::cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host_;
  check_cupti(cuptiProfilerHostGetConfigImageSize(&size), "sizing the config image");
  std::vector<uint8_t> image(size.configImageSize);

  auto get = detail::cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  get.pHostObject = host_;
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  check_cupti(cuptiProfilerHostGetConfigImage(&get), "building the config image");
  return image;
}

size_t ProfilerHost::passes(std::vector<uint8_t>& config) {
  auto p = detail::cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  p.configImageSize = config.size();
  p.pConfigImage = config.data();
  check_cupti(cuptiProfilerHostGetNumOfPasses(&p), "counting the hardware passes");
  return p.numOfPasses;
}

std::vector<double> ProfilerHost::evaluate(const std::vector<uint8_t>& counter_data,
                                           size_t index) const {
  std::vector<double> values(names_.size(), 0.0);
  auto p = detail::cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  p.pHostObject = host_;
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = index;
  p.ppMetricNames = const_cast<const char**>(names_.data());
  p.numMetrics = names_.size();
  p.pMetricValues = values.data();
  check_cupti(cuptiProfilerHostEvaluateToGpuValues(&p), "evaluating the counters");
  return values;
}

std::vector<std::string> known_metrics(const ProfilerHost& host,
                                       const std::vector<std::string>& wanted,
                                       std::vector<std::string>& skipped) {
  std::vector<std::string> known;
  for (const auto& m : wanted) {
    if (host.has_metric(m)) {
      known.push_back(m);
    } else {
      skipped.push_back(m);
    }
  }
  return known;
}

}  // namespace fusionscope::counters::detail
