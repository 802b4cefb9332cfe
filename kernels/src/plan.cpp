// The launches each variant makes, with the work each must do: the prediction shown before a run.
// The op names are the NVTX ranges the runner opens around each launch.
#include "fusionscope/kernels/plan.h"

#include <numeric>

#include "buffers.h"

namespace fusionscope::kernels {
namespace {

// Floating-point operations per element of a pointwise function (a rough, stated count).
double act_flops(Activation a) {
  switch (a) {
    case Activation::kNone:
      return 0;
    case Activation::kRelu:
      return 1;
    case Activation::kGeluTanh:
      return 9;  // x^3, two FMAs, tanh, add, two multiplies
    case Activation::kSilu:
      return 4;  // exp, add, divide, multiply
  }
  return 0;
}

std::string act_name(Activation a) {
  return std::string(to_string(a));
}

class Builder {
 public:
  Builder(const MlpConfig& c, Variant v) : e_(static_cast<double>(dtype_bytes(c.dtype))) {
    plan_.variant = v;
    rows_ = static_cast<double>(c.rows);
  }

  void gemm(std::string op, int64_t in, int64_t out, bool bias, std::string kernel,
            Activation epilogue_act = Activation::kNone) {
    const double k = static_cast<double>(in), n = static_cast<double>(out);
    double flops = 2 * rows_ * n * k;
    if (bias) flops += rows_ * n;
    flops += rows_ * n * act_flops(epilogue_act);
    const double bytes = (rows_ * k + n * k + rows_ * n + (bias ? n : 0)) * e_;
    plan_.launches.push_back({std::move(op), std::move(kernel), flops, bytes, rows_ * n * e_});
  }

  // A pointwise kernel reading `inputs` activation tensors of `width` and writing one.
  void pointwise(std::string op, std::string kernel, int64_t width, int inputs,
                 double flops_per_element, bool bias) {
    const double n = static_cast<double>(width);
    const double bytes = (rows_ * n * (inputs + 1) + (bias ? n : 0)) * e_;
    plan_.launches.push_back(
        {std::move(op), std::move(kernel), rows_ * n * flops_per_element, bytes, rows_ * n * e_});
  }

  void raw(std::string op, std::string kernel, double flops, double bytes, double write_bytes) {
    plan_.launches.push_back({std::move(op), std::move(kernel), flops, bytes, write_bytes});
  }

  double rows() const { return rows_; }
  double elem() const { return e_; }
  Plan take() { return std::move(plan_); }

