// The runner's iteration ranges: "iteration N", N counting from 0 over warm-up and timed
// iterations together (kernels/runner.h); in imported PyTorch traces, the profiler's own
// "ProfilerStep#N" annotations, one per step.
#pragma once

#include <cstdint>
#include <string_view>

namespace fusionscope::analysis::detail {

// N for a range named "iteration N" or "ProfilerStep#N", or -1 for any other name.
inline long iteration_number(std::string_view name) {
  constexpr std::string_view kPrefix = "iteration ";
  constexpr std::string_view kStep = "ProfilerStep#";
  std::string_view digits;
  if (name.size() > kPrefix.size() && name.substr(0, kPrefix.size()) == kPrefix) {
    digits = name.substr(kPrefix.size());
  } else if (name.size() > kStep.size() && name.substr(0, kStep.size()) == kStep) {
    digits = name.substr(kStep.size());
  } else {
    return -1;
  }
  long n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9' || n > 100'000'000) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

// A thread of a process as one key: iteration windows and launches are matched per process, so
// that two processes (ranks, workers) never share a window even where their thread ids repeat.
inline uint64_t thread_key(uint32_t pid, uint32_t thread_id) {
  return (static_cast<uint64_t>(pid) << 32) | thread_id;
}

}  // namespace fusionscope::analysis::detail
