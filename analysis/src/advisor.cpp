#include "fusionscope/analysis/advisor.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "fusionscope/analysis/bandwidth.h"
#include "fusionscope/analysis/demangle.h"
#include "fusionscope/analysis/format.h"
#include "fusionscope/analysis/iteration_kernels.h"
#include "fusionscope/analysis/stats.h"

namespace fusionscope::analysis {
namespace {

using storage::RunData;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains_any(const std::string& text, std::initializer_list<const char*> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](const char* w) { return text.find(w) != std::string::npos; });
}

// What a kernel does, from its name, its op and (where counted) its arithmetic intensity.
enum class Role { kGemm, kPointwise, kOther };

struct KernelView {
  uint32_t index = 0;
  Role role = Role::kOther;
  bool multiplies = false;  // a pointwise product (the GLU's gate * up)
  bool activates = false;   // an activation (gelu, silu, relu...)
  double dram_bytes = kUnknown, dram_write = kUnknown;
};

Role role_of(const std::string& name, const std::string& op, double intensity) {
  const std::string n = lower(name) + " " + lower(op);
  if (contains_any(n, {"gemm", "nvjet", "xmma", "cutlass", "matmul", "aten::mm", "aten::addmm",
                       "aten::bmm", "aten::linear", "wgmma", "cublas"})) {
    return Role::kGemm;
  }
  if (!std::isnan(intensity) && intensity > 50) return Role::kGemm;
  if (contains_any(n, {"elementwise", "activation", "multiply", "pointwise", "triton_poi", "gelu",
                       "silu", "relu", "mul", "add", "sigmoid", "tanh", "bias"}) ||
      (!std::isnan(intensity) && intensity < 2)) {
    return Role::kPointwise;
  }
  return Role::kOther;
}

AdviceKernel kernel_ref(const RunData& run, uint32_t i) {
  const auto& k = run.kernels[i];
  return {i, run.str(k.name), k.correlation_id, k.start_ns, k.end_ns - k.start_ns};
}

std::string names_of(const RunData& run, const std::vector<uint32_t>& ks) {
  std::string out;
  for (size_t j = 0; j < ks.size(); ++j) {
    if (j) out += ", ";
    out += short_name(run.str(run.kernels[ks[j]].name));
  }
  return out;
}

int64_t duration(const RunData& run, uint32_t i) {
  return run.kernels[i].end_ns - run.kernels[i].start_ns;
}

// The iteration a rule reads: the first timed one with kernels (counters come from it too), or
// the whole run when it has no iterations.
struct Iteration {
  long number = -1;
  std::vector<uint32_t> kernels;  // in start order
  std::vector<KernelView> views;  // parallel to kernels
};

Iteration representative_iteration(const RunData& run, const RunTraffic& traffic) {
  Iteration it;
  const std::vector<long> of = kernel_iterations(run);
  long chosen = traffic.iteration;
  if (chosen < 0) {
    for (size_t i = 0; i < of.size(); ++i) {
      if (of[i] >= run.info.warmup && (chosen < 0 || of[i] < chosen)) chosen = of[i];
    }
  }
  for (uint32_t i = 0; i < run.kernels.size(); ++i) {
    if (chosen < 0 || of[i] == chosen) it.kernels.push_back(i);
  }
  std::stable_sort(it.kernels.begin(), it.kernels.end(), [&](uint32_t a, uint32_t b) {
    return run.kernels[a].start_ns < run.kernels[b].start_ns;
  });
  it.number = chosen;
  std::map<uint32_t, const KernelTraffic*> counted;
  for (const auto& t : traffic.kernels) counted[t.kernel] = &t;
  for (uint32_t i : it.kernels) {
    KernelView v;
    v.index = i;
    const auto c = counted.find(i);
    const double intensity = c != counted.end() ? c->second->intensity() : kUnknown;
    if (c != counted.end()) {
      v.dram_bytes = c->second->dram_bytes();
      v.dram_write = c->second->dram_write;
    }
    const std::string& name = run.str(run.kernels[i].name);
    const std::string& op = run.str(run.kernels[i].op);
    v.role = role_of(demangle(name), op, intensity);
    const std::string n = lower(demangle(name)) + " " + lower(op);
    v.multiplies = v.role == Role::kPointwise && contains_any(n, {"mul"});
    v.activates =
        v.role == Role::kPointwise && contains_any(n, {"gelu", "silu", "relu", "activation"});
    it.views.push_back(v);
  }
  return it;
}

