// The sizes a person edits in the lab (rows, in, hidden, out, layers) and the configuration they
// make, in both directions: a preset or a stored run fills the form, the form makes the config.
#pragma once

#include <cstdint>
#include <string>

#include "fusionscope/kernels/config.h"

namespace fusionscope::lab {

inline constexpr int kMaxFormLayers = 64;

struct LabForm {
  std::string name = "custom";  // the configuration's label; runs are named "<name> / <variant>"
  kernels::MlpKind kind = kernels::MlpKind::kGated;
  int64_t rows = 8192;    // batch x tokens
  int64_t in = 768;       // input width (gated: the model dimension)
  int64_t hidden = 3072;  // mlp: every hidden layer's width; gated: the hidden width
  int64_t out = 768;      // output width (gated: always `in`, down maps back to it)
  int layers = 3;         // mlp: linear layers; linear: 1; gated: 3 (gate, up, down)
  kernels::DType dtype = kernels::DType::kBf16;
  kernels::Activation activation = kernels::Activation::kGeluTanh;
  bool bias = false;
  friend bool operator==(const LabForm&, const LabForm&) = default;
};

// Which sizes the kind uses: linear {in, out}; mlp {in, hidden, out, layers}; gated {in, hidden}.
bool uses_hidden(kernels::MlpKind kind);
bool uses_out(kernels::MlpKind kind);
bool uses_layers(kernels::MlpKind kind);

// The configuration the form describes; sizes are not checked here (kernels::validate does), but
// an mlp's layer count outside 1..kMaxFormLayers throws kernels::ConfigError.
kernels::MlpConfig to_config(const LabForm& form);

// The form of a configuration. An mlp with unequal hidden widths takes the first one.
LabForm form_of(const kernels::MlpConfig& config);

}  // namespace fusionscope::lab
