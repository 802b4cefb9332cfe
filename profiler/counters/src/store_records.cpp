#include "fusionscope/counters/store_records.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "fusionscope/counters/metric_names.h"

namespace fusionscope::counters {

std::vector<uint32_t> match_by_launch_order(const CounterPassResult& pass,
                                            std::span<const storage::KernelRecord> iteration) {
  if (pass.kernels.size() != iteration.size()) {
    throw MatchError("the counters pass profiled " + std::to_string(pass.kernels.size()) +
                     " kernel(s) but the timed iteration ran " + std::to_string(iteration.size()) +
                     "; the two passes did not launch the same kernels");
  }
  std::vector<storage::KernelRecord> sorted(iteration.begin(), iteration.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const storage::KernelRecord& a, const storage::KernelRecord& b) {
                     return a.start_ns < b.start_ns;
                   });
  std::vector<uint32_t> ids;
  ids.reserve(sorted.size());
  for (const auto& k : sorted) ids.push_back(k.correlation_id);
  return ids;
}

std::vector<storage::KernelMetricRecord> to_kernel_metric_records(
    const CounterPassResult& pass, std::span<const uint32_t> correlation_ids,
    const Intern& intern) {
  if (correlation_ids.size() != pass.kernels.size()) {
    throw MatchError("there are " + std::to_string(correlation_ids.size()) +
                     " correlation id(s) for " + std::to_string(pass.kernels.size()) +
                     " profiled kernel(s)");
  }
  std::vector<storage::StringId> names, units;
  for (size_t m = 0; m < pass.metrics.size(); ++m) {
    names.push_back(intern(pass.metrics[m]));
    units.push_back(intern(m < pass.units.size() ? pass.units[m] : std::string()));
  }
  std::vector<storage::KernelMetricRecord> out;
  out.reserve(pass.kernels.size() * pass.metrics.size());
  for (size_t k = 0; k < pass.kernels.size(); ++k) {
    const auto& values = pass.kernels[k].values;
    for (size_t m = 0; m < names.size() && m < values.size(); ++m) {
      if (!std::isfinite(values[m])) continue;
      out.push_back({correlation_ids[k], names[m], units[m], values[m]});
    }
  }
  return out;
}

std::vector<storage::KernelMetricRecord> to_kernel_metric_records(const CounterPassResult& pass,
                                                                  const Intern& intern) {
  std::vector<uint32_t> ids(pass.kernels.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint32_t>(i + 1);
  return to_kernel_metric_records(pass, ids, intern);
}

std::vector<storage::SampleRecord> to_sample_records(const PmSamplingResult& result,
                                                     const Intern& intern) {
  std::vector<storage::StringId> names;
  for (const auto& m : result.metrics) names.push_back(intern(m));
  const int read = result.metric_index(metric::kSampleDramRead);
  const int write = result.metric_index(metric::kSampleDramWrite);
  const bool bandwidth = read >= 0 && write >= 0;
  const storage::StringId bandwidth_name = bandwidth ? intern(metric::kSampleDramBandwidth) : 0;

  std::vector<storage::SampleRecord> out;
  out.reserve(result.samples.size() * (names.size() + (bandwidth ? 1 : 0)));
  for (const auto& s : result.samples) {
    const int64_t t = s.start_ns + (s.end_ns - s.start_ns) / 2;
    for (size_t m = 0; m < names.size() && m < s.values.size(); ++m) {
      if (std::isfinite(s.values[m])) out.push_back({t, names[m], s.values[m]});
    }
    if (bandwidth && static_cast<size_t>(std::max(read, write)) < s.values.size()) {
      const double v = s.values[read] + s.values[write];
      if (std::isfinite(v)) out.push_back({t, bandwidth_name, v});
    }
  }
  return out;
}

}  // namespace fusionscope::counters
