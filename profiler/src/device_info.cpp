#include "fusionscope/profiler/device_info.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <cuda_runtime_api.h>
#include <cupti.h>

namespace fusionscope::profiler {
namespace {

std::string version_text(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// The driver's own version ("580.95.05") comes from NVML, loaded only if present: the program
// must not need the driver's libraries to start.
std::string nvml_driver_version() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return {};
  using InitFn = int (*)();
  using VersionFn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  auto version = reinterpret_cast<VersionFn>(dlsym(lib, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<InitFn>(dlsym(lib, "nvmlShutdown"));
  std::string result;
  if (init != nullptr && version != nullptr && init() == 0) {
    char buf[96] = {};
    if (version(buf, sizeof buf) == 0) result = buf;
    if (shutdown != nullptr) shutdown();
  }
  dlclose(lib);
  return result;
}

// Dense FP16/BF16 tensor-core and FP32 FLOPs per SM per clock, by architecture (public
// datasheet peaks divided by SMs x boost clock). Unknown architectures give 0 (unknown).
double tensor_flops_per_sm_clock(int major, int minor) {
  if (major == 7) return 1024;
  if (major == 8) return minor == 0 ? 2048 : 1024;
  if (major == 9) return 4096;
  if (major == 10) return 8192;
  if (major == 12) return 1024;
  return 0;
}
double fp32_flops_per_sm_clock(int major, int minor) {
  if (major == 7 || (major == 8 && minor == 0)) return 128;
  if (major >= 8 && major <= 12) return 256;
  return 0;
}

}  // namespace

std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaErrorInsufficientDriver)
    return "no NVIDIA driver is loaded, or it is older than this program's CUDA runtime";
  if (err == cudaErrorNoDevice) return "no CUDA device in this machine";
  if (err != cudaSuccess) return cudaGetErrorString(err);
  if (count == 0) return "no CUDA device in this machine";
  return {};
}

bool describe_device(int device, storage::SessionInfo& info, std::string* why) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) info.host = host;
  uint32_t cupti = 0;
  if (cuptiGetVersion(&cupti) == CUPTI_SUCCESS) info.cupti_version = "API " + std::to_string(cupti);

  if (std::string reason = gpu_unavailable_reason(); !reason.empty()) {
    if (why != nullptr) *why = reason;
    return false;
  }
  cudaDeviceProp p{};
  if (cudaError_t e = cudaGetDeviceProperties(&p, device); e != cudaSuccess) {
    if (why != nullptr) *why = cudaGetErrorString(e);
    return false;
  }
  auto attr = [device](cudaDeviceAttr a) {
    int v = 0;
    return cudaDeviceGetAttribute(&v, a, device) == cudaSuccess ? v : 0;
  };
  const int sm_khz = attr(cudaDevAttrClockRate);
  const int mem_khz = attr(cudaDevAttrMemoryClockRate);
  const int bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth);

  info.gpu_name = p.name;
  info.cc_major = p.major;
  info.cc_minor = p.minor;
  info.sm_count = p.multiProcessorCount;
  // DDR: two transfers per memory clock.
  info.mem_bandwidth_gbs = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  const double sm_hz = sm_khz * 1e3;
  info.peak_fp32_tflops =
      fp32_flops_per_sm_clock(p.major, p.minor) * p.multiProcessorCount * sm_hz / 1e12;
  info.peak_tensor_tflops =
      tensor_flops_per_sm_clock(p.major, p.minor) * p.multiProcessorCount * sm_hz / 1e12;

  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  const std::string nvml = nvml_driver_version();
  info.driver_version =
      nvml.empty() ? "CUDA " + version_text(driver) : nvml + " (CUDA " + version_text(driver) + ")";
  info.cuda_version = version_text(runtime);

  char clocks[200];
  std::snprintf(clocks, sizeof clocks,
                "SM clock %d MHz, memory clock %d MHz, %d-bit bus, L2 %d MB, %.0f GB memory",
                sm_khz / 1000, mem_khz / 1000, bus_bits, p.l2CacheSize >> 20,
                static_cast<double>(p.totalGlobalMem) / 1e9);
  if (info.notes.find(clocks) == std::string::npos)
    info.notes = info.notes.empty() ? std::string(clocks) : info.notes + "\n" + clocks;
  return true;
}

}  // namespace fusionscope::profiler
