// What the runner and the app say about the GPU, derived from the device's own attributes.
#include <cuda_runtime_api.h>

#include "fusionscope/kernels/runner.h"

namespace fusionscope::kernels {
namespace {

// Dense fp16/bf16 tensor-core FLOP per clock per SM with fp32 accumulation.
double tensor_flops_per_clock(int major, int minor, std::string* note) {
  if (major == 9 && minor == 0) {
    *note = "Hopper: 4096 dense fp16/bf16 FLOP/clock/SM";
    return 4096;
  }
  if (major == 8 && minor == 0) {
    *note = "A100: 2048 dense fp16/bf16 FLOP/clock/SM";
    return 2048;
  }
  if (major == 8 && (minor == 6 || minor == 9)) {
    *note =
        "Ampere/Ada workstation rate: 1024 dense fp16/bf16 FLOP/clock/SM (GeForce parts "
        "accumulate fp32 at half this)";
    return 1024;
  }
  *note = "no known tensor-core rate for compute capability " + std::to_string(major) + "." +
          std::to_string(minor);
  return 0;
}

std::string no_gpu_reason(cudaError_t err) {
  switch (err) {
    case cudaErrorNoDevice:
      return "no CUDA-capable device is present";
    case cudaErrorInsufficientDriver:
      return "the NVIDIA driver is missing or older than this CUDA runtime";
    default:
      return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
  }
}

}  // namespace

DeviceInfo query_device(int index) {
  DeviceInfo info;
  info.index = index;
  cudaRuntimeGetVersion(&info.runtime_version);
  cudaDriverGetVersion(&info.driver_version);  // 0 when no driver is installed
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    info.unavailable_reason = no_gpu_reason(err);
    cudaGetLastError();
    return info;
  }
  if (index < 0 || index >= count) {
    info.unavailable_reason = "device " + std::to_string(index) + " does not exist (" +
                              std::to_string(count) + " CUDA device(s))";
    return info;
  }
  cudaDeviceProp prop{};
  if (const cudaError_t e = cudaGetDeviceProperties(&prop, index); e != cudaSuccess) {
    info.unavailable_reason = no_gpu_reason(e);
    cudaGetLastError();
    return info;
  }
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.total_memory_bytes = prop.totalGlobalMem;
  info.l2_bytes = static_cast<uint64_t>(prop.l2CacheSize);
  cudaDeviceGetAttribute(&info.sm_clock_khz, cudaDevAttrClockRate, index);
  cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, index);
  cudaDeviceGetAttribute(&info.memory_bus_bits, cudaDevAttrGlobalMemoryBusWidth, index);
  info.memory_bandwidth_bytes_per_s =
      2.0 * info.memory_clock_khz * 1e3 * (info.memory_bus_bits / 8.0);
  const double per_clock =
      tensor_flops_per_clock(info.cc_major, info.cc_minor, &info.peak_flops_note);
  info.peak_tensor_flops = per_clock * info.sm_count * info.sm_clock_khz * 1e3;
  if (per_clock > 0)
    info.peak_flops_note += " x " + std::to_string(info.sm_count) + " SMs x " +
                            std::to_string(info.sm_clock_khz / 1000) + " MHz peak clock";

  int previous = 0;
  cudaGetDevice(&previous);
  if (cudaSetDevice(index) == cudaSuccess) {
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
      info.free_memory_bytes = free_b;
    } else {
      info.unavailable_reason = "could not create a CUDA context on device " +
                                std::to_string(index) + ": " +
                                cudaGetErrorString(cudaGetLastError());
      return info;
    }
    cudaSetDevice(previous);
  }
  info.available = true;
  return info;
}

}  // namespace fusionscope::kernels
