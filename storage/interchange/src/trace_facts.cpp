#include "trace_facts.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "json_fields.h"

namespace fusionscope::interchange::detail {
namespace {

using nlohmann::json;

// CUDA encodes versions as 1000 * major + 10 * minor: 13000 -> "13.0", 12040 -> "12.4".
std::string cuda_version_text(const json* v) {
  if (const auto s = as_string(v)) return std::string(*s);
  const auto n = as_unsigned(v, 10'000'000);
  if (!n || *n == 0) return {};
  return std::to_string(*n / 1000) + "." + std::to_string(*n % 1000 / 10);
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

int small_int(const json* v) {
  return static_cast<int>(as_unsigned(v, 1'000'000).value_or(0));
}

}  // namespace

void read_header(TorchTrace& trace, const json& header, uint32_t kernel_device,
                 const NoteFn& note) {
  auto& s = trace.session;
  s.driver_version = cuda_version_text(member(header, "cuda_driver_version"));
  s.cuda_version = cuda_version_text(member(header, "cuda_runtime_version"));
  if (const json* cupti = member(header, "cupti_version")) {
    if (const auto text = as_string(cupti)) {
      s.cupti_version = std::string(*text);
    } else if (const auto n = as_unsigned(cupti)) {
      s.cupti_version = std::to_string(*n);
    }
  }
  if (const auto id = as_string(member(header, "trace_id"))) trace.trace_id = std::string(*id);
  s.notes = "Imported from the PyTorch profiler trace " + trace.source_name + ".";

  // The properties of the device the kernels ran on (the first device listed otherwise).
  const json* devices = member(header, "deviceProperties");
  if (devices == nullptr) return;
  if (!devices->is_array()) {
    note("deviceProperties is not an array (GPU details left empty)", 1);
    return;
  }
  const uint32_t device = kernel_device;
  const json* chosen = nullptr;
  for (const auto& d : *devices) {
    if (!d.is_object()) continue;
    if (chosen == nullptr) chosen = &d;
    if (as_u32(member(d, "id")) == device) {
      chosen = &d;
      break;
    }
  }
  if (chosen == nullptr) return;
  if (const auto name = as_string(member(*chosen, "name"))) s.gpu_name = std::string(*name);
  s.cc_major = small_int(member(*chosen, "computeMajor"));
  s.cc_minor = small_int(member(*chosen, "computeMinor"));
  s.sm_count = small_int(member(*chosen, "numSms"));
}

void read_own_header(TorchTrace& trace, const json& header) {
  // Our exports describe the run they came from; the split of its iterations into warm-up and
  // timed ones is what the steps alone cannot say.
  const json* own = member(header, "fusionscope");
  if (own == nullptr || !own->is_object()) return;
  // The run's own variant and dtype: an export loses the operators' input types dtype is read
  // from, and a variant the file name cannot tell.
  if (const auto variant = as_string(member(*own, "variant")); variant && !variant->empty()) {
    trace.exported_variant = std::string(*variant);
  }
  if (const auto dtype = as_string(member(*own, "dtype")); dtype && trace.dtype.empty()) {
    trace.dtype = std::string(*dtype);
  }
  const auto warmup = as_unsigned(member(*own, "warmup"), 1'000'000);
  const auto iterations = as_unsigned(member(*own, "iterations"), 1'000'000);
  if (warmup && iterations && static_cast<int>(*warmup + *iterations) == trace.profiler_steps) {
    trace.warmup_steps = static_cast<int>(*warmup);
  }
}

void summarize_steps(TorchTrace& trace, const RangeFacts& ranges) {
  trace.profiler_steps = ranges.steps();
  trace.steps_wall_ns = ranges.steps_last() - ranges.steps_first();
}

std::string derive_variant(const TorchTrace& trace, const ModeHints& hints) {
  if (!trace.exported_variant.empty()) return trace.exported_variant;
  const std::string name = lower(trace.source_name);
  if (name.find("compile") != std::string::npos || name.find("inductor") != std::string::npos) {
    return "torch-compile";
  }
  if (name.find("graph") != std::string::npos) return "torch-cuda-graph";
  if (name.find("eager") != std::string::npos) return "torch-eager";
  if (hints.triton_kernels) return "torch-compile";
  if (hints.graph_launches) return "torch-cuda-graph";
  return "torch-eager";
}

}  // namespace fusionscope::interchange::detail
