// What a trace says about itself beyond its events: the GPU and software versions (header),
// the profiler steps, and which PyTorch mode produced it.
#pragma once

#include <nlohmann/json.hpp>

#include "fusionscope/interchange/torch_trace_import.h"
#include "trace_linker.h"

namespace fusionscope::interchange::detail {

// Session info from deviceProperties (the device the kernels ran on) and the version fields.
void read_header(TorchTrace& trace, const nlohmann::json& header, const NoteFn& note);

// profiler_steps and steps_wall_ns from the ProfilerStep#N annotations.
void summarize_steps(TorchTrace& trace, const RangeFacts& ranges);

// warmup_steps from the `fusionscope` member our exports write (after summarize_steps).
void read_own_header(TorchTrace& trace, const nlohmann::json& header);

// "torch-compile", "torch-cuda-graph" or "torch-eager": from the source name when it says so,
// else from the kernels (Triton kernels come from torch.compile) and the launch calls.
std::string derive_variant(const TorchTrace& trace);

}  // namespace fusionscope::interchange::detail
