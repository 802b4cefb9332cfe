// The fusion advisor: rules that read a run (and its hardware counters where it has them) and
// say what fusing kernels, or launching them differently, would buy, with the numbers and the
// kernels concerned. `fusionscope advise` prints the advice (or JSON, docs/advice.md); the app's
// Advice tab draws it. Each rule has a stable id:
//
//   pointwise-chain   memory-bound pointwise kernels one after another that could be one kernel
//   glu-intermediate  a gated MLP's gate and up outputs written to memory and read back by
//                     separate activation and multiply kernels: a gated GEMM epilogue saves them
//   short-kernels     kernels that run shorter than the call that launches them
//   launch-bound      the GPU idle between kernels for a large share of the iterations
//   below-roofline    a kernel far below the time its bytes and FLOPs allow (needs counters)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

// A kernel an advice is about: the first execution of it in the iteration the rule read.
struct AdviceKernel {
  uint32_t index = 0;  // into RunData::kernels
  std::string name;    // as stored (often mangled)
  uint32_t correlation_id = 0;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
};

// A named figure with its unit ("ns", "byte", "fraction", "count", "x").
struct AdviceFigure {
  std::string name;
  double value = 0;
  std::string unit;
};

struct Advice {
  std::string rule;      // one of advice_rules()
  std::string severity;  // "warning" (worth doing) or "info"
  std::string summary;   // one line for people, with the main numbers
  std::vector<AdviceFigure> figures;
  std::vector<AdviceKernel> kernels;
  int64_t cites_run = 0;  // a run of the session the advice quotes (e.g. the gated-gemm one)

  // The figure named `name`, or NaN.
  double figure(std::string_view name) const;
};

// Another run of the same session, as a rule may cite it.
struct PeerRun {
  storage::RunInfo info;
  double gpu_per_iteration_ns = 0;  // timed kernels' time per timed iteration
};

struct AdviceContext {
  storage::SessionInfo session;        // for the GPU's ceilings
  std::vector<PeerRun> peers;          // the session's other runs
  double launch_bound_share = 0.2;     // GPU idle share of the iterations that fires launch-bound
  double below_roofline_factor = 3.0;  // measured / bound time that fires below-roofline
};

// The rules' ids, in the order advise() applies them.
const std::vector<std::string>& advice_rules();

// Every rule on one run; advice in rule order.
std::vector<Advice> advise(const storage::RunData& run, const AdviceContext& context);

// Kernel time of the timed iterations per timed iteration (what `report` calls GPU/iter), 0 when
// the run has no iterations.
double gpu_time_per_iteration(const storage::RunData& run);

// The advice of some runs as JSON text, schema "fusionscope.advice/1" (docs/advice.md).
struct RunAdvice {
  storage::RunInfo info;
  std::vector<Advice> advice;
};
std::string advice_json(const std::vector<RunAdvice>& runs);

}  // namespace fusionscope::analysis
