// A bounded mutation fuzzer for libFuzzer entry points (LLVMFuzzerTestOneInput), built with any
// compiler: CI runs every fuzz target this way for a fixed time on every change. It runs each seed,
// then mutations of them (bit flips, byte values, inserted, removed, repeated and spliced ranges,
// truncations, dictionary tokens) until the time is up, from a fixed random seed so a run can be
// repeated. A crash, an abort or a broken invariant kills the process; the input that did it is
// written to a file first, and its path printed. No coverage feedback: that is what the libFuzzer
// build is for (see each target's CMakeLists.txt).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fusionscope::testing {

struct FuzzOptions {
  double seconds = 10;  // run mutations for this long after the seeds
  uint64_t seed = 1;    // random seed of the mutations
  size_t max_len = 1 << 20;
  std::vector<std::string> dictionary;  // tokens spliced into inputs
  std::string name = "fuzz";            // in messages and the crash file's name
};

// Parses "--seconds S --seed N --max-len L --dict FILE INPUTS..." (files and folders of seeds) on
// top of `defaults`, reads the seeds, and runs. `extra_seeds` are added to those read. Returns the
// process exit status (2 for bad arguments, 0 otherwise: a failure does not return).
int run_mutation_fuzzer(int argc, char** argv, FuzzOptions defaults,
                        std::vector<std::string> extra_seeds = {});

}  // namespace fusionscope::testing
