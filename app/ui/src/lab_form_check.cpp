#include "lab_form_check.h"

#include "fusionscope/analysis/prediction.h"
#include "fusionscope/kernels/plan.h"

namespace fusionscope::ui {

namespace {

using lab::RefusalCode;

// A short name for a configuration made in the panel: "gated 8192x768x3072 gelu-tanh bf16".
std::string compact_name(const kernels::MlpConfig& c) {
  std::string s = std::string(kernels::to_string(c.kind)) + " " + std::to_string(c.rows);
  for (int64_t w : c.widths) s += "x" + std::to_string(w);
  if (c.bias) s += " bias";
  if (c.activation != kernels::Activation::kNone)
    s += " " + std::string(kernels::to_string(c.activation));
  return s + " " + std::string(kernels::to_string(c.dtype));
}

// The configuration the form makes (lab::to_config may refuse the layer count).
std::optional<kernels::MlpConfig> form_config(const lab::LabForm& form,
                                              std::vector<lab::Refusal>& refusals) {
  kernels::MlpConfig c;
  try {
    c = lab::to_config(form);
    kernels::validate_shape(c);
  } catch (const kernels::ConfigError& e) {
    lab::add_refusal(refusals, RefusalCode::kInvalidConfig, e.what());
    return std::nullopt;
  }
  for (const auto& p : kernels::presets())
    if (analysis::same_workload(p.config, c)) {
      c.name = p.name;
      return c;
    }
  c.name = compact_name(c);
  return c;
}

}  // namespace

std::vector<kernels::Variant> panel_variants() {
  std::vector<kernels::Variant> v = kernels::all_variants();
  for (kernels::Variant t : kernels::torch_variants()) v.push_back(t);
  return v;
}

std::vector<kernels::Variant> chosen_variants(const LabPanelState& s) {
  std::vector<kernels::Variant> out;
  const std::vector<kernels::Variant> all = panel_variants();
  for (size_t i = 0; i < all.size() && i < s.variants.size(); ++i)
    if (s.variants[i]) out.push_back(all[i]);
  return out;
}

LabFormCheck check_lab_form(const LabPanelState& s, const std::optional<lab::DeviceFacts>& device) {
  LabFormCheck c;
  c.config = form_config(s.form, c.refusals);
  const std::vector<kernels::Variant> variants = chosen_variants(s);
  if (s.sweep_on) {
    try {
      c.sweep_points = lab::sweep_points(s.sweep);
    } catch (const kernels::ConfigError& e) {
      lab::add_refusal(c.refusals, RefusalCode::kSweep, e.what());
    }
  }
  if (c.config) {
    lab::LabRequest r;
    r.job.warmup = s.warmup;
    r.job.iterations = s.iterations;
    r.job.cuda_graph = s.graph;
    r.job.verify = s.verify;
    bool built = true;
    if (s.sweep_on) {
      try {
        r.sweep = lab::plan_sweep(*c.config, variants, s.sweep);
        r.job.runs = r.sweep->runs;
        c.sweep_runs = r.job.runs.size();
      } catch (const kernels::ConfigError& e) {
        lab::add_refusal(c.refusals, RefusalCode::kSweep, e.what());
        built = false;
      }
    } else {
      r.job.runs = lab::expand({*c.config}, variants);
    }
    if (built) {
      const lab::DeviceFacts none{};
      for (lab::Refusal& refusal : lab::check_request(r, device ? *device : none))
        if (device || refusal.code != RefusalCode::kNoDevice)
          lab::add_refusal(c.refusals, refusal.code, std::move(refusal.message));
      c.request = std::move(r);
    }
  } else if (device && !device->available) {
    // What else stands in the way.
    for (lab::Refusal& refusal : lab::check_request({}, *device))
      if (refusal.code == RefusalCode::kNoDevice)
        lab::add_refusal(c.refusals, refusal.code, std::move(refusal.message));
  }
  if (!device) lab::add_refusal(c.refusals, RefusalCode::kProbing, "probing the GPU...");
  return c;
}

std::string lab_form_key(const LabPanelState& s, const std::optional<lab::DeviceFacts>& device) {
  const lab::LabForm& f = s.form;
  std::string key = f.name + "|" + std::to_string(static_cast<int>(f.kind)) + "|" +
                    std::to_string(f.rows) + "x" + std::to_string(f.in) + "x" +
                    std::to_string(f.hidden) + "x" + std::to_string(f.out) + "x" +
                    std::to_string(f.layers) + "|" + std::to_string(static_cast<int>(f.dtype)) +
                    std::to_string(static_cast<int>(f.activation)) + (f.bias ? "b" : "-") + "|";
  for (bool v : s.variants) key += v ? '1' : '0';
  key += "|" + std::to_string(s.warmup) + "|" + std::to_string(s.iterations) +
         (s.graph ? "g" : "-") + (s.verify ? "v" : "-");
  if (s.sweep_on)
    key += "|sweep " + std::to_string(static_cast<int>(s.sweep.size)) + " " +
           std::to_string(s.sweep.from) + " " + std::to_string(s.sweep.to) + " " +
           std::to_string(s.sweep.steps);
  key += !device
             ? "|probing"
             : (device->available ? "|" + device->name + " " + std::to_string(device->free_bytes)
                                  : "|none");
  return key;
}

}  // namespace fusionscope::ui
