// The session's description of the device its runs ran on (its name, compute capability, SMs,
// bandwidth and peaks): from the CUDA device, or nothing in a build without CUDA.
#pragma once

#include "fusionscope/storage/session_store.h"

namespace fusionscope::lab {

// Fills the machine fields of `info`; false (and `info` untouched) when there is no device.
bool describe_device(int device, storage::SessionInfo& info);

}  // namespace fusionscope::lab