 private:
  Plan plan_;
  double rows_ = 0;
  double e_ = 2;
};

std::string gemm_kernel(bool bias, Activation epilogue_act = Activation::kNone) {
  std::string k = "cuBLASLt GEMM";
  if (bias && epilogue_act != Activation::kNone)
    return k + " + bias + " + act_name(epilogue_act) + " epilogue";
  if (bias) return k + " + bias epilogue";
  if (epilogue_act != Activation::kNone) return k + " + " + act_name(epilogue_act) + " epilogue";
  return k;
}

// One launch per kernel the layers take (fused_segments): each reads its input rows and writes
// its output rows once; the activations between its own layers stay on chip.
Plan fully_fused(const MlpConfig& c, Builder& b) {
  const auto layers = detail::layer_shapes(c);
  auto segments = detail::fused_segments(c);
  if (segments.empty()) segments.push_back({0, layers.size()});  // refused at validation
  const std::string base = c.kind == MlpKind::kLinear ? "linear" : "mlp";
  for (const auto& s : segments) {
    double flops = 0, bytes = 0;
    for (size_t i = s.first; i < s.last; ++i) {
      const double k = static_cast<double>(layers[i].in), n = static_cast<double>(layers[i].out);
      flops += 2 * b.rows() * n * k;
      if (c.bias) flops += b.rows() * n;
      if (i + 1 < layers.size()) flops += b.rows() * n * act_flops(c.activation);
      bytes += (n * k + (c.bias ? n : 0)) * b.elem();
    }
    const double out = static_cast<double>(layers[s.last - 1].out);
    bytes += b.rows() * (static_cast<double>(layers[s.first].in) + out) * b.elem();
    const std::string op = segments.size() == 1 ? base
                                                : base + ".layers" + std::to_string(s.first + 1) +
                                                      "-" + std::to_string(s.last);
    b.raw(op, "fully fused MLP (activations on chip)", flops, bytes, b.rows() * out * b.elem());
  }
  return b.take();
}

Plan linear_plan(const MlpConfig& c, Variant v, Builder& b) {
  if (v == Variant::kFullyFused) return fully_fused(c, b);
  // PyTorch's addmm already folds the bias into the cuBLASLt epilogue, so eager == epilogue.
  b.gemm("linear", c.widths[0], c.widths[1], c.bias, gemm_kernel(c.bias));
  return b.take();
}

Plan mlp_plan(const MlpConfig& c, Variant v, Builder& b) {
  if (v == Variant::kFullyFused) return fully_fused(c, b);
  const auto layers = detail::layer_shapes(c);
  const Activation act = c.activation;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string layer = "layer" + std::to_string(i);
    const bool last = i + 1 == layers.size();
    const bool has_act = !last && act != Activation::kNone;
    const int64_t in = layers[i].in, out = layers[i].out;
    switch (v) {
      case Variant::kEager:
        b.gemm(layer + ".linear", in, out, c.bias, gemm_kernel(c.bias));
        if (has_act)
          b.pointwise(layer + "." + act_name(act), act_name(act), out, 1, act_flops(act), false);
        break;
      case Variant::kEpilogue:
        if (has_act) {
          b.gemm(layer + ".linear+" + act_name(act), in, out, c.bias, gemm_kernel(c.bias, act),
                 act);
        } else {
          b.gemm(layer + ".linear", in, out, c.bias, gemm_kernel(c.bias));
        }
        break;
      case Variant::kPointwiseFused:
        if (has_act) {
          // As Inductor: mm without bias, then one kernel for bias + activation.
          b.gemm(layer + ".linear", in, out, false, gemm_kernel(false));
          const std::string what = c.bias ? "bias+" + act_name(act) : act_name(act);
          b.pointwise(layer + "." + what, "fused " + what, out, 1,
                      act_flops(act) + (c.bias ? 1 : 0), c.bias);
        } else {
          b.gemm(layer + ".linear", in, out, c.bias, gemm_kernel(c.bias));
        }
        break;
      default:
        break;
    }
  }
  return b.take();
}

Plan gated_plan(const MlpConfig& c, Variant v, Builder& b) {
  const int64_t d = c.widths[0], h = c.widths[1];
  const Activation act = c.activation;
  const std::string a = act_name(act);
  switch (v) {
    case Variant::kEager:  // the order PyTorch runs them: act(gate(x)) first, then up(x)
      b.gemm("gate", d, h, false, gemm_kernel(false));
      b.pointwise(a, a, h, 1, act_flops(act), false);
      b.gemm("up", d, h, false, gemm_kernel(false));
      b.pointwise("mul", "mul", h, 2, 1, false);
      break;
    case Variant::kEpilogue:
      b.gemm("gate+" + a, d, h, false, gemm_kernel(false, act), act);
      b.gemm("up", d, h, false, gemm_kernel(false));
      b.pointwise("mul", "mul", h, 2, 1, false);
      break;
    case Variant::kPointwiseFused:
      b.gemm("gate", d, h, false, gemm_kernel(false));
      b.gemm("up", d, h, false, gemm_kernel(false));
      b.pointwise(a + "*mul", "fused " + a + "*mul", h, 2, act_flops(act) + 1, false);
      break;
    case Variant::kGatedGemm: {
      const double rows = b.rows(), dd = static_cast<double>(d), hh = static_cast<double>(h);
      const double flops = 2 * rows * 2 * hh * dd + rows * hh * (act_flops(act) + 1);
      const double bytes = (rows * dd + 2 * hh * dd + rows * hh) * b.elem();
      b.raw("gate_up+" + a + "*mul",
            "gated GEMM, epilogue " + a +
                "(g)*u (wgmma on sm_90a, "
                "mma.sync on sm_80)",
            flops, bytes, rows * hh * b.elem());
      // The runner measures both down kernels at set-up and names its choice in the run's plan.
      b.gemm("down", h, d, false, "GEMM: the faster of cuBLASLt and the Hopper GEMM on sm_90a");
      return b.take();
    }
    default:
      break;
  }
  b.gemm("down", h, d, false, gemm_kernel(false));
  return b.take();
}

}  // namespace

double Plan::flops() const {
  return std::accumulate(launches.begin(), launches.end(), 0.0,
                         [](double s, const PlannedLaunch& l) { return s + l.flops; });
}

double Plan::min_bytes() const {
  return std::accumulate(launches.begin(), launches.end(), 0.0,
                         [](double s, const PlannedLaunch& l) { return s + l.min_bytes; });
}

Plan make_plan(const MlpConfig& c, Variant v) {
  std::string why;
  if (!supports(c, v, &why)) throw ConfigError(why);
  // PyTorch runs the plans of eager and of pointwise-fused (Inductor's fusion), op for op.
  if (is_torch_variant(v)) {
    Plan p = make_plan(c, v == Variant::kTorchEager ? Variant::kEager : Variant::kPointwiseFused);
    p.variant = v;
    for (auto& l : p.launches) {
      if (l.kernel.starts_with("cuBLASLt GEMM"))
        l.kernel = "cuBLAS GEMM (PyTorch)" + l.kernel.substr(13);
      else if (v == Variant::kTorchCompile && l.kernel.starts_with("fused "))
        l.kernel = "Triton " + l.kernel + " (Inductor)";
      else
        l.kernel = "PyTorch " + l.kernel;
    }
    return p;
  }
  Builder b(c, v);
  switch (c.kind) {
    case MlpKind::kLinear:
      return linear_plan(c, v, b);
    case MlpKind::kMlp:
      return mlp_plan(c, v, b);
    case MlpKind::kGated:
      return gated_plan(c, v, b);
  }
  throw ConfigError("unknown MLP kind");
}

}  // namespace fusionscope::kernels
