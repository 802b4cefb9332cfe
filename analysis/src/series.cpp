#include "fusionscope/analysis/series.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "fusionscope/counters/metric_names.h"

namespace fusionscope::analysis {

namespace metric = counters::metric;

std::span<const storage::SampleRecord> series_of(const storage::RunData& run,
                                                 storage::StringId metric_id) {
  const auto& s = run.samples;
  auto lo = std::lower_bound(
      s.begin(), s.end(), metric_id,
      [](const storage::SampleRecord& r, storage::StringId v) { return r.metric < v; });
  auto hi = std::upper_bound(
      lo, s.end(), metric_id,
      [](storage::StringId v, const storage::SampleRecord& r) { return v < r.metric; });
  return {lo, hi};
}

double PmSeries::max_dram_total() const {
  double m = 0;
  for (const auto& r : dram_total)
    if (std::isfinite(r.value)) m = std::max(m, r.value);
  return m;
}

PmSeries pm_series(const storage::RunData& run) {
  PmSeries out;
  auto copy = [&](std::string_view name, std::vector<storage::SampleRecord>& to) {
    for (storage::StringId id = 1; id < run.strings.size(); ++id) {
      if (run.strings[id] != name) continue;
      const auto s = series_of(run, id);
      to.assign(s.begin(), s.end());
      return;
    }
  };
  copy(metric::kSampleDramRead, out.dram_read);
  copy(metric::kSampleDramWrite, out.dram_write);
  copy(metric::kSampleDramBandwidth, out.dram_total);
  copy(metric::kSampleSmActivePct, out.sm_active);
  copy(metric::kSampleTensorActivePct, out.tensor_active);
  if (out.dram_total.empty() && !out.dram_read.empty() &&
      out.dram_read.size() == out.dram_write.size()) {
    // Read and write are sampled together, so their samples share times.
    out.dram_total = out.dram_read;
    for (size_t i = 0; i < out.dram_total.size(); ++i)
      out.dram_total[i].value += out.dram_write[i].value;
  }
  return out;
}

void bin_series(std::span<const storage::SampleRecord> series, double t0, double t1, int columns,
                std::vector<SeriesBin>& out) {
  out.assign(columns > 0 ? static_cast<size_t>(columns) : 0, SeriesBin{});
  if (columns <= 0 || !(t1 > t0) || series.empty()) return;
  const double per_column = (t1 - t0) / columns;
  auto it = std::lower_bound(
      series.begin(), series.end(), t0,
      [](const storage::SampleRecord& r, double t) { return static_cast<double>(r.t_ns) < t; });
  for (; it != series.end() && static_cast<double>(it->t_ns) < t1; ++it) {
    if (!std::isfinite(it->value)) continue;
    const int c = std::clamp(static_cast<int>((static_cast<double>(it->t_ns) - t0) / per_column), 0,
                             columns - 1);
    SeriesBin& b = out[static_cast<size_t>(c)];
    if (b.count == 0) {
      b.min = b.max = it->value;
    } else {
      b.min = std::min(b.min, it->value);
      b.max = std::max(b.max, it->value);
    }
    b.mean += it->value;
    ++b.count;
  }
  for (SeriesBin& b : out)
    if (b.count > 0) b.mean /= b.count;
}

const storage::SampleRecord* nearest_sample(std::span<const storage::SampleRecord> series,
                                            double t) {
  if (series.empty()) return nullptr;
  auto it = std::lower_bound(
      series.begin(), series.end(), t,
      [](const storage::SampleRecord& r, double v) { return static_cast<double>(r.t_ns) < v; });
  if (it == series.end()) return &series.back();
  if (it == series.begin()) return &*it;
  auto before = std::prev(it);
  return (t - static_cast<double>(before->t_ns)) <= (static_cast<double>(it->t_ns) - t) ? &*before
                                                                                        : &*it;
}

}  // namespace fusionscope::analysis
