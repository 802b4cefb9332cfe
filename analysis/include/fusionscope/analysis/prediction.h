// "Guess first, then look": what a configuration should cost in each variant before it runs
// (its plan's kernels, FLOPs, fewest DRAM bytes, and the roofline-bound time from the GPU's
// peaks), and afterwards the measured run next to that guess, with the surprises called out:
// a different kernel count, a time far from the bound (or below it), a failed check.
//
// The bound of a variant is the sum over its planned launches of max(FLOPs / FLOP rate,
// bytes / bandwidth): each kernel at its own roofline, one after another, as the runner issues
// them on one stream. Pointwise kernels are bounded by bandwidth, large GEMMs by the tensor roof,
// so fusing a pointwise op into a GEMM lowers the bound by the bytes it no longer moves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fusionscope/kernels/config.h"
#include "fusionscope/kernels/plan.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

// The peaks a bound is computed from, and where they came from (for the label next to it).
struct PredictionPeaks {
  double bandwidth_bytes_per_s = 0;
  double tensor_flops = 0;  // dense fp16/bf16 tensor-core FLOP/s
  double fp32_flops = 0;    // FFMA FLOP/s, for fp32 configurations
  std::string source;       // e.g. "calibrated, NVIDIA H100 80GB HBM3 (session)"
  // The FLOP rate that bounds a configuration of this dtype; 0 when unknown.
  double flop_rate(kernels::DType dtype) const;
  bool known(kernels::DType dtype) const;
};

// The peaks of a CUDA device present on this machine (0 = unknown).
struct DevicePeaks {
  std::string name;
  double bandwidth_bytes_per_s = 0;
  double tensor_flops = 0;
  double fp32_flops = 0;
};

// Which peaks a prediction uses: the session's calibrated figures (`fusionscope calibrate`) when
// it has them and was captured on this machine's GPU (or no GPU is here); else the GPU present
// here, from its clocks; else the session's theoretical figures. Either argument may be null.
// A figure one source lacks is taken from the next. Empty (source "") when nothing is known.
PredictionPeaks choose_peaks(const storage::SessionInfo* session, const DevicePeaks* device);

// max(flops / flop_rate, bytes / bandwidth) in ns; a term whose rate is 0 is left out.
double roofline_bound_ns(double flops, double bytes, double flop_rate, double bandwidth);

struct LaunchPrediction {
  std::string op;      // the NVTX op range the runner opens around this launch
  std::string kernel;  // what the plan expects to run
  double flops = 0;
  double min_bytes = 0;
  double bound_ns = 0;  // 0 when the peaks are unknown
  bool memory_bound = false;
};

struct VariantPrediction {
  kernels::Variant variant = kernels::Variant::kEager;
  std::vector<LaunchPrediction> launches;  // per forward pass, in launch order
  double flops = 0;
  double min_bytes = 0;
  double bound_ns = 0;  // sum of the launches' bounds; 0 when the peaks are unknown
  std::size_t kernels() const { return launches.size(); }
  // FLOPs per byte of the whole pass.
  double intensity() const { return min_bytes > 0 ? flops / min_bytes : 0; }
};

// Throws kernels::ConfigError when the variant does not apply to the configuration.
VariantPrediction predict(const kernels::MlpConfig& config, kernels::Variant variant,
                          const PredictionPeaks& peaks);

// How far from the guess a measurement may land before it is called a surprise.
struct SurpriseThresholds {
  // Below this fraction of the roofline (bound / measured) the time is "far from the bound".
  double far_below_roofline = 0.25;
  // Measured faster than this fraction of the bound: faster than the peaks allow, so the peaks
  // or the plan's byte count are wrong.
  double faster_than_bound = 0.9;
};

enum class SurpriseKind : uint8_t {
  kRunFailed,        // the run did not complete (CUDA or configuration error)
  kCheckFailed,      // the output differs from the fp32 reference
  kKernelCount,      // kernels per iteration differ from the plan
  kFarFromBound,     // below SurpriseThresholds::far_below_roofline of the roofline
  kFasterThanBound,  // faster than the bound allows
  kOpMissing,        // a planned op ran no kernel
  kOpUnplanned,      // kernels ran under an op the plan does not have
  kNoTrace,          // nothing to compare: the run has no traced timed kernels
};
std::string_view to_string(SurpriseKind k);

struct Surprise {
  SurpriseKind kind = SurpriseKind::kKernelCount;
  std::string message;  // a sentence for a person
};

struct OpOutcome {
  std::string op;
  bool planned = false;
  bool measured = false;
  int planned_kernels = 0;
  double bound_ns = 0;          // the op's planned launches' bound
  double measured_kernels = 0;  // per timed iteration
  double measured_ns = 0;       // kernel time per timed iteration
  // bound / measured: 1 = at the roofline. Empty without both figures.
  std::optional<double> roofline_fraction;
};

struct VariantOutcome {
  int64_t run_id = 0;
  kernels::Variant variant = kernels::Variant::kEager;
  storage::RunStatus status = storage::RunStatus::kPending;
  bool measured = false;  // the run has timed kernels to compare
  std::size_t planned_kernels = 0;
  double measured_kernels = 0;  // per timed iteration
  double bound_ns = 0;
  double measured_ns = 0;  // GPU kernel time per timed iteration
  std::optional<double> roofline_fraction;
  std::vector<OpOutcome> ops;  // the plan's ops in order, then ops the plan does not have
  std::vector<Surprise> surprises;
  bool has(SurpriseKind k) const;
};

// The run measured against its prediction. The run is one the lab captured (RunInfo::iterations
// and the runner's "iteration N" ranges tell its timed kernels apart).
VariantOutcome compare_to_prediction(const VariantPrediction& prediction,
                                     const storage::RunData& run,
                                     const SurpriseThresholds& thresholds = {});

// The configuration stored with a run (RunInfo::config_json) when it parses, else empty.
std::optional<kernels::MlpConfig> run_config(const storage::RunInfo& info);

// Whether two configurations describe the same workload (everything but the name).
bool same_workload(const kernels::MlpConfig& a, const kernels::MlpConfig& b);

}  // namespace fusionscope::analysis
