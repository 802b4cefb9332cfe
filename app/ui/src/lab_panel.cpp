#include "lab_panel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>

#include "fusionscope/analysis/format.h"
#include "fusionscope/kernels/plan.h"
#include "fusionscope/lab/torch_variants.h"
#include "lab_form_check.h"
#include "session_edit.h"
#include "ui_probe.h"
#include "view_registry.h"
#include "views.h"

namespace fusionscope::ui {

namespace {

using analysis::format_bytes;
using analysis::format_duration;
using analysis::format_flops;
using kernels::Variant;

// Why the PyTorch variants cannot run here ("" when they can; "checking..." until Python has
// answered, which it does off the UI thread).
std::string torch_reason(LabPanelState& s) {
  if (!s.torch_check.valid())
    s.torch_check = std::async(std::launch::async, [] { return lab::torch_unavailable_reason(); });
  if (s.torch_check.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    return "checking whether python3 has PyTorch...";
  return s.torch_check.get();
}

std::optional<analysis::DevicePeaks> device_peaks(const LabPanelState& s) {
  if (!s.controller) return std::nullopt;
  const std::optional<lab::DeviceFacts> d = s.controller->device();
  if (!d || !d->available) return std::nullopt;
  return analysis::DevicePeaks{d->name, d->bandwidth_bytes_per_s, d->tensor_flops, d->fp32_flops};
}

// The latest run of this workload in this variant (and graph mode) that has finished.
const LoadedRun* latest_run(const Session& session, const kernels::MlpConfig& config, Variant v,
                            bool graph) {
  for (auto it = session.runs.rbegin(); it != session.runs.rend(); ++it) {
    const storage::RunInfo& info = (*it)->data.info;
    if (info.variant != kernels::to_string(v) || info.cuda_graph != graph) continue;
    if (info.status == storage::RunStatus::kRunning || info.status == storage::RunStatus::kPending)
      continue;
    const std::optional<kernels::MlpConfig> c = analysis::run_config(info);
    if (c && analysis::same_workload(*c, config)) return it->get();
  }
  return nullptr;
}

// Chooses eager (if the job ran it) against the job's fastest other run for the comparison, and
// puts the job's runs on the timeline.
void focus_job_runs(AppState& app, const std::vector<int64_t>& ids) {
  const Session& session = *app.session;
  std::vector<const LoadedRun*> runs;
  for (int64_t id : ids)
    if (const LoadedRun* r = session.find_run(id); r && r->summary.kernels > 0) runs.push_back(r);
  if (runs.empty()) return;
  app.runs.selected.clear();
  for (size_t i = 0; i < runs.size() && i < 4; ++i)
    app.runs.selected.push_back(runs[i]->data.info.id);
  app.runs.current = app.runs.selected.front();
  const LoadedRun* a = runs.front();
  for (const LoadedRun* r : runs)
    if (r->data.info.variant == "eager") {
      a = r;
      break;
    }
  const LoadedRun* b = nullptr;
  for (const LoadedRun* r : runs)
    if (r != a && (!b || r->summary.kernel_time_per_iteration_ns() <
                             b->summary.kernel_time_per_iteration_ns()))
      b = r;
  app.comparison.a = a->data.info.id;
  app.comparison.b = b ? b->data.info.id : -1;
  app.stats.run = (b ? b : a)->data.info.id;
}

// A size: a logarithmic slider and a box to type the value (which may be anything: invalid
// values are refused with the reason rather than clamped away).
bool size_row(AppState& app, const char* label, const char* id, int64_t* value, int64_t lo,
              int64_t hi, bool width, bool enabled, const char* disabled_note = nullptr) {
  const float em = ImGui::GetFontSize();
  bool changed = false;
  ImGui::PushID(id);
  if (!enabled) ImGui::BeginDisabled();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(label);
  ImGui::SameLine(em * 8.5f);
  int64_t slider = std::clamp(*value, lo, hi);
  ImGui::SetNextItemWidth(em * 9);
  if (ImGui::SliderScalar("##slider", ImGuiDataType_S64, &slider, &lo, &hi, "",
                          ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_NoInput)) {
    if (width) slider = std::max<int64_t>(8, (slider + 4) / 8 * 8);
    *value = slider;
    changed = true;
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 6.5f);
  if (ImGui::InputScalar("##value", ImGuiDataType_S64, value, nullptr, nullptr, "%lld",
                         ImGuiInputTextFlags_AutoSelectAll))
    changed = true;
  probe_item(app, std::string("lab.") + id);
  if (!enabled) ImGui::EndDisabled();
  if (!enabled && disabled_note) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", disabled_note);
  }
  ImGui::PopID();
  return changed;
}

template <class E>
bool enum_combo(const char* id, E* value, const std::vector<E>& values, float width) {
  bool changed = false;
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo(id, std::string(kernels::to_string(*value)).c_str())) {
    for (E v : values) {
      if (ImGui::Selectable(std::string(kernels::to_string(v)).c_str(), v == *value)) {
        *value = v;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  return changed;
}

void draw_preset_row(AppState& app) {
  LabPanelState& s = app.lab;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Preset");
  ImGui::SameLine(ImGui::GetFontSize() * 8.5f);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 16);
  if (ImGui::BeginCombo("##preset", s.preset.empty() ? "(custom)" : s.preset.c_str())) {
    for (const auto& p : kernels::presets()) {
      if (ImGui::Selectable(p.name.c_str(), p.name == s.preset)) {
        s.preset = p.name;
        s.form = lab::form_of(p.config);
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.description.c_str());
    }
    ImGui::EndCombo();
  }
}

void draw_shape(AppState& app) {
  LabPanelState& s = app.lab;
  lab::LabForm& f = s.form;
  const lab::LabForm before = f;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Kind");
  ImGui::SameLine(ImGui::GetFontSize() * 8.5f);
  int kind = static_cast<int>(f.kind);
  ImGui::RadioButton("linear", &kind, static_cast<int>(kernels::MlpKind::kLinear));
  ImGui::SameLine();
  ImGui::RadioButton("mlp", &kind, static_cast<int>(kernels::MlpKind::kMlp));
  ImGui::SameLine();
  ImGui::RadioButton("gated", &kind, static_cast<int>(kernels::MlpKind::kGated));
  if (kind != static_cast<int>(f.kind)) {
    f.kind = static_cast<kernels::MlpKind>(kind);
    // Keep the combination valid: a linear layer has no activation, a gated MLP needs one.
    if (f.kind == kernels::MlpKind::kLinear) f.activation = kernels::Activation::kNone;
    if (f.kind == kernels::MlpKind::kGated) {
      if (f.activation == kernels::Activation::kNone) f.activation = kernels::Activation::kGeluTanh;
      f.bias = false;
    }
    if (f.kind == kernels::MlpKind::kMlp && f.activation == kernels::Activation::kNone)
      f.activation = kernels::Activation::kRelu;
  }
  const bool gated = f.kind == kernels::MlpKind::kGated;
  size_row(app, "rows", "rows", &f.rows, 1, int64_t{1} << 24, false, true);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("batch x tokens");
  size_row(app, gated ? "in (dim)" : "in", "in", &f.in, 8, 65536, true, true);
  size_row(app, "hidden", "hidden", &f.hidden, 8, 65536, true, lab::uses_hidden(f.kind), "(none)");
  size_row(app, "out", "out", &f.out, 8, 65536, true, lab::uses_out(f.kind),
           gated ? "= in" : nullptr);
  {
    const bool layers = lab::uses_layers(f.kind);
    int64_t n = f.layers;
    if (!layers) n = f.kind == kernels::MlpKind::kGated ? 3 : 1;
    if (size_row(app, "layers", "layers", &n, 1, lab::kMaxFormLayers, false, layers,
                 layers ? nullptr : (gated ? "(3 GEMMs)" : "(one)")) &&
        layers)
      f.layers = static_cast<int>(std::clamp<int64_t>(n, -1000000, 1000000));
  }
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("dtype");
  ImGui::SameLine(ImGui::GetFontSize() * 8.5f);
  enum_combo("##dtype", &f.dtype,
             {kernels::DType::kBf16, kernels::DType::kFp16, kernels::DType::kFp32},
             ImGui::GetFontSize() * 5);
  ImGui::SameLine();
  ImGui::TextUnformatted("activation");
  ImGui::SameLine();
  enum_combo("##activation", &f.activation,
             {kernels::Activation::kNone, kernels::Activation::kRelu,
              kernels::Activation::kGeluTanh, kernels::Activation::kSilu},
             ImGui::GetFontSize() * 6.5f);
  ImGui::SameLine();
  ImGui::Checkbox("bias", &f.bias);
  if (!(f == before)) s.preset.clear();
  // A preset the form happens to equal again is named as such.
  if (s.preset.empty())
    for (const auto& p : kernels::presets()) {
      lab::LabForm pf = lab::form_of(p.config);
      pf.name = f.name;
      if (pf == f) s.preset = p.name;
    }
}

void draw_variants(AppState& app, const kernels::MlpConfig* config) {
  LabPanelState& s = app.lab;
  ImGui::TextUnformatted("Variants");
  const std::vector<Variant> all = panel_variants();
  for (size_t i = 0; i < all.size(); ++i) {
    std::string why;
    bool ok = config && kernels::supports(*config, all[i], &why);
    if (ok && kernels::is_torch_variant(all[i])) {
      why = torch_reason(s);
      ok = why.empty();
    }
    if (!config)
      why = s.check.refusals.empty() ? "the configuration is not valid"
                                     : s.check.refusals.front().message;
    if (i % 3 != 0)
      ImGui::SameLine(ImGui::GetFontSize() * (1.0f + 9.5f * static_cast<float>(i % 3)));
    if (!ok) ImGui::BeginDisabled();
    bool on = s.variants[i] && ok;
    if (ImGui::Checkbox(std::string(kernels::to_string(all[i])).c_str(), &on)) s.variants[i] = on;
    if (!ok) ImGui::EndDisabled();
    if (!ok && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
      ImGui::TextUnformatted(why.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
    probe_item(app, "lab.variant." + std::string(kernels::to_string(all[i])));
  }
}

void draw_options(AppState& app) {
  LabPanelState& s = app.lab;
  const float em = ImGui::GetFontSize();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Iterations");
  ImGui::SameLine(em * 8.5f);
  ImGui::SetNextItemWidth(em * 5);
  ImGui::InputInt("warm-up##warmup", &s.warmup, 0, 0, ImGuiInputTextFlags_AutoSelectAll);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 5);
  ImGui::InputInt("timed##iterations", &s.iterations, 0, 0, ImGuiInputTextFlags_AutoSelectAll);
  ImGui::Checkbox("CUDA graph", &s.graph);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("capture one forward pass in a CUDA graph and replay it each iteration");
  ImGui::SameLine();
  ImGui::Checkbox("check against the fp32 reference", &s.verify);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "after timing, compare the output with an fp32 reference; a mismatch fails the run. The "
        "reference's kernels follow the timed iterations in the trace");
}

void draw_sweep_options(AppState& app, const kernels::MlpConfig* config) {
  LabPanelState& s = app.lab;
  const float em = ImGui::GetFontSize();
  ImGui::Checkbox("Sweep one size", &s.sweep_on);
  probe_item(app, "lab.sweep");
  if (!s.sweep_on) return;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 6);
  if (ImGui::BeginCombo("##sweep_size", std::string(lab::to_string(s.sweep.size)).c_str())) {
    for (lab::SweepSize v : {lab::SweepSize::kRows, lab::SweepSize::kIn, lab::SweepSize::kHidden,
                             lab::SweepSize::kOut})
      if (ImGui::Selectable(std::string(lab::to_string(v)).c_str(), v == s.sweep.size))
        s.sweep.size = v;
    ImGui::EndCombo();
  }
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("from");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 6);
  ImGui::InputScalar("##sweep_from", ImGuiDataType_S64, &s.sweep.from, nullptr, nullptr, "%lld",
                     ImGuiInputTextFlags_AutoSelectAll);
  ImGui::SameLine();
  ImGui::TextUnformatted("to");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 6);
  ImGui::InputScalar("##sweep_to", ImGuiDataType_S64, &s.sweep.to, nullptr, nullptr, "%lld",
                     ImGuiInputTextFlags_AutoSelectAll);
  ImGui::SameLine();
  int mode = s.sweep.steps == 0 ? 0 : 1;
  ImGui::RadioButton("doubling", &mode, 0);
  ImGui::SameLine();
  ImGui::RadioButton("points", &mode, 1);
  if (mode == 0) s.sweep.steps = 0;
  if (mode == 1) {
    if (s.sweep.steps == 0) s.sweep.steps = 6;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(em * 4);
    ImGui::InputInt("##sweep_steps", &s.sweep.steps, 0, 0, ImGuiInputTextFlags_AutoSelectAll);
    if (s.sweep.steps == 0) s.sweep.steps = 1;  // 0 would switch back to doubling
  }
  const std::vector<int64_t>& points = s.check.sweep_points;
  if (points.empty()) return;  // the refusal below says why
  std::string text = std::to_string(points.size()) + " points:";
  for (size_t i = 0; i < points.size(); ++i) {
    if (points.size() > 8 && i == 3) {
      text += " ...";
      i = points.size() - 3;
    }
    text += " " + std::to_string(points[i]);
  }
  if (config) text += "  (" + std::to_string(s.check.sweep_runs) + " runs)";
  ImGui::TextDisabled("%s", text.c_str());
}

