#include "fusionscope/analysis/prediction.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "fusionscope/analysis/format.h"
#include "fusionscope/analysis/stats.h"

namespace fusionscope::analysis {

namespace {

std::string count_text(double n) {
  char buf[32];
  if (std::abs(n - std::round(n)) < 1e-9)
    std::snprintf(buf, sizeof buf, "%.0f", n);
  else
    std::snprintf(buf, sizeof buf, "%.2f", n);
  return buf;
}

}  // namespace

double PredictionPeaks::flop_rate(kernels::DType dtype) const {
  return dtype == kernels::DType::kFp32 ? fp32_flops : tensor_flops;
}

bool PredictionPeaks::known(kernels::DType dtype) const {
  return bandwidth_bytes_per_s > 0 && flop_rate(dtype) > 0;
}

PredictionPeaks choose_peaks(const storage::SessionInfo* session, const DevicePeaks* device) {
  PredictionPeaks p;
  const bool device_here =
      device != nullptr && (device->bandwidth_bytes_per_s > 0 || device->tensor_flops > 0);
  const bool session_is_this_gpu =
      session != nullptr && (!device_here || session->gpu_name == device->name);
  std::vector<std::string> sources;
  std::string gpu;
  // Each source fills only what the ones before it left unknown.
  auto take = [&](double bandwidth, double tensor, double fp32, const char* what,
                  const std::string& name) {
    bool used = false;
    auto fill = [&](double& field, double value) {
      if (field <= 0 && value > 0) {
        field = value;
        used = true;
      }
    };
    fill(p.bandwidth_bytes_per_s, bandwidth);
    fill(p.tensor_flops, tensor);
    fill(p.fp32_flops, fp32);
    if (used) {
      sources.emplace_back(what);
      if (gpu.empty()) gpu = name;
    }
  };
  if (session_is_this_gpu)
    take(session->calibrated_bandwidth_gbs * 1e9, session->calibrated_tensor_tflops * 1e12, 0,
         "calibrated", session->gpu_name);
  if (device_here)
    take(device->bandwidth_bytes_per_s, device->tensor_flops, device->fp32_flops,
         "theoretical peaks of this GPU", device->name);
  if (session != nullptr)
    take(session->mem_bandwidth_gbs * 1e9, session->peak_tensor_tflops * 1e12,
         session->peak_fp32_tflops * 1e12, "theoretical peaks from the session", session->gpu_name);
  for (size_t i = 0; i < sources.size(); ++i) p.source += (i ? " + " : "") + sources[i];
  if (!p.source.empty() && !gpu.empty()) p.source = gpu + ": " + p.source;
  return p;
}

double roofline_bound_ns(double flops, double bytes, double flop_rate, double bandwidth) {
  const double compute = flop_rate > 0 ? flops / flop_rate : 0;
  const double memory = bandwidth > 0 ? bytes / bandwidth : 0;
  return std::max(compute, memory) * 1e9;
}

VariantPrediction predict(const kernels::MlpConfig& config, kernels::Variant variant,
                          const PredictionPeaks& peaks) {
  const kernels::Plan plan = kernels::make_plan(config, variant);
  VariantPrediction p;
  p.variant = variant;
  const double rate = peaks.flop_rate(config.dtype);
  const bool known = peaks.known(config.dtype);
  for (const kernels::PlannedLaunch& l : plan.launches) {
    LaunchPrediction lp;
    lp.op = l.op;
    lp.kernel = l.kernel;
    lp.flops = l.flops;
    lp.min_bytes = l.min_bytes;
    if (known) {
      lp.bound_ns = roofline_bound_ns(l.flops, l.min_bytes, rate, peaks.bandwidth_bytes_per_s);
      lp.memory_bound = l.min_bytes / peaks.bandwidth_bytes_per_s >= l.flops / rate;
    }
    p.flops += lp.flops;
    p.min_bytes += lp.min_bytes;
    p.bound_ns += lp.bound_ns;
    p.launches.push_back(std::move(lp));
  }
  return p;
}

std::string_view to_string(SurpriseKind k) {
  switch (k) {
    case SurpriseKind::kRunFailed:
      return "run failed";
    case SurpriseKind::kCheckFailed:
      return "check failed";
    case SurpriseKind::kKernelCount:
      return "kernel count";
    case SurpriseKind::kFarFromBound:
      return "far from the bound";
    case SurpriseKind::kFasterThanBound:
      return "faster than the bound";
    case SurpriseKind::kOpMissing:
      return "op missing";
    case SurpriseKind::kOpUnplanned:
      return "op not planned";
    case SurpriseKind::kNoTrace:
      return "no trace";
  }
  return "unknown";
}

bool VariantOutcome::has(SurpriseKind k) const {
  return std::any_of(surprises.begin(), surprises.end(),
                     [k](const Surprise& s) { return s.kind == k; });
}

VariantOutcome compare_to_prediction(const VariantPrediction& prediction,
                                     const storage::RunData& run,
                                     const SurpriseThresholds& thresholds) {
  VariantOutcome out;
  out.run_id = run.info.id;
  out.variant = prediction.variant;
  out.status = run.info.status;
  out.planned_kernels = prediction.kernels();
  out.bound_ns = prediction.bound_ns;
  auto surprise = [&](SurpriseKind kind, std::string message) {
    out.surprises.push_back({kind, std::move(message)});
  };

  // The plan's ops, in order, each with its launches' count and bound.
  std::vector<OpOutcome> ops;
  std::map<std::string, size_t> op_slot;
  for (const LaunchPrediction& l : prediction.launches) {
    auto [it, inserted] = op_slot.try_emplace(l.op, ops.size());
    if (inserted) {
      OpOutcome o;
      o.op = l.op;
      o.planned = true;
      ops.push_back(std::move(o));
    }
    ++ops[it->second].planned_kernels;
    ops[it->second].bound_ns += l.bound_ns;
  }

  if (run.info.status == storage::RunStatus::kFailed) {
    const std::string& why = run.info.error;
    if (why.rfind("output differs from the fp32 reference", 0) == 0)
      surprise(SurpriseKind::kCheckFailed, why);
    else
      surprise(SurpriseKind::kRunFailed,
               why.empty() ? "the run failed without saying why" : "the run failed: " + why);
  }

  const RunSummary summary = summarize(run);
  const int iterations = summary.iterations;
  out.measured = summary.timed_split && summary.timed_kernels > 0 && iterations > 0;
  if (!out.measured) {
    if (run.info.status != storage::RunStatus::kFailed)
      surprise(SurpriseKind::kNoTrace,
               run.info.trace_status.empty()
                   ? "no traced kernels in timed iterations to compare with the plan"
                   : "nothing to compare: " + run.info.trace_status);
    out.ops = std::move(ops);
    return out;
  }

  out.measured_kernels = summary.kernels_per_iteration();
  out.measured_ns = summary.kernel_time_per_iteration_ns();
  if (out.bound_ns > 0 && out.measured_ns > 0)
    out.roofline_fraction = out.bound_ns / out.measured_ns;

  const std::vector<KernelStat> by_op = op_stats(run, timed_kernel_mask(run));
  for (const KernelStat& s : by_op) {
    const std::string name = run.str(s.key);
    auto [it, inserted] = op_slot.try_emplace(name, ops.size());
    if (inserted) {
      OpOutcome o;
      o.op = name;
      ops.push_back(std::move(o));
    }
    OpOutcome& o = ops[it->second];
    o.measured = true;
    o.measured_kernels = static_cast<double>(s.count) / iterations;
    o.measured_ns = static_cast<double>(s.total_ns) / iterations;
  }
  for (OpOutcome& o : ops) {
    if (o.bound_ns > 0 && o.measured_ns > 0) o.roofline_fraction = o.bound_ns / o.measured_ns;
  }

  if (std::abs(out.measured_kernels - static_cast<double>(out.planned_kernels)) > 1e-9)
    surprise(SurpriseKind::kKernelCount, count_text(static_cast<double>(out.planned_kernels)) +
                                             " kernels per iteration planned, " +
                                             count_text(out.measured_kernels) + " measured");
  if (out.roofline_fraction) {
    const double f = *out.roofline_fraction;
    if (f < thresholds.far_below_roofline)
      surprise(SurpriseKind::kFarFromBound,
               format_duration(out.measured_ns) + " per iteration is " +
                   format_factor(out.measured_ns / out.bound_ns) + " the " +
                   format_duration(out.bound_ns) + " bound (" + format_percent(f) +
                   " of the roofline): launch or latency, not bandwidth or FLOPs, sets the pace");
    else if (out.measured_ns < thresholds.faster_than_bound * out.bound_ns)
      surprise(SurpriseKind::kFasterThanBound,
               format_duration(out.measured_ns) + " per iteration beats the " +
                   format_duration(out.bound_ns) +
                   " bound: the peaks are too low or the plan counts bytes the kernels never move "
                   "(the L2 may hold them)");
  }
  for (const OpOutcome& o : ops) {
    if (o.bound_ns > 0 && o.measured_ns > 0 &&
        o.measured_ns < thresholds.faster_than_bound * o.bound_ns)
      surprise(SurpriseKind::kFasterThanBound,
               "op '" + o.op + "': " + format_duration(o.measured_ns) +
                   " per iteration beats its " + format_duration(o.bound_ns) +
                   " bound: the L2 kept part of its traffic, or the peaks are low for this kernel");
    if (o.planned && !o.measured)
      surprise(SurpriseKind::kOpMissing, "planned op '" + o.op + "' ran no kernel");
    if (!o.planned && o.measured)
      surprise(SurpriseKind::kOpUnplanned,
               (o.op.empty() ? std::string("kernels outside any op") : "op '" + o.op + "'") +
                   " ran " + count_text(o.measured_kernels) +
                   " kernels per iteration that the plan does not have");
  }
  out.ops = std::move(ops);
  return out;
}

std::optional<kernels::MlpConfig> run_config(const storage::RunInfo& info) {
  if (info.config_json.empty()) return std::nullopt;
  try {
    return kernels::config_from_json(info.config_json);
  } catch (const kernels::ConfigError&) {
    return std::nullopt;
  }
}

bool same_workload(const kernels::MlpConfig& a, const kernels::MlpConfig& b) {
  kernels::MlpConfig x = a, y = b;
  x.name.clear();
  y.name.clear();
  return x == y;
}

}  // namespace fusionscope::analysis
