// counters_ncu_workload PRESET VARIANT [TIMED [PINS]]: the workload the Nsight Compute comparison
// profiles. One warm-up forward pass, then TIMED ones (default 1), no check and one input set.
// Only the timed passes are between cudaProfilerStart() and cudaProfilerStop()
// (RunOptions::profile_timed_only), so under `ncu --profile-from-start off` the set-up (which
// times candidate kernels to pick one) and the warm-up run unprofiled, with the timings and
// choices of a process without ncu, and the profiled kernels are the TIMED x N of the forward
// passes (N = the plan's launches, printed as "LAUNCHES N"). "KERNEL_PATH ..." names the
// implementations chosen at set-up and "CHOICES ..." writes them as RunOptions::pin_kernels takes
// them; PINS pins them instead (kernel_pins.h).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fusionscope/kernels/plan.h"
#include "fusionscope/kernels/runner.h"

namespace fk = fusionscope::kernels;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: counters_ncu_workload PRESET VARIANT [TIMED [PINS]]\n");
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
  if (argc > 4) o.pin_kernels = argv[4];
  o.profile_timed_only = true;
  try {
    const fk::RunResult r = fk::run(*config, fk::parse_variant(argv[2]), o);
    if (!r.ok) {
      std::fprintf(stderr, "run failed: %s\n", r.error.c_str());
      return 1;
    }
    std::printf("LAUNCHES %zu\n", r.plan.launches.size());
    std::printf("KERNEL_PATH %s\n", r.kernel_path.c_str());
    std::printf("CHOICES %s\n", r.kernel_choices.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