float progress_fraction(const lab::LabStatus& st) {
  const lab::Progress& p = st.progress;
  if (p.run_count == 0) return 0;
  float within = 0;
  const float it =
      p.total > 0 ? static_cast<float>(p.iteration + 1) / static_cast<float>(p.total) : 0;
  switch (p.stage) {
    case lab::Progress::Stage::kStarting:
      within = 0;
      break;
    case lab::Progress::Stage::kSetup:
      within = 0.05f;
      break;
    case lab::Progress::Stage::kWarmup:
      within = 0.05f + 0.15f * it;
      break;
    case lab::Progress::Stage::kTimed:
      within = 0.2f + 0.7f * it;
      break;
    case lab::Progress::Stage::kFinished:
      within = 1;
      break;
    default:
      within = 0.95f;
      break;
  }
  return (static_cast<float>(p.run_index) + within) / static_cast<float>(p.run_count);
}

void draw_run_controls(AppState& app) {
  LabPanelState& s = app.lab;
  const float em = ImGui::GetFontSize();
  for (const lab::Refusal& r : s.check.refusals) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(app.theme.bad, "%s", r.message.c_str());
    ImGui::PopTextWrapPos();
  }
  const lab::LabStatus st = s.controller ? s.controller->status() : lab::LabStatus{};
  if (st.busy()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(st.describe_progress().c_str());
    ImGui::PopTextWrapPos();
    char runs[32];
    std::snprintf(runs, sizeof runs, "%zu / %zu runs", st.finished.size(), st.progress.run_count);
    ImGui::ProgressBar(progress_fraction(st), ImVec2(-em * 7, 0), runs);
    ImGui::SameLine();
    if (st.state == lab::LabStatus::State::kCancelling) {
      ImGui::BeginDisabled();
      ImGui::Button("Cancelling", ImVec2(em * 6.5f, 0));
      ImGui::EndDisabled();
    } else if (ImGui::Button("Cancel", ImVec2(em * 6.5f, 0))) {
      s.controller->cancel();
    }
    probe_item(app, "lab.cancel");
    return;
  }
  if (!s.run_enabled) ImGui::BeginDisabled();
  const bool run = ImGui::Button("Run", ImVec2(em * 6.5f, 0));
  if (!s.run_enabled) ImGui::EndDisabled();
  probe_item(app, "lab.run");
  if (!s.run_enabled && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled) &&
      !s.run_disabled_reason.empty())
    ImGui::SetTooltip("%s", s.run_disabled_reason.c_str());
  std::string hint;
  if (!app.session) {
    hint = "Run will create a new session for the runs.";
  } else if (std::string why; !session_writable(*app.session, &why)) {
    hint = app.session->is_sample ? "The sample is read-only: Run offers a new session first."
                                  : "This session is read-only: Run offers a new session first.";
  } else {
    hint = "Runs go into " + app.session->path.filename().string() + ".";
  }
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("%s", hint.c_str());
  ImGui::PopTextWrapPos();
  if (!s.start_error.empty()) ImGui::TextColored(app.theme.bad, "%s", s.start_error.c_str());
  if (st.state == lab::LabStatus::State::kDone) {
    ImGui::TextDisabled("Last job: %s", st.summary().c_str());
    for (const lab::FinishedRun& r : st.finished)
      if (r.status == storage::RunStatus::kFailed) {
        ImGui::PushTextWrapPos(0);
        ImGui::TextColored(app.theme.bad, "%s: %s", r.name.c_str(), r.message.c_str());
        ImGui::PopTextWrapPos();
      }
  }
  if (run && s.check.request) start_lab_run(app, *s.check.request);
}

