// What the lab asks of the CUDA device: its facts before a job, its description for the session.
#include "device_description.h"
#include "fusionscope/kernels/runner.h"
#include "fusionscope/lab/lab_controller.h"
#include "fusionscope/profiler/device_info.h"

namespace fusionscope::lab {

DeviceFacts probe_device(int device) {
  DeviceFacts f;
  const kernels::DeviceInfo d = kernels::query_device(device);
  if (!d.available) {
    f.reason = d.unavailable_reason.empty() ? "no CUDA device" : d.unavailable_reason;
    return f;
  }
  f.available = true;
  f.name = d.name;
  f.cc_major = d.cc_major;
  f.cc_minor = d.cc_minor;
  f.total_bytes = d.total_memory_bytes;
  f.free_bytes = d.free_memory_bytes;
  f.bandwidth_bytes_per_s = d.memory_bandwidth_bytes_per_s;
  f.tensor_flops = d.peak_tensor_flops;
  // The FP32 peak comes with the session header's description of the device.
  storage::SessionInfo info;
  if (profiler::describe_device(device, info)) f.fp32_flops = info.peak_fp32_tflops * 1e12;
  return f;
}

bool describe_device(int device, storage::SessionInfo& info) {
  return profiler::describe_device(device, info);
}

}  // namespace fusionscope::lab
