#include "device_context.h"

#include <cuda_runtime_api.h>
#include <cupti_target.h>

#include <string>

#include "cupti_status.h"

namespace fusionscope::counters::detail {

DeviceContext open_device(int index) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    fail(CounterAvailability::kNoDevice,
         std::string("no usable CUDA device: ") + cudaGetErrorString(err));
  }
  if (count == 0) fail(CounterAvailability::kNoDevice, "no CUDA device");
  if (index < 0 || index >= count) {
    fail(CounterAvailability::kNoDevice, "device " + std::to_string(index) + " does not exist (" +
                                             std::to_string(count) + " device(s))");
  }
  DeviceContext dc;
  dc.index = index;
  cudaError_t e = cudaSetDevice(index);
  if (e == cudaSuccess) e = cudaFree(nullptr);  // creates the primary context if needed
  if (e != cudaSuccess) {
    fail(CounterAvailability::kNoDevice,
         "cannot open CUDA device " + std::to_string(index) + ": " + cudaGetErrorString(e));
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) == cudaSuccess) dc.name = prop.name;
  // The driver API through the runtime's entry points, so that nothing links libcuda: binaries
  // must start (and report "no GPU") on machines without a driver.
  using DeviceGet = CUresult (*)(CUdevice*, int);
  using CtxGetCurrent = CUresult (*)(CUcontext*);
  void* device_get = nullptr;
  void* ctx_get_current = nullptr;
  cudaDriverEntryPointQueryResult q1{}, q2{};
  if (cudaGetDriverEntryPointByVersion("cuDeviceGet", &device_get, 12000, cudaEnableDefault, &q1) !=
          cudaSuccess ||
      cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &ctx_get_current, 12000,
                                       cudaEnableDefault, &q2) != cudaSuccess ||
      device_get == nullptr || ctx_get_current == nullptr) {
    fail(CounterAvailability::kFailed,
         "the CUDA driver does not export cuDeviceGet/cuCtxGetCurrent");
  }
  if (reinterpret_cast<DeviceGet>(device_get)(&dc.device, index) != CUDA_SUCCESS ||
      reinterpret_cast<CtxGetCurrent>(ctx_get_current)(&dc.context) != CUDA_SUCCESS ||
      dc.context == nullptr) {
    fail(CounterAvailability::kFailed,
         "no current CUDA context on device " + std::to_string(index));
  }
  return dc;
}

namespace {

const char* level_text(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED:
      return "unsupported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED:
      return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED:
      return "supported";
    default:
      return "unknown";
  }
}

}  // namespace

void require_support(const DeviceContext& dc, CUpti_Profiler_API api) {
  auto p = detail::cupti_params<CUpti_Profiler_DeviceSupported_Params>(
      CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  p.cuDevice = dc.device;
  p.api = api;
  check_cupti(cuptiProfilerDeviceSupported(&p), "asking CUPTI whether the device has counters");
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
  std::string why;
  const auto add = [&why](const char* what, CUpti_Profiler_Support_Level level) {
    if (level == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
    if (!why.empty()) why += ", ";
    why += std::string(what) + " " + level_text(level);
  };
  add("architecture", p.architecture);
  add("SLI", p.sli);
  add("vGPU", p.vGpu);
  add("confidential computing", p.confidentialCompute);
  add("CMP", p.cmp);
  add("WSL", p.wsl);
  fail(CounterAvailability::kNotSupported, "CUPTI offers no counters on " +
                                               (dc.name.empty() ? "this GPU" : dc.name) +
                                               (why.empty() ? std::string() : " (" + why + ")"));
}

std::string chip_name(const DeviceContext& dc) {
  auto p = detail::cupti_params<CUpti_Device_GetChipName_Params>(
      CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  p.deviceIndex = static_cast<size_t>(dc.index);
  check_cupti(cuptiDeviceGetChipName(&p), "reading the GPU's chip name");
  return p.pChipName ? p.pChipName : "";
}

ProfilerApi::ProfilerApi() {
  auto p = detail::cupti_params<CUpti_Profiler_Initialize_Params>(
      CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  check_cupti(cuptiProfilerInitialize(&p), "initialising the CUPTI profiler API");
}

ProfilerApi::~ProfilerApi() {
  auto p = detail::cupti_params<CUpti_Profiler_DeInitialize_Params>(
      CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
  trace("de-initialising the CUPTI profiler API", cuptiProfilerDeInitialize(&p));
}

}  // namespace fusionscope::counters::detail
