#include "fusionscope/analysis/bandwidth.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>

#include "fusionscope/analysis/iteration_kernels.h"
#include "fusionscope/counters/metric_names.h"
#include "fusionscope/kernels/config.h"
#include "fusionscope/kernels/plan.h"

namespace fusionscope::analysis {

namespace metric = counters::metric;

double Ceilings::ridge() const {
  return bandwidth > 0 && tensor_flops > 0 ? tensor_flops / bandwidth : 0.0;
}

Ceilings ceilings_of(const storage::SessionInfo& s) {
  Ceilings c;
  c.theoretical_bandwidth = s.mem_bandwidth_gbs > 0 ? s.mem_bandwidth_gbs * 1e9 : 0.0;
  c.theoretical_tensor_flops = s.peak_tensor_tflops > 0 ? s.peak_tensor_tflops * 1e12 : 0.0;
  c.bandwidth_calibrated = s.calibrated_bandwidth_gbs > 0;
  c.bandwidth = c.bandwidth_calibrated ? s.calibrated_bandwidth_gbs * 1e9 : c.theoretical_bandwidth;
  c.tensor_calibrated = s.calibrated_tensor_tflops > 0;
  c.tensor_flops =
      c.tensor_calibrated ? s.calibrated_tensor_tflops * 1e12 : c.theoretical_tensor_flops;
  c.fp32_flops = s.peak_fp32_tflops > 0 ? s.peak_fp32_tflops * 1e12 : 0.0;
  return c;
}

double attainable(double bandwidth, double roof, double intensity) {
  if (!(bandwidth > 0) || !(intensity > 0)) return 0.0;
  const double slope = bandwidth * intensity;
  return roof > 0 ? std::min(slope, roof) : slope;
}

double KernelTraffic::seconds() const {
  if (duration_ns > 0) return static_cast<double>(duration_ns) * 1e-9;
  if (counted_duration_ns > 0) return counted_duration_ns * 1e-9;
  return 0.0;
}

double KernelTraffic::bandwidth() const {
  const double s = seconds();
  return s > 0 ? dram_bytes() / s : 0.0;
}

double KernelTraffic::intensity() const {
  const double bytes = dram_bytes();
  return flops > 0 && bytes > 0 ? flops / bytes : kUnknown;
}

double KernelTraffic::flop_rate() const {
  const double s = seconds();
  return flops >= 0 && s > 0 ? flops / s : kUnknown;
}

double RunTraffic::bandwidth() const {
  return duration_ns > 0 ? dram_bytes / (static_cast<double>(duration_ns) * 1e-9) : 0.0;
}

double RunTraffic::min_bytes() const {
  return plan.ok ? plan.min_bytes : kUnknown;
}

double fewest_counted(double min_bytes, double min_write_bytes, double l2_bytes) {
  if (!std::isfinite(min_bytes)) return kUnknown;
  if (!(l2_bytes > 0) || !std::isfinite(min_write_bytes)) return min_bytes;
  return min_bytes - std::min(std::max(min_write_bytes, 0.0), l2_bytes);
}

double RunTraffic::min_bytes_counted(double l2_bytes) const {
  if (!plan.ok) return kUnknown;
  double sum = 0;
  for (const PlanTraffic::Op& o : plan.ops)
    sum += fewest_counted(o.min_bytes, o.min_write_bytes, l2_bytes);
  return sum;
}

double RunTraffic::excess_over_min() const {
  const double m = min_bytes();
  return m > 0 ? dram_bytes / m : kUnknown;
}

PlanTraffic plan_traffic(const storage::RunInfo& info) {
  PlanTraffic p;
  if (info.kind == "imported") {
    p.error = "imported trace: no plan of this workload";
    return p;
  }
  if (info.config_json.empty()) {
    p.error = "the run has no configuration";
    return p;
  }
  try {
    const kernels::MlpConfig config = kernels::config_from_json(info.config_json);
    const kernels::Plan plan = kernels::make_plan(config, kernels::parse_variant(info.variant));
    for (const kernels::PlannedLaunch& l : plan.launches) {
      auto it = std::find_if(p.ops.begin(), p.ops.end(),
                             [&](const PlanTraffic::Op& e) { return e.op == l.op; });
      if (it == p.ops.end()) {
        p.ops.push_back({l.op, l.min_bytes, l.min_write_bytes});
      } else {
        it->min_bytes += l.min_bytes;
        it->min_write_bytes += l.min_write_bytes;
      }
      p.min_write_bytes += l.min_write_bytes;
    }
    p.min_bytes = plan.min_bytes();
    p.flops = plan.flops();
    p.ok = true;
  } catch (const std::exception& e) {
    p.error = std::string("no plan for this run: ") + e.what();
  }
  return p;
}

namespace {

// The run's ids of the metric names the traffic needs (absent names stay empty).
struct MetricIds {
  std::optional<storage::StringId> read, write, bytes, flops, tensor_flops, duration;
  explicit MetricIds(const storage::RunData& run) {
    for (storage::StringId id = 1; id < run.strings.size(); ++id) {
      const std::string_view s = run.strings[id];
      if (s == metric::kDramRead) read = id;
      if (s == metric::kDramWrite) write = id;
      if (s == metric::kDramBytes) bytes = id;
      if (s == metric::kFlops) flops = id;
      if (s == metric::kTensorFlops) tensor_flops = id;
      if (s == metric::kDuration) duration = id;
    }
  }
};

// Fills `t` from the metrics of its correlation id; false when they hold no DRAM traffic.
bool fill_counters(KernelTraffic& t, const MetricIds& ids,
                   std::span<const storage::KernelMetricRecord> metrics) {
  bool read = false, write = false;
  double total = kUnknown;
  for (const storage::KernelMetricRecord& m : metrics) {
    if (!std::isfinite(m.value)) continue;
    if (m.name == ids.read) {
      t.dram_read = m.value;
      read = true;
    } else if (m.name == ids.write) {
      t.dram_write = m.value;
      write = true;
    } else if (m.name == ids.bytes) {
      total = m.value;
    } else if (m.name == ids.flops) {
      t.flops = m.value;
    } else if (m.name == ids.tensor_flops) {
      t.tensor_flops = m.value;
    } else if (m.name == ids.duration) {
      t.counted_duration_ns = m.value;
    }
  }
  if (!read && !write && std::isfinite(total)) {
    t.dram_read = total;  // only the sum is known: count it as read
    return true;
  }
  return read || write;
}

}  // namespace

RunTraffic run_traffic(const storage::RunData& run) {
  RunTraffic out;
  out.plan = plan_traffic(run.info);
  if (run.kernel_metrics.empty()) return out;
  const MetricIds ids(run);

  // Kernels whose correlation id carries metrics, by the iteration that launched them.
  const std::vector<long> iteration = kernel_iterations(run);
  std::vector<uint32_t> with_metrics;
  auto metrics_of = [&](uint32_t correlation_id) {
    auto lo = std::lower_bound(
        run.kernel_metrics.begin(), run.kernel_metrics.end(), correlation_id,
        [](const storage::KernelMetricRecord& m, uint32_t v) { return m.correlation_id < v; });
    auto hi = lo;
    while (hi != run.kernel_metrics.end() && hi->correlation_id == correlation_id) ++hi;
    return std::span<const storage::KernelMetricRecord>(lo, hi);
  };
  for (uint32_t i = 0; i < run.kernels.size(); ++i)
    if (run.kernels[i].correlation_id != 0 && !metrics_of(run.kernels[i].correlation_id).empty())
      with_metrics.push_back(i);
  if (with_metrics.empty()) return out;

  // One pass: the first timed iteration with counters, else the first iteration, else all.
  long chosen = -1;
  for (uint32_t i : with_metrics) {
    const long n = iteration[i];
    if (n < 0) continue;
    const bool timed = n >= run.info.warmup, chosen_timed = chosen >= run.info.warmup;
    if (chosen < 0 || (timed && !chosen_timed) || (timed == chosen_timed && n < chosen)) chosen = n;
  }
  std::vector<uint32_t> pass;
  for (uint32_t i : with_metrics)
    if (iteration[i] == chosen) pass.push_back(i);
  std::stable_sort(pass.begin(), pass.end(), [&](uint32_t a, uint32_t b) {
    return run.kernels[a].start_ns < run.kernels[b].start_ns;
  });
  out.iteration = chosen;

  std::unordered_map<uint32_t, bool> seen;  // a correlation id shared by several kernels (a
                                            // graph launch) names none of them alone
  for (uint32_t i : pass) {
    const storage::KernelRecord& k = run.kernels[i];
    if (!seen.emplace(k.correlation_id, true).second) continue;
    KernelTraffic t;
    t.kernel = i;
    t.correlation_id = k.correlation_id;
    t.name = k.name;
    t.op = k.op;
    t.duration_ns = k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
    if (!fill_counters(t, ids, metrics_of(k.correlation_id))) continue;
    out.kernels.push_back(t);
  }

  std::map<std::string, const PlanTraffic::Op*> plan_min;
  for (const PlanTraffic::Op& o : out.plan.ops) plan_min.emplace(o.op, &o);
  bool any_flops = false;
  double flops = 0;
  for (const KernelTraffic& t : out.kernels) {
    out.dram_bytes += t.dram_bytes();
    out.duration_ns += t.duration_ns;
    if (t.flops >= 0) {
      any_flops = true;
      flops += t.flops;
    }
    const std::string& op = run.str(t.op);
    auto it = std::find_if(out.ops.begin(), out.ops.end(),
                           [&](const OpTraffic& o) { return o.op == op; });
    if (it == out.ops.end()) {
      OpTraffic o;
      o.op = op;
      if (auto m = plan_min.find(op); m != plan_min.end()) {
        o.min_bytes = m->second->min_bytes;
        o.min_write_bytes = m->second->min_write_bytes;
      }
      out.ops.push_back(o);
      it = std::prev(out.ops.end());
    }
    it->dram_bytes += t.dram_bytes();
    it->duration_ns += t.duration_ns;
    ++it->kernels;
  }
  if (any_flops) out.flops = flops;
  for (const PlanTraffic::Op& p : out.plan.ops) {
    if (std::none_of(out.ops.begin(), out.ops.end(),
                     [&](const OpTraffic& o) { return o.op == p.op; })) {
      OpTraffic o;
      o.op = p.op;
      o.min_bytes = p.min_bytes;
      o.min_write_bytes = p.min_write_bytes;
      out.ops.push_back(o);
    }
  }
  return out;
}

}  // namespace fusionscope::analysis