double sum_or_unknown(const std::vector<double>& values) {
  double s = 0;
  for (double v : values) {
    if (std::isnan(v)) return kUnknown;
    s += v;
  }
  return s;
}

void rule_pointwise_chain(const RunData& run, const Iteration& it, std::vector<Advice>& out) {
  // Pointwise kernels with no other kernel between them: each writes what the next reads.
  size_t i = 0;
  while (i < it.views.size()) {
    size_t j = i;
    while (j < it.views.size() && it.views[j].role == Role::kPointwise) ++j;
    if (j - i >= 2) {
      std::vector<uint32_t> chain;
      std::vector<double> written;
      int64_t time = 0;
      double bytes = 0;
      for (size_t k = i; k < j; ++k) {
        chain.push_back(it.views[k].index);
        time += duration(run, it.views[k].index);
        bytes += std::isnan(it.views[k].dram_bytes) ? 0 : it.views[k].dram_bytes;
        if (k + 1 < j) written.push_back(it.views[k].dram_write);
      }
      // Fused, the intermediates are neither written nor read back.
      const double saved = 2 * sum_or_unknown(written);
      Advice a;
      a.rule = "pointwise-chain";
      a.severity = "warning";
      a.figures = {{"kernels", static_cast<double>(chain.size()), "count"},
                   {"chain_time_ns", static_cast<double>(time), "ns"},
                   {"launches_saved", static_cast<double>(chain.size() - 1), "count"},
                   {"bytes_saved", saved, "byte"}};
      double time_saved = kUnknown;
      if (!std::isnan(saved) && bytes > 0) {
        time_saved = static_cast<double>(time) * std::min(1.0, saved / bytes);
        a.figures.push_back({"time_saved_ns", time_saved, "ns"});
      }
      a.summary = std::to_string(chain.size()) + " pointwise kernels in a row (" +
                  names_of(run, chain) + ", " + format_duration(static_cast<double>(time)) +
                  " per iteration) could be one kernel";
      if (!std::isnan(saved)) {
        a.summary += ": " + format_bytes(saved) + " less DRAM traffic, about " +
                     format_duration(time_saved) + " saved";
      } else {
        a.summary += " (run with counters for the bytes it would save)";
      }
      for (uint32_t k : chain) a.kernels.push_back(kernel_ref(run, k));
      out.push_back(std::move(a));
    }
    i = j == i ? i + 1 : j;
  }
}

