// fusionscope_mlp.h over the executor: a handle owns one Executor and the texts it hands out.
#include "fusionscope_mlp.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "cuda_check.h"
#include "executor.h"
#include "fusionscope/kernels/config.h"
#include "fusionscope/kernels/runner.h"

namespace fk = fusionscope::kernels;
namespace fd = fusionscope::kernels::detail;

struct fs_mlp {
  std::unique_ptr<fd::Executor> exec;
  std::string path, choices;
};

namespace {

void say(char* error, size_t size, const std::string& text) {
  if (!error || size == 0) return;
  const size_t n = std::min(size - 1, text.size());
  std::memcpy(error, text.data(), n);
  error[n] = '\0';
}

// Runs f, turning every exception into a status and a sentence.
template <typename F>
int guarded(char* error, size_t size, F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    say(error, size, e.what());
  } catch (...) {
    say(error, size, "unknown failure");
  }
  cudaGetLastError();  // leave no non-sticky error for the caller's next CUDA call
  return 1;
}

}  // namespace

extern "C" {

int fs_mlp_supports(const char* config_json, const char* variant, char* error, size_t error_size) {
  bool applies = false;
  const int rc = guarded(error, error_size, [&] {
    if (!config_json || !variant) throw fk::ConfigError("a configuration and a variant are needed");
    std::string why;
    applies = fk::supports(fk::config_from_json(config_json), fk::parse_variant(variant), &why);
    if (!applies) say(error, error_size, why);
  });
  return rc != 0 ? -1 : applies ? 1 : 0;
}

fs_mlp* fs_mlp_create(const char* config_json, const char* variant, const char* pins,
                      int input_sets, char* error, size_t error_size) {
  auto mlp = std::make_unique<fs_mlp>();
  const int rc = guarded(error, error_size, [&] {
    if (!config_json || !variant) throw fk::ConfigError("a configuration and a variant are needed");
    const fk::MlpConfig config = fk::config_from_json(config_json);
    const fk::Variant v = fk::parse_variant(variant);
    if (fk::is_torch_variant(v))
      throw fk::ConfigError(std::string(variant) + " runs in PyTorch, not in our kernels");
    const fd::KernelPins kernel_pins = fd::parse_kernel_pins(pins ? pins : "");
    int device = 0;
    FS_CUDA(cudaGetDevice(&device));
    const fk::DeviceInfo dev = fk::query_device(device);
    if (!dev.available) throw fd::CudaError("no usable GPU: " + dev.unavailable_reason);
    fk::validate(config, v, dev.free_memory_bytes);
    const int sets = fd::choose_input_sets(config, v, dev, std::max(input_sets, 0));
    mlp->exec = std::make_unique<fd::Executor>(config, v, sets, fk::GatedGemmPath::kAuto,
                                               kernel_pins, 0x5eed, device);
    mlp->path = mlp->exec->kernel_path();
    mlp->choices = mlp->exec->kernel_choices();
  });
  return rc == 0 ? mlp.release() : nullptr;
}

void fs_mlp_destroy(fs_mlp* mlp) {
  if (!mlp) return;
  cudaDeviceSynchronize();  // nothing of ours may still run on buffers about to be freed
  delete mlp;
}

int fs_mlp_input_sets(const fs_mlp* mlp) {
  return mlp ? mlp->exec->input_sets() : 0;
}

int fs_mlp_kernels(const fs_mlp* mlp) {
  return mlp ? static_cast<int>(mlp->exec->plan().launches.size()) : 0;
}

const char* fs_mlp_kernel_path(const fs_mlp* mlp) {
  return mlp ? mlp->path.c_str() : "";
}

const char* fs_mlp_kernel_choices(const fs_mlp* mlp) {
  return mlp ? mlp->choices.c_str() : "";
}

int fs_mlp_forward(fs_mlp* mlp, int set, void* stream, char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    if (!mlp) throw fk::ConfigError("no MLP");
    if (set < 0 || set >= mlp->exec->input_sets())
      throw fk::ConfigError("input copy " + std::to_string(set) + " of " +
                            std::to_string(mlp->exec->input_sets()));
    mlp->exec->forward(static_cast<cudaStream_t>(stream), set, false);
  });
}

int fs_mlp_copy_data(const fs_mlp* mlp, const char* name, void* dst, size_t bytes, char* error,
                     size_t error_size) {
  return guarded(error, error_size, [&] {
    if (!mlp || !name) throw fk::ConfigError("no MLP, or no name");
    mlp->exec->copy_data(name, dst, bytes);
  });
}

int fs_mlp_check(fs_mlp* mlp, unsigned long long check_rows, double* rel_error, int* passed,
                 char* error, size_t error_size) {
  return guarded(error, error_size, [&] {
    if (!mlp) throw fk::ConfigError("no MLP");
    cudaStream_t s = nullptr;
    FS_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    fk::Correctness c;
    try {
      c = mlp->exec->check(s, check_rows);
    } catch (...) {
      cudaStreamDestroy(s);
      throw;
    }
    cudaStreamDestroy(s);
    if (rel_error) *rel_error = c.rel_error;
    if (passed) *passed = c.passed ? 1 : 0;
  });
}

}  // extern "C"
