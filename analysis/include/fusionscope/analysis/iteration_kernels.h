// Which of the runner's iterations launched each kernel. The runner wraps every forward pass in an
// NVTX range "iteration N" (N counting from 0 over warm-up and timed iterations, kernels/runner.h);
// a kernel belongs to iteration N when the API call that launched it (same correlation id) lies
// inside that range on the same thread.
#pragma once

#include <cstdint>
#include <vector>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::analysis {

// Per kernel (RunData::kernels order), its iteration N, or -1 when it was launched outside every
// iteration range or its launch was not recorded.
std::vector<long> kernel_iterations(const storage::RunData& run);

// The kernels of iteration N (indexes into RunData::kernels), in order of start time.
std::vector<uint32_t> iteration_kernels(const storage::RunData& run, long iteration);

}  // namespace fusionscope::analysis
