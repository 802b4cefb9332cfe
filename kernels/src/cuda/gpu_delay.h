// A kernel that only waits: queued before a timed launch, it keeps the GPU busy while the host
// enqueues the start event, the launch and the stop event, so that the events time the GPU's
// work and not the host's cost of submitting it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace fusionscope::kernels::detail {

// One thread that spins on the GPU's global timer for `microseconds`.
void launch_gpu_delay(uint32_t microseconds, cudaStream_t stream);

}  // namespace fusionscope::kernels::detail
