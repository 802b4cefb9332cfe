// DRAM traffic and FLOPs per kernel of one forward pass, from a run's hardware counters (the
// counters pass of `fusionscope capture --counters`, docs/bandwidth.md), beside the plan's fewest
// bytes per op, and the GPU's ceilings. The figures behind the bandwidth bars, the roofline and
// the comparison's traffic totals; the views only draw them.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// The roofline's ceilings for a session's GPU: the calibrated figures when `fusionscope calibrate
// --session` stored them, else the theoretical ones from the device's clocks. 0 = unknown.
struct Ceilings {
  double bandwidth = 0;  // byte/s: what the bandwidth slope and the bars' peak use
  bool bandwidth_calibrated = false;
  double theoretical_bandwidth = 0;  // byte/s, from memory clock and bus width
  double tensor_flops = 0;           // flop/s, dense fp16/bf16 tensor cores
  bool tensor_calibrated = false;
  double theoretical_tensor_flops = 0;
  double fp32_flops = 0;  // flop/s, FFMA peak (theoretical only)
  // FLOP/byte where the bandwidth slope meets the tensor roof; 0 when either is unknown.
  double ridge() const;
};
Ceilings ceilings_of(const storage::SessionInfo& session);

// Attainable FLOP/s at an arithmetic intensity under the bandwidth slope and a flat roof
// (tensor or fp32): min(bandwidth * intensity, roof). 0 when the bandwidth is unknown.
double attainable(double bandwidth, double roof, double intensity);

// One kernel of the pass with its counters.
struct KernelTraffic {
  uint32_t kernel = 0;  // index into RunData::kernels (the kernel of the timing pass)
  uint32_t correlation_id = 0;
  storage::StringId name = storage::kNoString;
  storage::StringId op = storage::kNoString;
  int64_t duration_ns = 0;                // the kernel's time in the timing pass
  double counted_duration_ns = kUnknown;  // gpu__time_duration.sum in the counters pass
  double dram_read = 0;                   // bytes
  double dram_write = 0;
  double flops = kUnknown;  // tensor + fp32 (fusionscope/flops); unknown when not counted
  double tensor_flops = kUnknown;
  double dram_bytes() const { return dram_read + dram_write; }
  double seconds() const;    // duration_ns, else the counted duration; 0 when neither
  double bandwidth() const;  // byte/s; 0 without a duration
  double intensity() const;  // flop/byte; NaN without FLOPs or bytes
  double flop_rate() const;  // flop/s; NaN without FLOPs or a duration
};

// The fewest DRAM bytes a per-kernel count can show when each kernel starts with an L2 free of
// dirty lines (Nsight Compute's convention with its default cache control, and the counters
// pass's): every input is read from DRAM, but up to `l2_bytes` of the output can still sit in the
// L2 when the kernel ends, to be written back after it. So min_bytes less min(writes, L2). With
// `l2_bytes` 0 (unknown) it is min_bytes. NaN in, NaN out.
double fewest_counted(double min_bytes, double min_write_bytes, double l2_bytes);

// The kernels of one op, next to what the plan says it must move at least.
struct OpTraffic {
  std::string op;  // "" = kernels outside any op range
  double dram_bytes = 0;
  double min_bytes = kUnknown;  // the plan's fewest bytes for this op; unknown outside the plan
  double min_write_bytes = kUnknown;  // of min_bytes, the op's outputs
  int64_t duration_ns = 0;
  uint32_t kernels = 0;
};

// The plan's fewest DRAM bytes of a run's configuration and variant (RunInfo::config_json and
// ::variant through the kernels library's make_plan), per op and in all.
struct PlanTraffic {
  bool ok = false;
  std::string error;  // why there is no plan (imported run, unknown variant...)
  struct Op {
    std::string op;
    double min_bytes = 0;
    double min_write_bytes = 0;  // of min_bytes, the outputs
  };
  std::vector<Op> ops;  // in plan order, launches of one op summed
  double min_bytes = 0;
  double min_write_bytes = 0;
  double flops = 0;
};
PlanTraffic plan_traffic(const storage::RunInfo& info);

struct RunTraffic {
  // The counters' kernels of one forward pass, in start order. Captures hold them for the first
  // timed iteration (the counters pass is matched to it); when several iterations carry
  // counters, the first one that does is taken.
  std::vector<KernelTraffic> kernels;
  std::vector<OpTraffic> ops;  // in order of first kernel, then the plan's ops that ran none
  long iteration = -1;         // the runner's iteration the kernels come from; -1 = unknown
  double dram_bytes = 0;       // sum over kernels
  double flops = kUnknown;     // sum over kernels that count them
  int64_t duration_ns = 0;     // sum of the kernels' durations
  PlanTraffic plan;
  bool empty() const { return kernels.empty(); }
  double bandwidth() const;        // dram_bytes over duration_ns, byte/s; 0 when either is 0
  double min_bytes() const;        // the plan's, or NaN
  double excess_over_min() const;  // dram_bytes / min_bytes; NaN without a plan
  // The plan's fewest as a per-kernel count can show it (fewest_counted() of each op, summed),
  // given the L2 size; NaN without a plan.
  double min_bytes_counted(double l2_bytes) const;
};

RunTraffic run_traffic(const storage::RunData& run);

}  // namespace fusionscope::analysis
