// Links a trace's records to each other: GPU work to the API call that launched it (correlation
// ids, checked against the `ac2g` flows), and each kernel to the operator that launched it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fusionscope/interchange/torch_trace_import.h"

namespace fusionscope::interchange::detail {

// One end of an `ac2g` flow. `lane` is the CPU thread for a start, the stream for a finish.
struct FlowEnd {
  uint64_t id = 0;
  uint32_t lane = 0;
  int64_t ts_ns = 0;
};

// Records a counted, non-fatal finding ("3 kernels have no launching API call").
using NoteFn = std::function<void(const std::string& reason, uint64_t count)>;

// Fills correlation ids that only the flows carry, counts disagreements between a record's
// `args.correlation` and its flow, and counts linked flows and launched kernels in trace.stats.
void link_correlations(TorchTrace& trace, const std::vector<FlowEnd>& starts,
                       const std::vector<FlowEnd>& finishes, const NoteFn& note);

// Sets KernelRecord::op: the innermost cpu_op on the launching thread that encloses the launching
// API call (aten::mm, aten::gelu, a Triton kernel's launcher); failing that, the innermost user
// annotation other than a ProfilerStep.
void attribute_ops(TorchTrace& trace, const NoteFn& note);

// Sets the `pid` of kernels and memory operations: the process of the API call that launched
// them (the first in the file when several share a correlation id); 0 when there is none.
void assign_launching_processes(TorchTrace& trace);

}  // namespace fusionscope::interchange::detail
