// Counters over time (PM sampling, SampleRecord series) as the timeline's chart rows draw them:
// a run's known series picked out once, and binned to pixel columns each frame so that the cost
// follows the width of the view, not the number of samples.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

// The series of one metric of a run, in time order (RunData::samples is sorted by metric, then
// time). Empty when the run has none.
std::span<const storage::SampleRecord> series_of(const storage::RunData& run,
                                                 storage::StringId metric);

// A run's PM-sampled series by role, copied out of RunData::samples. DRAM total is the stored
// read + write series (fusionscope/dram_bandwidth), or their sum when only those two are stored.
struct PmSeries {
  std::vector<storage::SampleRecord> dram_read;      // byte/s
  std::vector<storage::SampleRecord> dram_write;     // byte/s
  std::vector<storage::SampleRecord> dram_total;     // byte/s
  std::vector<storage::SampleRecord> sm_active;      // percent of cycles with a warp resident
  std::vector<storage::SampleRecord> tensor_active;  // percent, tensor pipe
  bool empty() const { return dram_total.empty() && sm_active.empty() && tensor_active.empty(); }
  bool has_activity() const { return !sm_active.empty() || !tensor_active.empty(); }
  double max_dram_total() const;
};
PmSeries pm_series(const storage::RunData& run);

// Samples of [t0, t1) binned into `columns` equal columns: per column the min, max and mean of
// the samples whose time falls in it (count 0 = none there).
struct SeriesBin {
  double min = 0;
  double max = 0;
  double mean = 0;
  uint32_t count = 0;
};
void bin_series(std::span<const storage::SampleRecord> series, double t0_ns, double t1_ns,
                int columns, std::vector<SeriesBin>& out);

// The sample nearest to t (by time), or nullptr for an empty series.
const storage::SampleRecord* nearest_sample(std::span<const storage::SampleRecord> series,
                                            double t_ns);

}  // namespace fusionscope::analysis
