// The Lab's PyTorch variants (torch-eager, torch-compile): the configuration run as a PyTorch
// module by scripts/torch_mlp.py in a Python subprocess, captured through the injection library
// (program_capture.h) with the same warm-up and timed iterations, shapes and NVTX op ranges as
// fusionscope's own variants, so every view treats them alike.
#pragma once

#include <atomic>
#include <string>

#include "fusionscope/lab/capture_job.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::lab {

// The script: FUSIONSCOPE_TORCH_SCRIPT, else torch_mlp.py beside the executable (or in
// ../share/fusionscope), else the source tree's scripts/. Empty when none exists.
std::string torch_script_path();
// The Python that runs it: FUSIONSCOPE_PYTHON, else python3.
std::string torch_python();

// Empty when python3 with PyTorch and a CUDA device can run the variants; otherwise why not, in
// one sentence. Asked once per process (it starts Python), then remembered.
std::string torch_unavailable_reason();

// Runs one PyTorch variant run of `job` into `store`; progress and cancel as Lab::run.
RunOutcome run_torch_variant(storage::SessionStore& store, const RunSpec& spec,
                             const CaptureJob& job, const Progress& base,
                             const ProgressCallback& progress, const std::atomic<bool>* cancel);

}  // namespace fusionscope::lab
