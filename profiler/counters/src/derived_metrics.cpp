// Derived per-kernel figures (docs/counters.md, "Derived metrics").
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "fusionscope/counters/kernel_counters.h"
#include "fusionscope/counters/metric_names.h"

namespace fusionscope::counters {

namespace {

// CUPTI counts tensor-path work in "math ops" where one multiply-add is two ops, the same
// convention as FLOPs: a bf16 GEMM of M x N x K reads 2*M*N*K of them.
constexpr double kFlopsPerTensorOp = 1.0;
// The L2 counts in 32-byte sectors.
constexpr double kBytesPerSector = 32.0;

std::optional<size_t> column(const CounterPassResult& r, std::string_view name) {
  for (size_t i = 0; i < r.metrics.size(); ++i) {
    if (r.metrics[i] == name) return i;
  }
  return std::nullopt;
}

}  // namespace

void add_derived_metrics(CounterPassResult& r) {
  namespace m = metric;
  const auto read = column(r, m::kDramRead), write = column(r, m::kDramWrite);
  const auto duration = column(r, m::kDuration);
  const auto l2_write = column(r, m::kL2WriteSectors);
  const auto ffma = column(r, m::kFfma), fadd = column(r, m::kFadd), fmul = column(r, m::kFmul);
  std::vector<size_t> tensor;
  for (std::string_view name : {m::kTensorOpsBf16, m::kTensorOpsFp16, m::kTensorOpsTf32}) {
    if (const auto c = column(r, name)) tensor.push_back(*c);
  }
  const bool has_dram = read && write;
  const bool has_fp32 = ffma && fadd && fmul;
  const bool has_tensor = !tensor.empty();
  const bool has_flops = has_fp32 || has_tensor;

  struct Column {
    std::string_view name, unit;
    bool present;
  };
  const Column derived[] = {
      {m::kDramBytes, "byte", has_dram},
      {m::kL2WriteBytes, "byte", l2_write.has_value()},
      {m::kTensorFlops, "flop", has_tensor},
      {m::kFp32Flops, "flop", has_fp32},
      {m::kFlops, "flop", has_flops},
      {m::kDramBandwidth, "byte/second", has_dram && duration.has_value()},
      {m::kFlopRate, "flop/second", has_flops && duration.has_value()},
      {m::kArithmeticIntensity, "flop/byte", has_flops && has_dram},
  };
  for (const auto& c : derived) {
    if (!c.present || column(r, c.name)) continue;
    r.metrics.emplace_back(c.name);
    r.units.emplace_back(c.unit);
  }

  for (auto& k : r.kernels) {
    const auto v = [&k](std::optional<size_t> c) {
      return c && *c < k.values.size() ? k.values[*c] : 0.0;
    };
    const double dram = v(read) + v(write);
    double tensor_flops = 0;
    for (size_t c : tensor) tensor_flops += kFlopsPerTensorOp * v(c);
    const double fp32_flops = 2.0 * v(ffma) + v(fadd) + v(fmul);
    const double flops = (has_tensor ? tensor_flops : 0.0) + (has_fp32 ? fp32_flops : 0.0);
    const double seconds = v(duration) * 1e-9;
    const double nan = std::nan("");

    k.values.resize(r.metrics.size(), nan);
    const auto set = [&](std::string_view name, double value) {
      if (const auto c = column(r, name)) k.values[*c] = value;
    };
    if (has_dram) set(m::kDramBytes, dram);
    if (l2_write) set(m::kL2WriteBytes, kBytesPerSector * v(l2_write));
    if (has_tensor) set(m::kTensorFlops, tensor_flops);
    if (has_fp32) set(m::kFp32Flops, fp32_flops);
    if (has_flops) set(m::kFlops, flops);
    if (has_dram && duration) set(m::kDramBandwidth, seconds > 0 ? dram / seconds : nan);
    if (has_flops && duration) set(m::kFlopRate, seconds > 0 ? flops / seconds : nan);
    if (has_flops && has_dram) set(m::kArithmeticIntensity, dram > 0 ? flops / dram : nan);
  }
}

}  // namespace fusionscope::counters