void rule_glu_intermediate(const RunData& run, const Iteration& it, const AdviceContext& ctx,
                           std::vector<Advice>& out) {
  // Two GEMMs (gate, up), then pointwise kernels that multiply, before the next GEMM (down).
  std::vector<size_t> gemms;
  for (size_t i = 0; i < it.views.size(); ++i) {
    if (it.views[i].role == Role::kGemm) gemms.push_back(i);
  }
  if (gemms.size() < 3) return;
  for (size_t g = 0; g + 2 < gemms.size(); ++g) {
    const size_t first = gemms[g], down = gemms[g + 2];
    std::vector<size_t> pointwise;
    bool multiplies = false;
    for (size_t i = first + 1; i < down; ++i) {
      if (it.views[i].role != Role::kPointwise) continue;
      pointwise.push_back(i);
      multiplies |= it.views[i].multiplies;
    }
    if (!multiplies) continue;
    const KernelView& gate = it.views[first];
    const KernelView& up = it.views[gemms[g + 1]];
    int64_t pointwise_time = 0;
    std::vector<double> pointwise_bytes;
    std::vector<uint32_t> refs = {gate.index, up.index};
    for (size_t i : pointwise) {
      pointwise_time += duration(run, it.views[i].index);
      pointwise_bytes.push_back(it.views[i].dram_bytes);
      refs.push_back(it.views[i].index);
    }
    // A gated epilogue writes act(gate) * up once: the GEMMs' two outputs, and everything the
    // pointwise kernels read and write, are no longer in memory.
    const double saved =
        sum_or_unknown({gate.dram_write, up.dram_write, sum_or_unknown(pointwise_bytes),
                        -it.views[pointwise.back()].dram_write});
    Advice a;
    a.rule = "glu-intermediate";
    a.severity = "warning";
    a.figures = {{"pointwise_kernels", static_cast<double>(pointwise.size()), "count"},
                 {"pointwise_time_ns", static_cast<double>(pointwise_time), "ns"},
                 {"bytes_saved", saved, "byte"}};
    a.summary = "The gated MLP writes its gate and up outputs and reads them back in " +
                std::to_string(pointwise.size()) + " pointwise kernel" +
                (pointwise.size() == 1 ? "" : "s") + " (" +
                format_duration(static_cast<double>(pointwise_time)) + " per iteration)";
    if (!std::isnan(saved)) {
      a.summary += "; a gated GEMM epilogue saves " + format_bytes(saved);
    } else {
      a.summary += "; a gated GEMM epilogue writes act(gate)*up once";
    }
    // Our own gated-gemm run of the same shape, when the session has one.
    const double here = gpu_time_per_iteration(run);
    for (const PeerRun& p : ctx.peers) {
      if (p.info.id == run.info.id || p.info.variant != "gated-gemm" ||
          p.info.config_json.empty() || p.info.config_json != run.info.config_json ||
          p.gpu_per_iteration_ns <= 0 || here <= 0) {
        continue;
      }
      a.cites_run = p.info.id;
      a.figures.push_back({"gated_run_time_ns", p.gpu_per_iteration_ns, "ns"});
      a.figures.push_back({"this_run_time_ns", here, "ns"});
      a.figures.push_back({"time_saved_ns", here - p.gpu_per_iteration_ns, "ns"});
      a.summary += "; the session's gated-gemm run #" + std::to_string(p.info.id) + " of this " +
                   "shape takes " + format_duration(p.gpu_per_iteration_ns) + " per iteration, " +
                   format_duration(here) + " here (" +
                   format_factor(here / p.gpu_per_iteration_ns, 2) + ")";
      break;
    }
    if (a.cites_run == 0) {
      a.figures.push_back({"time_saved_ns", static_cast<double>(pointwise_time), "ns"});
      a.summary +=
          ", about " + format_duration(static_cast<double>(pointwise_time)) + " per iteration";
    }
    for (uint32_t k : refs) a.kernels.push_back(kernel_ref(run, k));
    out.push_back(std::move(a));
    return;  // one GLU per iteration is the pattern; the first found is reported
  }
}

// The duration of each kernel's launching call (same correlation id), by kernel index.
std::vector<int64_t> launch_call_durations(const RunData& run) {
  std::map<uint32_t, int64_t> call;
  for (const auto& a : run.api_calls) {
    if (a.correlation_id != 0) call.emplace(a.correlation_id, a.end_ns - a.start_ns);
  }
  std::vector<int64_t> out(run.kernels.size(), -1);
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    const auto c = call.find(run.kernels[i].correlation_id);
    if (c != call.end()) out[i] = c->second;
  }
  return out;
}

void rule_short_kernels(const RunData& run, std::vector<Advice>& out) {
  const std::vector<bool> timed = timed_kernel_mask(run);
  const std::vector<int64_t> launch = launch_call_durations(run);
  std::vector<int64_t> calls;
  for (int64_t d : launch) {
    if (d >= 0) calls.push_back(d);
  }
  if (calls.empty()) return;
  std::nth_element(calls.begin(), calls.begin() + static_cast<std::ptrdiff_t>(calls.size() / 2),
                   calls.end());
  const int64_t median_launch = calls[calls.size() / 2];
  std::map<std::string, uint32_t> first_of;  // a reference per kernel name
  uint64_t considered = 0, short_ones = 0;
  int64_t short_time = 0;
  for (uint32_t i = 0; i < run.kernels.size(); ++i) {
    if (!timed.empty() && !timed[i]) continue;
    ++considered;
    if (duration(run, i) >= median_launch) continue;
    ++short_ones;
    short_time += duration(run, i);
    first_of.emplace(run.str(run.kernels[i].name), i);
  }
  if (short_ones == 0) return;
  const double share = static_cast<double>(short_ones) / static_cast<double>(considered);
  Advice a;
  a.rule = "short-kernels";
  a.severity = share >= 0.5 ? "warning" : "info";
  a.figures = {{"kernels", static_cast<double>(short_ones), "count"},
               {"share", share, "fraction"},
               {"median_launch_ns", static_cast<double>(median_launch), "ns"},
               {"kernel_time_ns", static_cast<double>(short_time), "ns"}};
  a.summary = format_count(short_ones) + " of " + format_count(considered) + " kernels (" +
              format_percent(share) + ") run shorter than the " +
              format_duration(static_cast<double>(median_launch)) + " their launch call takes: " +
              (run.info.cuda_graph ? "fuse them" : "replay them from a CUDA graph, or fuse them");
  for (const auto& [name, i] : first_of) a.kernels.push_back(kernel_ref(run, i));
  std::sort(a.kernels.begin(), a.kernels.end(),
            [](const AdviceKernel& x, const AdviceKernel& y) { return x.start_ns < y.start_ns; });
  out.push_back(std::move(a));
}

