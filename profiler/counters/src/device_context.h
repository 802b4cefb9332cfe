// The CUDA device and context a counters pass works on, and CUPTI's view of it (chip name,
// support for an API, the profiler API's initialisation).
#pragma once

#include <cuda.h>
#include <cupti_profiler_target.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fusionscope::counters::detail {

struct DeviceContext {
  int index = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;  // the runtime's primary context, current on this thread
  std::string name;             // e.g. "NVIDIA H100 80GB HBM3"
};

// Selects the device on this thread and makes its primary context current. Throws
// CounterFailure (kNoDevice) without a driver or device, or when `index` is out of range.
DeviceContext open_device(int index);

// Throws CounterFailure (kNotSupported) when CUPTI says `api` cannot run on the device, naming
// the reason (architecture, vGPU, confidential computing, ...).
void require_support(const DeviceContext& dc, CUpti_Profiler_API api);

// CUPTI's chip name, e.g. "GH100".
std::string chip_name(const DeviceContext& dc);

// cuptiProfilerInitialize() for the lifetime of the object.
class ProfilerApi {
 public:
  ProfilerApi();
  ~ProfilerApi();
  ProfilerApi(const ProfilerApi&) = delete;
  ProfilerApi& operator=(const ProfilerApi&) = delete;
};

}  // namespace fusionscope::counters::detail