void draw_config_column(AppState& app, const kernels::MlpConfig* config) {
  draw_preset_row(app);
  draw_shape(app);
  ImGui::Spacing();
  draw_variants(app, config);
  ImGui::Spacing();
  draw_options(app);
  ImGui::Spacing();
  draw_sweep_options(app, config);
  ImGui::Separator();
  draw_run_controls(app);
}

// The roofline fraction's colour follows analysis::SurpriseThresholds: red where it is a
// surprise (far below the bound, or clearly faster than it), amber just above 100 %.
ImVec4 fraction_color(const Theme& theme, double f) {
  const analysis::SurpriseThresholds t;
  if (f < t.far_below_roofline || f > 1.0 / t.faster_than_bound) return theme.bad;
  if (f > 1.0) return theme.accent;
  if (f >= 0.5) return theme.good;
  return ImVec4(0.85f, 0.85f, 0.88f, 1.0f);
}

void draw_variant_row(AppState& app, const LabVariantRow& row) {
  const Theme& theme = app.theme;
  const analysis::VariantPrediction& p = *row.prediction;
  const analysis::VariantOutcome* o = row.outcome ? &*row.outcome : nullptr;
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  const bool open =
      ImGui::TreeNodeEx(std::string(kernels::to_string(row.variant)).c_str(),
                        ImGuiTreeNodeFlags_SpanFullWidth | ImGuiTreeNodeFlags_DefaultOpen);
  ImGui::TableSetColumnIndex(1);
  ImGui::Text("%zu", p.kernels());
  ImGui::TableSetColumnIndex(2);
  ImGui::TextUnformatted(format_flops(p.flops).c_str());
  ImGui::TableSetColumnIndex(3);
  ImGui::TextUnformatted(format_bytes(p.min_bytes).c_str());
  ImGui::TableSetColumnIndex(4);
  if (p.bound_ns > 0)
    ImGui::TextUnformatted(format_duration(p.bound_ns).c_str());
  else
    ImGui::TextDisabled("-");
  ImGui::TableSetColumnIndex(5);
  if (o && o->measured) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", std::round(o->measured_kernels * 100) / 100);
    if (o->has(analysis::SurpriseKind::kKernelCount))
      ImGui::TextColored(theme.bad, "%s", buf);
    else
      ImGui::TextUnformatted(buf);
  } else {
    ImGui::TextDisabled("-");
  }
  ImGui::TableSetColumnIndex(6);
  if (o && o->measured)
    ImGui::TextUnformatted(format_duration(o->measured_ns).c_str());
  else
    ImGui::TextDisabled("-");
  ImGui::TableSetColumnIndex(7);
  if (o && o->roofline_fraction)
    ImGui::TextColored(fraction_color(theme, *o->roofline_fraction), "%s",
                       analysis::format_percent(*o->roofline_fraction).c_str());
  else
    ImGui::TextDisabled("-");
  ImGui::TableSetColumnIndex(8);
  if (o) {
    const bool failed = o->status == storage::RunStatus::kFailed;
    const char* check = o->has(analysis::SurpriseKind::kCheckFailed) ? "check failed" : nullptr;
    if (failed)
      ImGui::TextColored(theme.bad, "%s", check ? check : "failed");
    else
      ImGui::TextDisabled("%s", row.run_name.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", row.run_name.c_str());
  } else {
    ImGui::TextDisabled("not run yet");
  }
  if (!open) return;
  // One row per op: the planned launches' bound next to the op's measured time.
  std::vector<const analysis::OpOutcome*> ops;
  if (o)
    for (const auto& op : o->ops) ops.push_back(&op);
  auto planned_kernel = [&](const std::string& op) -> std::string {
    for (const auto& l : p.launches)
      if (l.op == op) return l.kernel + (l.memory_bound ? "  (memory-bound)" : "  (compute-bound)");
    return "not in the plan";
  };
  auto op_row = [&](const std::string& op, int planned, double flops, double bytes, double bound,
                    const analysis::OpOutcome* m) {
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::Indent(ImGui::GetFontSize());
    ImGui::TextColored(m && !m->planned ? theme.bad : ImVec4(0.8f, 0.82f, 0.86f, 1), "%s",
                       op.empty() ? "(no op)" : op.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", planned_kernel(op).c_str());
    ImGui::Unindent(ImGui::GetFontSize());
    ImGui::TableSetColumnIndex(1);
    if (planned > 0) ImGui::TextDisabled("%d", planned);
    ImGui::TableSetColumnIndex(2);
    if (flops > 0) ImGui::TextDisabled("%s", format_flops(flops).c_str());
    ImGui::TableSetColumnIndex(3);
    if (bytes > 0) ImGui::TextDisabled("%s", format_bytes(bytes).c_str());
    ImGui::TableSetColumnIndex(4);
    if (bound > 0) ImGui::TextDisabled("%s", format_duration(bound).c_str());
    if (!m) return;
    ImGui::TableSetColumnIndex(5);
    if (m->measured) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", std::round(m->measured_kernels * 100) / 100);
      if (m->measured_kernels != m->planned_kernels)
        ImGui::TextColored(theme.bad, "%s", buf);
      else
        ImGui::TextDisabled("%s", buf);
    } else {
      ImGui::TextColored(theme.bad, "none");
    }
    ImGui::TableSetColumnIndex(6);
    if (m->measured) ImGui::TextDisabled("%s", format_duration(m->measured_ns).c_str());
    ImGui::TableSetColumnIndex(7);
    if (m->roofline_fraction)
      ImGui::TextColored(fraction_color(theme, *m->roofline_fraction), "%s",
                         analysis::format_percent(*m->roofline_fraction).c_str());
  };
  // Planned ops in plan order (several launches of one op add up), then unplanned ones.
  std::vector<std::string> seen;
  for (const auto& l : p.launches) {
    if (std::find(seen.begin(), seen.end(), l.op) != seen.end()) continue;
    seen.push_back(l.op);
    int n = 0;
    double flops = 0, bytes = 0, bound = 0;
    for (const auto& k : p.launches)
      if (k.op == l.op) {
        ++n;
        flops += k.flops;
        bytes += k.min_bytes;
        bound += k.bound_ns;
      }
    const analysis::OpOutcome* m = nullptr;
    for (const auto* op : ops)
      if (op->op == l.op) m = op;
    op_row(l.op, n, flops, bytes, bound, m);
  }
  for (const auto* op : ops)
    if (!op->planned) op_row(op->op, 0, 0, 0, 0, op);
  ImGui::TreePop();
}

