// A terminal summary of a session: per run, its kernels, GPU time, wall time, launches and top
// kernels. Needs no GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::lab {

struct KernelTotal {
  std::string name;  // for people: short, and distinct among the run's kernels
  std::size_t calls = 0;
  int64_t total_ns = 0;
};

struct RunSummary {
  storage::RunInfo info;
  std::size_t kernels = 0;
  std::size_t launches = 0;  // CPU calls that launched kernels (a graph launch counts once)
  std::size_t api_calls = 0;
  int64_t gpu_ns = 0;   // sum of kernel durations
  int64_t span_ns = 0;  // first kernel start to last kernel end
  // Kernels launched inside the timed iterations' NVTX ranges ("iteration N", N >= warm-up).
  std::size_t timed_kernels = 0;
  int64_t timed_gpu_ns = 0;
  // By total time, longest first: of the timed iterations when there are any, else of the run.
  std::vector<KernelTotal> top;
  bool top_is_timed = false;
};

RunSummary summarize(const storage::RunData& run, std::size_t top_n = 5);

// Writes the session header and, per run, a row and its top kernels; a run being written or
// interrupted says so, a damaged one is named without figures. Text from the session is escaped
// for a terminal (storage/printable.h). Returns how many runs are damaged.
std::size_t write_report(const storage::SessionStore& store, std::ostream& out,
                         std::size_t top_n = 5);

// A kernel's name for people: demangled, template and argument lists elided.
std::string short_kernel_name(const std::string& name);

// Names for people of distinct kernels (full names, as stored), one per input: the short name,
// or where several share it, the short name and the part of their template arguments that
// tells them apart ("vectorized_elementwise_kernel<...GeluCUDAKernelImpl(...").
std::vector<std::string> distinct_kernel_names(const std::vector<std::string>& names);

}  // namespace fusionscope::lab
