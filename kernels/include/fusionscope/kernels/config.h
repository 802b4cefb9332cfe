// MLP configurations and variants: what to run, independent of any GPU.
// This header is CPU-only (no CUDA) so analysis, the lab and the command line can use it anywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fusionscope::kernels {

// A configuration that cannot run, with a reason meant for a person.
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class MlpKind : uint8_t { kLinear, kMlp, kGated };
enum class DType : uint8_t { kFp32, kFp16, kBf16 };
enum class Activation : uint8_t { kNone, kRelu, kGeluTanh, kSilu };

// Each variant is a named plan of kernel launches (see plan.h).
enum class Variant : uint8_t {
  kEager,           // one kernel per op, as PyTorch eager
  kEpilogue,        // bias and activation folded into the GEMM epilogue (cuBLASLt)
  kPointwiseFused,  // GEMMs + one fused activation*multiply kernel, as torch.compile
  kGatedGemm,       // gate and up in one GEMM whose epilogue writes act(g)*u; then down
  kFullyFused,      // the whole MLP in one kernel, activations on chip (narrow widths)
  // PyTorch itself, run by the Lab in a Python subprocess under injection capture
  // (scripts/torch_mlp.py): its plans are those of eager and pointwise-fused.
  kTorchEager,    // PyTorch eager: one kernel per op
  kTorchCompile,  // torch.compile (Inductor): the activation and multiply fused into one kernel
};

struct MlpConfig {
  std::string name;  // a label, e.g. the preset's name
  MlpKind kind = MlpKind::kLinear;
  int64_t rows = 0;  // batch x tokens
  // linear: {in, out}; mlp: {in, hidden..., out}; gated: {dim, hidden} (down maps hidden -> dim).
  std::vector<int64_t> widths;
  bool bias = false;
  DType dtype = DType::kBf16;
  Activation activation = Activation::kNone;

  friend bool operator==(const MlpConfig&, const MlpConfig&) = default;
};

std::string_view to_string(MlpKind k);
std::string_view to_string(DType d);
std::string_view to_string(Activation a);
std::string_view to_string(Variant v);
// Parsers accept the names to_string() prints; they throw ConfigError on anything else.
MlpKind parse_kind(std::string_view s);
DType parse_dtype(std::string_view s);
Activation parse_activation(std::string_view s);
Variant parse_variant(std::string_view s);
// fusionscope's own variants (what "all" means in job files and `capture --variants`).
std::vector<Variant> all_variants();
// The PyTorch variants, run by the Lab through Python (not by the runner).
std::vector<Variant> torch_variants();
bool is_torch_variant(Variant v);

size_t dtype_bytes(DType d);

// JSON round trip (the form stored in a run's config_json and used by config files).
std::string to_json(const MlpConfig& c);
MlpConfig config_from_json(std::string_view json);  // throws ConfigError

// Named workloads: the reference post's and a narrow fully fused MLP.
struct Preset {
  std::string name;
  std::string description;
  MlpConfig config;
};
const std::vector<Preset>& presets();
std::optional<MlpConfig> find_preset(std::string_view name);

// Checks sizes and the variant before anything touches the GPU. Throws ConfigError naming the
// problem (zero or negative sizes, buffers that cannot fit in free_device_bytes when given,
// unsupported variant/dtype/width combinations).
void validate(const MlpConfig& c, Variant v, std::optional<uint64_t> free_device_bytes = {});
// Whether a variant applies to a configuration; if not, why (no throw).
bool supports(const MlpConfig& c, Variant v, std::string* why = nullptr);
// Device memory the runner allocates for this configuration and variant, in bytes.
uint64_t device_bytes_needed(const MlpConfig& c, Variant v);

// --- Additions (the declarations above are the stable interface) ---

// Variant-independent checks (kind, sizes, widths, activation/bias rules). validate() calls it;
// config_from_json() calls it too, so a file with a bad shape is refused when it is read.
void validate_shape(const MlpConfig& c);
// As device_bytes_needed(), with `input_sets` rotating copies of the input and output (the
// benchmark rotates them so that repeated runs do not measure a warm L2).
uint64_t device_bytes_needed(const MlpConfig& c, Variant v, int input_sets);
// Number of GEMM layers: linear 1, mlp widths.size() - 1, gated 3 (gate, up, down).
int layer_count(const MlpConfig& c);
// The largest relative error (||out - ref|| / ||ref|| against an fp32 reference) accepted for a
// dtype: fp32 1e-4, fp16 5e-3, bf16 2e-2 (intermediates are rounded to the dtype between ops).
double tolerance(DType d);
// A one-line human description, e.g. "gated 8192 x 768 -> 3072 -> 768, gelu-tanh, bf16".
std::string describe(const MlpConfig& c);

}  // namespace fusionscope::kernels
