// What a trace says about itself beyond its events: the GPU and software versions (header),
// the profiler steps, and which PyTorch mode produced it.
#pragma once

#include <nlohmann/json.hpp>

#include "fusionscope/interchange/torch_trace_import.h"
#include "range_facts.h"
#include "trace_linker.h"

namespace fusionscope::interchange::detail {

// Session info from deviceProperties (of `kernel_device`, the device of the trace's first kernel,
// else the first listed) and the version fields.
void read_header(TorchTrace& trace, const nlohmann::json& header, uint32_t kernel_device,
                 const NoteFn& note);

// profiler_steps and steps_wall_ns from the ProfilerStep#N annotations.
void summarize_steps(TorchTrace& trace, const RangeFacts& ranges);

// warmup_steps from the `fusionscope` member our exports write (after summarize_steps).
void read_own_header(TorchTrace& trace, const nlohmann::json& header);

// What the records tell of the PyTorch mode, gathered as they are read.
struct ModeHints {
  bool triton_kernels = false;  // kernels named triton_*: torch.compile's
  bool graph_launches = false;  // cudaGraphLaunch / cuGraphLaunch* calls
};

// "torch-compile", "torch-cuda-graph" or "torch-eager": from the source name when it says so,
// else from the records (Triton kernels come from torch.compile, graphs from graph launches).
std::string derive_variant(const TorchTrace& trace, const ModeHints& hints);

}  // namespace fusionscope::interchange::detail
