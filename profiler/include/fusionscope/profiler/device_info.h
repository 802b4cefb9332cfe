// The machine and GPU a capture runs on, for the session's header.
#pragma once

#include <string>

#include "fusionscope/storage/session_store.h"

namespace fusionscope::profiler {

// Empty when a CUDA device can be used; otherwise why not (no driver, no device...), for a
// person. Never throws.
std::string gpu_unavailable_reason();

// Fills the machine and GPU fields of `info` for `device`: host, GPU name, compute capability,
// SM count, theoretical DRAM bandwidth and FP32/tensor peaks (from the clocks and bus width),
// driver, CUDA and CUPTI versions, and the clocks in `notes`. Fields it cannot read stay as they
// were. Returns false (with `why`) when there is no usable device.
bool describe_device(int device, storage::SessionInfo& info, std::string* why = nullptr);

}  // namespace fusionscope::profiler
