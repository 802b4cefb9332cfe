// A configuration in one variant, set up on the device: buffers allocated (exactly those of
// buffer_specs()), weights and inputs drawn from the seed, GEMM descriptors chosen. forward()
// enqueues one pass as the plan's launches, each inside an NVTX range named by its op; check()
// compares one pass with the fp32 reference.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device_buffer.h"
#include "fusionscope/kernels/plan.h"
#include "fusionscope/kernels/runner.h"
#include "kernel_pins.h"

namespace fusionscope::kernels::detail {

// Input/output copies to rotate through: `requested` when > 0; otherwise, when one copy is under
// half the L2, enough copies for 3x the L2 (at most 256, within half the free memory), so that a
// pass never finds its input in the L2; else 1.
int choose_input_sets(const MlpConfig& c, Variant v, const DeviceInfo& dev, int requested);

class Executor {
 public:
  // `pins`: kernels set-up takes as given instead of timing candidates (kernel_pins.h).
  Executor(const MlpConfig& c, Variant v, int input_sets, GatedGemmPath path,
           const KernelPins& pins, uint64_t seed, int device);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const Plan& plan() const { return plan_; }
  int input_sets() const { return sets_; }
  const std::string& kernel_path() const { return kernel_path_; }
  // What set-up chose (or was pinned to), as kernel_pins_text() writes it.
  std::string kernel_choices() const { return kernel_pins_text(chosen_); }
  uint64_t allocated_bytes() const { return allocated_; }

  // Enqueues one forward pass over input/output copy `set` (0 <= set < input_sets()), calling
  // `before_launch` (when set) before each launch.
  void forward(cudaStream_t stream, int set, bool nvtx,
               const std::function<void(void*)>* before_launch = nullptr);
  // Poisons output copy 0, runs one pass on it, and compares it with the fp32 reference: every
  // row, or when check_rows > 0 and smaller than rows, the first and last check_rows / 2 rows
  // (where the edge tiles are; the reference of a large shape takes minutes on CUDA cores).
  Correctness check(cudaStream_t stream, uint64_t check_rows = 0);
  // Copies the data buffer `name` (weightN, biasN, or input: every copy, one after another) into
  // device memory at dst, which holds exactly its bytes, so that another program can compute on
  // the same numbers. Throws ConfigError for another name or size.
  void copy_data(const std::string& name, void* dst, uint64_t bytes) const;

 private:
  struct Step {
    std::string op;
    std::function<void(cudaStream_t, int)> launch;
  };
  void* buf(const std::string& name) const;
  const void* input(int set) const;
  void* output(int set) const;
  void build_steps(GatedGemmPath path, const KernelPins& pins, int device);
  // The fp32 reference of rows [r0, r0 + n) into reference_output (rows from 0).
  void reference(cudaStream_t stream, uint64_t r0, uint64_t n);

  MlpConfig config_;
  Variant variant_;
  Plan plan_;
  int sets_ = 1;
  uint64_t allocated_ = 0;
  // Input and output copies: base pointers and the bytes between copies (hot path: no lookups).
  uint8_t* input_base_ = nullptr;
  uint8_t* output_base_ = nullptr;
  uint64_t input_copy_bytes_ = 0;
  uint64_t output_copy_bytes_ = 0;
  std::string kernel_path_;
  KernelPins chosen_;
  std::map<std::string, DeviceBuffer> buffers_;
  std::vector<Step> steps_;
  struct Resources;
  std::unique_ptr<Resources> res_;
};

}  // namespace fusionscope::kernels::detail
