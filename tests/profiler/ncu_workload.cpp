// counters_ncu_workload PRESET VARIANT [TIMED]: the workload the Nsight Compute comparison
// profiles. One warm-up forward pass, then TIMED ones (default 1), no check and one input set, so
// the last TIMED x N kernels are the forward passes (N = the plan's launches, printed as
// "LAUNCHES N").
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fusionscope/kernels/plan.h"
#include "fusionscope/kernels/runner.h"

namespace fk = fusionscope::kernels;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: counters_ncu_workload PRESET VARIANT [TIMED]\n");
    return 2;
  }
  const auto config = fk::find_preset(argv[1]);
  if (!config) {
    std::fprintf(stderr, "no preset named %s\n", argv[1]);
    return 2;
  }
  fk::RunOptions o;
  o.warmup_iterations = 1;
  o.timed_iterations = argc > 3 ? std::atoi(argv[3]) : 1;
  o.check = false;
  o.input_sets = 1;
  try {
    const fk::RunResult r = fk::run(*config, fk::parse_variant(argv[2]), o);
    if (!r.ok) {
      std::fprintf(stderr, "run failed: %s\n", r.error.c_str());
      return 1;
    }
    std::printf("LAUNCHES %zu\n", r.plan.launches.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
