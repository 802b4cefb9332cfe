// From counter results to the session store's records (storage/records.h).
//
// Matching the counters pass to the timing pass: the counters pass profiles one forward pass of
// the same configuration and variant, launched the same way, so its kernels come in the same
// order as the kernels of one timed iteration. Kernel i of the counters pass takes the
// correlation id of the i-th kernel (by start time) of that iteration.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fusionscope/counters/kernel_counters.h"
#include "fusionscope/counters/pm_sampler.h"
#include "fusionscope/storage/records.h"

namespace fusionscope::counters {

// The store's string interning (SessionStore::intern), or any stand-in.
using Intern = std::function<storage::StringId(std::string_view)>;

// The counters pass and the kernels it was matched against disagree.
class MatchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Correlation ids for the pass's kernels from the kernels of one timed iteration. `iteration`
// need not be sorted. Throws MatchError when the kernel counts differ (the message gives both).
std::vector<uint32_t> match_by_launch_order(const CounterPassResult& pass,
                                            std::span<const storage::KernelRecord> iteration);

// One record per (kernel, metric) with a finite value; kernel i is keyed by correlation_ids[i].
// Throws MatchError when the sizes differ.
std::vector<storage::KernelMetricRecord> to_kernel_metric_records(
    const CounterPassResult& pass, std::span<const uint32_t> correlation_ids, const Intern& intern);

// Without a timing pass to match: kernel i is keyed by i + 1 (0 means "unknown" in the store).
std::vector<storage::KernelMetricRecord> to_kernel_metric_records(const CounterPassResult& pass,
                                                                  const Intern& intern);

// One record per (sample, metric), at the middle of the sample's interval, plus the derived
// DRAM bandwidth (read + write) when both are sampled.
std::vector<storage::SampleRecord> to_sample_records(const PmSamplingResult& result,
                                                     const Intern& intern);

}  // namespace fusionscope::counters
