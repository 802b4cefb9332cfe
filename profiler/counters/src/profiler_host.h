// The host side of CUPTI's profiler (no GPU needed): which metrics a chip has, the config image
// that schedules them, and the evaluation of decoded counter data into metric values. Shared by
// the range profiler and PM sampling.
#pragma once

#include <cupti_profiler_host.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fusionscope::counters::detail {

class ProfilerHost {
 public:
  // `availability` may be empty (then every counter of the chip is assumed present).
  ProfilerHost(CUpti_ProfilerType type, const std::string& chip,
               const std::vector<uint8_t>& availability);
  ~ProfilerHost();
  ProfilerHost(const ProfilerHost&) = delete;
  ProfilerHost& operator=(const ProfilerHost&) = delete;

  // Whether the chip knows `metric` (a full name with its rollup, e.g. "dram__bytes_read.sum").
  bool has_metric(const std::string& metric) const;
  // CUPTI's unit of `metric` ("byte", "nanosecond", "percent"...); empty when unknown.
  std::string unit(const std::string& metric) const;

  // Adds the metrics (once per host object) and returns the config image that schedules them.
  std::vector<uint8_t> configure(const std::vector<std::string>& metrics);
  // Hardware passes the config image needs.
  static size_t passes(std::vector<uint8_t>& config);

  // Values of the configured metrics for one range (or sample) of a decoded counter data image.
  std::vector<double> evaluate(const std::vector<uint8_t>& counter_data, size_t index) const;

  const std::vector<const char*>& metric_names() const { return names_; }

 private:
  CUpti_Profiler_Host_Object* host_ = nullptr;
  std::vector<std::string> metrics_;
  std::vector<const char*> names_;
};

// Metrics of `wanted` that the host knows, in order; the others are appended to `skipped`.
std::vector<std::string> known_metrics(const ProfilerHost& host,
                                       const std::vector<std::string>& wanted,
                                       std::vector<std::string>& skipped);

}  // namespace fusionscope::counters::detail
