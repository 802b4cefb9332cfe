#include "fusionscope/lab/lab_form.h"

namespace fusionscope::lab {

using kernels::MlpKind;

bool uses_hidden(MlpKind kind) {
  return kind != MlpKind::kLinear;
}
bool uses_out(MlpKind kind) {
  return kind != MlpKind::kGated;
}
bool uses_layers(MlpKind kind) {
  return kind == MlpKind::kMlp;
}

kernels::MlpConfig to_config(const LabForm& f) {
  kernels::MlpConfig c;
  c.name = f.name;
  c.kind = f.kind;
  c.rows = f.rows;
  c.dtype = f.dtype;
  c.activation = f.activation;
  c.bias = f.bias;
  switch (f.kind) {
    case MlpKind::kLinear:
      c.widths = {f.in, f.out};
      break;
    case MlpKind::kGated:
      c.widths = {f.in, f.hidden};
      break;
    case MlpKind::kMlp:
      if (f.layers < 1 || f.layers > kMaxFormLayers)
        throw kernels::ConfigError("an mlp has 1 to " + std::to_string(kMaxFormLayers) +
                                   " layers (got " + std::to_string(f.layers) + ")");
      c.widths.push_back(f.in);
      for (int i = 1; i < f.layers; ++i) c.widths.push_back(f.hidden);
      c.widths.push_back(f.out);
      break;
  }
  return c;
}

LabForm form_of(const kernels::MlpConfig& c) {
  LabForm f;
  f.name = c.name.empty() ? "custom" : c.name;
  f.kind = c.kind;
  f.rows = c.rows;
  f.dtype = c.dtype;
  f.activation = c.activation;
  f.bias = c.bias;
  const auto& w = c.widths;
  if (w.empty()) return f;
  f.in = w.front();
  switch (c.kind) {
    case MlpKind::kLinear:
      f.out = w.size() > 1 ? w[1] : f.in;
      f.layers = 1;
      break;
    case MlpKind::kGated:
      f.hidden = w.size() > 1 ? w[1] : f.hidden;
      f.out = f.in;
      f.layers = 3;
      break;
    case MlpKind::kMlp:
      f.out = w.back();
      f.layers = w.size() > 1 ? static_cast<int>(w.size() - 1) : 1;
      if (w.size() > 2) f.hidden = w[1];
      break;
  }
  return f;
}

}  // namespace fusionscope::lab