void rule_launch_bound(const RunData& run, const AdviceContext& ctx, std::vector<Advice>& out) {
  // Over the timed iterations' kernels: the span from the first start to the last end, and the
  // time some kernel runs (the union of their intervals).
  const std::vector<bool> timed = timed_kernel_mask(run);
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    if (timed.empty() || timed[i])
      spans.emplace_back(run.kernels[i].start_ns, run.kernels[i].end_ns);
  }
  if (spans.size() < 2) return;
  std::sort(spans.begin(), spans.end());
  int64_t busy = 0, cur_start = spans[0].first, cur_end = spans[0].second;
  int64_t longest_gap = 0;
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].first > cur_end) {
      busy += cur_end - cur_start;
      if (spans[i].first - cur_end > longest_gap) longest_gap = spans[i].first - cur_end;
      cur_start = spans[i].first;
    }
    cur_end = std::max(cur_end, spans[i].second);
  }
  busy += cur_end - cur_start;
  const int64_t span = cur_end - spans[0].first;
  if (span <= 0) return;
  const double idle = 1.0 - static_cast<double>(busy) / static_cast<double>(span);
  if (idle < ctx.launch_bound_share) return;
  const int iterations = std::max(run.info.iterations, 1);
  Advice a;
  a.rule = "launch-bound";
  a.severity = "warning";
  a.figures = {{"idle_share", idle, "fraction"},
               {"idle_per_iteration_ns", static_cast<double>(span - busy) / iterations, "ns"},
               {"busy_per_iteration_ns", static_cast<double>(busy) / iterations, "ns"},
               {"longest_gap_ns", static_cast<double>(longest_gap), "ns"}};
  a.summary = "The GPU idles " + format_percent(idle) + " of the iterations (" +
              format_duration(static_cast<double>(span - busy) / iterations) +
              " per iteration between kernels): the CPU does not launch work fast enough; " +
              (run.info.cuda_graph ? "fewer, larger kernels (fusion) would keep it busy"
                                   : "fewer, larger kernels (fusion) or a CUDA graph would keep "
                                     "it busy");
  // The kernels around the largest gaps: the first of each timed iteration's kernels is where
  // the GPU waited; reference the timed kernels that follow gaps, a few of them.
  std::vector<std::pair<int64_t, uint32_t>> after_gap;
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < run.kernels.size(); ++i) {
    if (timed.empty() || timed[i]) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return run.kernels[x].start_ns < run.kernels[y].start_ns;
  });
  int64_t reach = std::numeric_limits<int64_t>::min();
  for (uint32_t i : order) {
    if (reach != std::numeric_limits<int64_t>::min() && run.kernels[i].start_ns > reach) {
      after_gap.emplace_back(run.kernels[i].start_ns - reach, i);
    }
    reach = std::max(reach, run.kernels[i].end_ns);
  }
  std::sort(after_gap.rbegin(), after_gap.rend());
  for (size_t j = 0; j < after_gap.size() && j < 5; ++j) {
    a.kernels.push_back(kernel_ref(run, after_gap[j].second));
  }
  out.push_back(std::move(a));
}

