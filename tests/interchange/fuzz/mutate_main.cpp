// The PyTorch trace fuzz target under the bounded mutation fuzzer (tests/common/fuzz_mutator.h),
// seeded with the corpus and the real traces: what CI runs on every change, for a fixed time.
#include "fuzz_mutator.h"

int main(int argc, char** argv) {
  fusionscope::testing::FuzzOptions options;
  options.name = "torch_trace_fuzz";
  options.seconds = 20;
  options.max_len = 1 << 17;
  return fusionscope::testing::run_mutation_fuzzer(argc, argv, options);
}