void draw_results_column(AppState& app, const kernels::MlpConfig* config) {
  const LabPanelState& s = app.lab;
  const Theme& theme = app.theme;
  ImGui::TextColored(theme.accent, "Guess first");
  ImGui::SameLine();
  ImGui::TextDisabled(
      "%s", config ? kernels::describe(*config).c_str() : "(the configuration is not valid)");
  if (s.peaks.source.empty()) {
    ImGui::TextDisabled(
        "No GPU peaks known (no device here, none in the session): FLOPs and bytes only.");
  } else {
    const kernels::DType dtype = config ? config->dtype : kernels::DType::kBf16;
    ImGui::TextDisabled("Roofline from %s: %s, %s %s", s.peaks.source.c_str(),
                        analysis::format_bandwidth(s.peaks.bandwidth_bytes_per_s).c_str(),
                        analysis::format_flop_rate(s.peaks.flop_rate(dtype)).c_str(),
                        dtype == kernels::DType::kFp32 ? "FP32" : "tensor");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "bound = the sum over the plan's kernels of max(FLOPs / FLOP rate, bytes / "
          "bandwidth):\neach kernel at its own roofline, one after another");
  }
  if (!config) {
    ImGui::Spacing();
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(theme.bad, "Nothing to guess: %s",
                       s.check.refusals.empty() ? "the configuration is not valid"
                                                : s.check.refusals.front().message.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp |
                                ImGuiTableFlags_ScrollY;
  // As tall as its rows (every variant open) up to most of the column; the surprises go below.
  size_t lines = 1;
  for (const LabVariantRow& row : s.rows) {
    if (!row.chosen) continue;
    lines += 1;
    if (row.prediction) lines += row.prediction->launches.size();
    if (row.outcome)
      for (const auto& op : row.outcome->ops) lines += op.planned ? 0 : 1;
  }
  const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y + 1;
  const float table_h = std::min(ImGui::GetContentRegionAvail().y * 0.75f,
                                 row_h * static_cast<float>(lines) + row_h * 0.5f);
  if (ImGui::BeginTable("##lab_variants", 9, flags, ImVec2(0, table_h))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Variant / op", ImGuiTableColumnFlags_WidthStretch, 1.7f);
    ImGui::TableSetupColumn("Kernels", ImGuiTableColumnFlags_WidthStretch, 0.7f);
    ImGui::TableSetupColumn("FLOPs", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("Min bytes", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("Bound", ImGuiTableColumnFlags_WidthStretch, 0.9f);
    ImGui::TableSetupColumn("Measured", ImGuiTableColumnFlags_WidthStretch, 0.8f);
    ImGui::TableSetupColumn("GPU / iter", ImGuiTableColumnFlags_WidthStretch, 0.9f);
    ImGui::TableSetupColumn("Roofline", ImGuiTableColumnFlags_WidthStretch, 0.8f);
    ImGui::TableSetupColumn("Run", ImGuiTableColumnFlags_WidthStretch, 2.0f);
    ImGui::TableHeadersRow();
    for (const LabVariantRow& row : s.rows) {
      if (!row.chosen) continue;
      if (!row.supported || !row.prediction) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextDisabled("%s", std::string(kernels::to_string(row.variant)).c_str());
        ImGui::TableSetColumnIndex(1);
        ImGui::TextDisabled("-");
        ImGui::TableSetColumnIndex(8);
        ImGui::TextDisabled("does not apply");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", row.why_not.c_str());
        continue;
      }
      ImGui::PushID(static_cast<int>(row.variant));
      draw_variant_row(app, row);
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  // Then look: what did not go as guessed.
  bool any = false;
  for (const LabVariantRow& row : s.rows) {
    if (!row.chosen || !row.outcome) continue;
    for (const analysis::Surprise& sp : row.outcome->surprises) {
      if (!any) {
        ImGui::TextColored(theme.accent, "Surprises");
        any = true;
      }
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(sp.kind == analysis::SurpriseKind::kFasterThanBound ||
                                 sp.kind == analysis::SurpriseKind::kNoTrace
                             ? theme.accent
                             : theme.bad,
                         "%s: %s", std::string(kernels::to_string(row.variant)).c_str(),
                         sp.message.c_str());
      ImGui::PopTextWrapPos();
    }
  }
  bool measured = false;
  for (const LabVariantRow& row : s.rows) measured = measured || (row.chosen && row.outcome);
  if (!any && measured) ImGui::TextColored(theme.good, "No surprises: every run went as guessed.");
  if (!measured)
    ImGui::TextDisabled(
        "Then look: run it, and each variant's latest run of this configuration in the session "
        "shows here next to the guess.");
  else
    ImGui::TextDisabled("Measured: each variant's latest run of this configuration%s.",
                        s.graph ? " replayed from a CUDA graph" : "");
}

}  // namespace

void ensure_lab_controller(AppState& app) {
  if (!app.lab.controller) app.lab.controller = lab::make_lab_controller();
}

void update_lab_rows(AppState& app) {
  LabPanelState& s = app.lab;
  const std::optional<lab::DeviceFacts> facts =
      s.controller ? s.controller->device() : std::optional<lab::DeviceFacts>();
  // The form is checked again only when something it depends on changed.
  std::string form_key = lab_form_key(s, facts);
  if (form_key != s.check_key) {
    s.check = check_lab_form(s, facts);
    s.check_key = std::move(form_key);
  }
  const std::optional<kernels::MlpConfig>& config = s.check.config;
  const std::optional<analysis::DevicePeaks> dev = device_peaks(s);

  std::string key = config ? kernels::to_json(*config) : std::string("invalid");
  for (bool v : s.variants) key += v ? '1' : '0';
  key += s.graph ? "g" : "-";
  key += facts ? (facts->available ? facts->name : "none") : "probing";
  if (app.session) {
    key += "|" + app.session->path.string() + "|" + std::to_string(app.session->runs.size());
    for (const auto& r : app.session->runs)
      key += "," + std::to_string(r->data.info.id) + ":" +
             std::to_string(static_cast<int>(r->data.info.status));
  }
  if (key != s.cache_key) {
    s.cache_key = key;
    s.peaks =
        analysis::choose_peaks(app.session ? &app.session->info : nullptr, dev ? &*dev : nullptr);
    s.rows.clear();
    for (Variant v : panel_variants()) {
      LabVariantRow row;
      row.variant = v;
      row.chosen = s.variants[static_cast<size_t>(v)];
      row.supported = config && kernels::supports(*config, v, &row.why_not);
      if (row.supported && kernels::is_torch_variant(v)) {
        row.why_not = torch_reason(s);
        row.supported = row.why_not.empty();
      }
      if (row.supported) {
        row.prediction = analysis::predict(*config, v, s.peaks);
        if (app.session)
          if (const LoadedRun* run = latest_run(*app.session, *config, v, s.graph)) {
            row.outcome = analysis::compare_to_prediction(*row.prediction, run->data);
            row.run_name = run_label(run->data.info);
          }
      }
      s.rows.push_back(std::move(row));
    }
  }
  const bool busy = s.controller && s.controller->busy();
  s.run_enabled = s.check.refusals.empty() && s.check.request && !busy;
  s.run_disabled_reason = busy ? "a job is running"
                               : (s.check.refusals.empty() ? "" : s.check.refusals.front().message);
}

void start_lab_run(AppState& app, lab::LabRequest request) {
  LabPanelState& s = app.lab;
  ensure_lab_controller(app);
  s.start_error.clear();
  std::string why_read_only;
  if (!app.session) {
    why_read_only = "No session is open.";
  } else if (!session_writable(*app.session, &why_read_only)) {
    // why_read_only says why
  } else {
    std::string why;
    if (!s.controller->start(app.session->path, request, &why)) {
      s.start_error = why;
      return;
    }
    s.job_runs.clear();
    s.job_seen_done = false;
    app.status = "Lab: started " + std::to_string(request.job.runs.size()) +
                 (request.job.runs.size() == 1 ? " run" : " runs");
    return;
  }
  app.edit.pending.request = std::move(request);
  app.edit.pending.why_read_only = why_read_only;
  app.edit.pending.offer_requested = true;
}

void sync_lab(AppState& app) {
  LabPanelState& s = app.lab;
  if (!s.controller) return;
  const std::vector<int64_t> finished = s.controller->take_finished_runs();
  const lab::LabStatus st = s.controller->status();
  const bool here = app.session && same_file(app.session->path, st.session);
  if (here && !finished.empty()) {
    try {
      load_runs_into(*app.session, finished);
    } catch (const std::exception& e) {
      app.status = std::string("Lab: cannot read the new runs: ") + e.what();
    }
  }
  if (st.busy()) {
    app.status = "Lab: " + st.describe_progress();
    return;
  }
  if (s.job_seen_done || st.state != lab::LabStatus::State::kDone) return;
  s.job_seen_done = true;
  s.job_runs = st.run_ids;
  app.status = "Lab: " + st.summary();
  if (!here) return;
  try {
    load_runs_into(*app.session, {});  // the header (GPU) and properties (sweeps)
  } catch (const storage::StoreError& e) {
    app.status = "Lab: " + st.summary() + "; cannot read the session's header: " + e.what();
  }
  focus_job_runs(app, st.run_ids);
  if (!st.sweep_key.empty()) {
    app.sweep.key = st.sweep_key;
    show_view(app, "sweep");
  }
}

void draw_lab_panel(AppState& app) {
  ensure_lab_controller(app);
  update_lab_rows(app);
  const std::optional<kernels::MlpConfig>& config = app.lab.check.config;
  const float em = ImGui::GetFontSize();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float left_w = std::min(em * 30, avail.x * 0.45f);
  ImGui::BeginChild("##lab_config", ImVec2(left_w, avail.y), true);
  draw_config_column(app, config ? &*config : nullptr);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##lab_results", ImVec2(0, avail.y), false);
  draw_results_column(app, config ? &*config : nullptr);
  ImGui::EndChild();
}

}  // namespace fusionscope::ui