void rule_below_roofline(const RunData& run, const RunTraffic& traffic, const AdviceContext& ctx,
                         std::vector<Advice>& out) {
  if (traffic.empty()) return;
  const Ceilings c = ceilings_of(ctx.session);
  if (c.bandwidth <= 0) return;
  for (const KernelTraffic& k : traffic.kernels) {
    const double measured = k.seconds();
    if (measured <= 5e-6 || k.dram_bytes() <= 0) continue;  // too short to judge
    double bound = k.dram_bytes() / c.bandwidth;
    if (!std::isnan(k.flops) && c.tensor_flops > 0) {
      const double roof = !std::isnan(k.tensor_flops) && k.tensor_flops > 0
                              ? c.tensor_flops
                              : (c.fp32_flops > 0 ? c.fp32_flops : c.tensor_flops);
      bound = std::max(bound, k.flops / roof);
    }
    if (bound <= 0 || measured / bound < ctx.below_roofline_factor) continue;
    Advice a;
    a.rule = "below-roofline";
    a.severity = "info";
    a.figures = {{"measured_ns", measured * 1e9, "ns"},
                 {"bound_ns", bound * 1e9, "ns"},
                 {"of_bound", bound / measured, "fraction"},
                 {"dram_bytes", k.dram_bytes(), "byte"}};
    if (!std::isnan(k.flops)) a.figures.push_back({"flops", k.flops, "flop"});
    a.summary = short_name(run.str(k.name)) + " takes " + format_duration(measured * 1e9) +
                "; its bytes" + (std::isnan(k.flops) ? "" : " and FLOPs") + " allow " +
                format_duration(bound * 1e9) + " (" + format_percent(bound / measured) +
                " of its roofline)";
    a.kernels.push_back(kernel_ref(run, k.kernel));
    out.push_back(std::move(a));
  }
}

}  // namespace

double Advice::figure(std::string_view name) const {
  for (const auto& f : figures) {
    if (f.name == name) return f.value;
  }
  return kUnknown;
}

const std::vector<std::string>& advice_rules() {
  static const std::vector<std::string> kRules = {
      "pointwise-chain", "glu-intermediate", "short-kernels", "launch-bound", "below-roofline"};
  return kRules;
}

double gpu_time_per_iteration(const RunData& run) {
  const std::vector<bool> timed = timed_kernel_mask(run);
  if (timed.empty() || run.info.iterations <= 0) return 0;
  int64_t sum = 0;
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    if (timed[i]) sum += run.kernels[i].end_ns - run.kernels[i].start_ns;
  }
  return static_cast<double>(sum) / run.info.iterations;
}

std::vector<Advice> advise(const RunData& run, const AdviceContext& context) {
  std::vector<Advice> out;
  if (run.kernels.empty()) return out;
  const RunTraffic traffic = run_traffic(run);
  const Iteration it = representative_iteration(run, traffic);
  rule_pointwise_chain(run, it, out);
  rule_glu_intermediate(run, it, context, out);
  rule_short_kernels(run, out);
  rule_launch_bound(run, context, out);
  rule_below_roofline(run, traffic, context, out);
  return out;
}

std::string advice_json(const std::vector<RunAdvice>& runs) {
  using nlohmann::json;
  json doc = {
      {"schema", "fusionscope.advice/1"}, {"rules", advice_rules()}, {"runs", json::array()}};
  for (const RunAdvice& r : runs) {
    json run = {{"id", r.info.id},
                {"name", r.info.name},
                {"variant", r.info.variant},
                {"advice", json::array()}};
    for (const Advice& a : r.advice) {
      json figures = json::object();
      for (const auto& f : a.figures) {
        figures[f.name] = {{"value", std::isnan(f.value) ? json(nullptr) : json(f.value)},
                           {"unit", f.unit}};
      }
      json kernels = json::array();
      for (const auto& k : a.kernels) {
        kernels.push_back({{"index", k.index},
                           {"name", k.name},
                           {"correlation_id", k.correlation_id},
                           {"start_ns", k.start_ns},
                           {"duration_ns", k.duration_ns}});
      }
      json entry = {{"rule", a.rule},
                    {"severity", a.severity},
                    {"summary", a.summary},
                    {"figures", figures},
                    {"kernels", kernels}};
      entry["cites_run"] = a.cites_run == 0 ? json(nullptr) : json(a.cites_run);
      run["advice"].push_back(std::move(entry));
    }
    doc["runs"].push_back(std::move(run));
  }
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace fusionscope::analysis
