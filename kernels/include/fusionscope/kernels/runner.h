// Runs a configuration in one variant on a CUDA device and times it. CUDA-free header: the lab,
// the command line and the app include it without the toolkit's headers.
//
// Each timed or warm-up iteration is an NVTX range "iteration N" (N counts from 0 over warm-up and
// timed iterations together) in the NVTX domain "fusionscope"; inside it each launch of the plan
// sits in a range named by its op (PlannedLaunch::op), so a profiler can attribute every kernel to
// its op. In graph mode the op ranges are opened while the graph is captured (once, before the
// first iteration); each replay is still wrapped in its "iteration N" range.
//
// Nothing here aborts the process: CUDA errors, a missing GPU or a bad configuration come back in
// RunResult::error with ok == false.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fusionscope/kernels/config.h"
#include "fusionscope/kernels/plan.h"

namespace fusionscope::kernels {

inline constexpr const char* kNvtxDomain = "fusionscope";

struct DeviceInfo {
  bool available = false;
  std::string unavailable_reason;  // set when !available: no driver, no device, bad index...
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  uint64_t total_memory_bytes = 0;
  uint64_t free_memory_bytes = 0;
  uint64_t l2_bytes = 0;
  int sm_clock_khz = 0;      // peak SM clock
  int memory_clock_khz = 0;  // peak memory clock
  int memory_bus_bits = 0;
  // Derived: memory clock x 2 (double data rate) x bus width. 0 when the device does not say.
  double memory_bandwidth_bytes_per_s = 0;
  // Derived: SMs x dense fp16/bf16 tensor FLOP per clock per SM x peak SM clock, for the
  // architectures whose per-SM rate is known (8.0, 8.6, 8.9, 9.0); 0 otherwise.
  double peak_tensor_flops = 0;
  std::string peak_flops_note;  // how peak_tensor_flops was derived, or why it is 0
  int driver_version = 0;       // e.g. 13000 for CUDA 13.0
  int runtime_version = 0;
};

// Never throws. Without a driver or device, available == false with the reason.
DeviceInfo query_device(int index = 0);

// Which gated-GEMM kernel to use (tests force each path; the sm_80 path also runs on Hopper).
enum class GatedGemmPath : uint8_t { kAuto, kHopperWgmma, kAmpereMmaSync };

struct RunProgress {
  enum class Phase : uint8_t { kSetup, kWarmup, kTimed, kCheck, kDone };
  Phase phase = Phase::kSetup;
  int iteration = 0;  // within the phase, counting from 0
  int total = 0;      // iterations in the phase
};

struct RunOptions {
  int device = 0;
  int warmup_iterations = 10;
  int timed_iterations = 100;
  // Timed iterations between two CUDA events: each of RunResult::iteration_ms is the mean of
  // that many back-to-back passes. An event recorded between two kernels holds the next one
  // back by ~2 us on an H100 (bench/kernels/launch_gap_bench), which a pass of a few tens of
  // microseconds would count as its own; a forward pass in a network has no event after it.
  int passes_per_sample = 1;
  bool use_graph = false;  // capture one forward pass in a CUDA graph and replay it
  bool check = true;       // compare against the fp32 reference after timing
  // 0: check every row; else the first and last check_rows / 2 rows only (large shapes, whose
  // reference on CUDA cores would take minutes; edge tiles sit at both ends).
  uint64_t check_rows = 0;
  bool nvtx = true;        // open the NVTX ranges described above
  uint64_t seed = 0x5eed;  // weights, biases and inputs come from this seed (never zeros)
  // Rotating copies of input and output, so repeated iterations do not all hit a warm L2.
  // 0 = automatic: enough copies to exceed twice the L2 when one copy is smaller than the L2
  // (capped by memory), else 1.
  int input_sets = 0;
  GatedGemmPath gated_path = GatedGemmPath::kAuto;
  // Empty: set-up picks the kernels it has candidates for by timing them (the Hopper GEMM's
  // configuration, ours or cuBLASLt for the down projection). Else an earlier run's
  // RunResult::kernel_choices: the same kernels, nothing timed, so that two processes (a run
  // and Nsight Compute's) run the same ones. A pin the run cannot take is a configuration error.
  std::string pin_kernels;
  // Only the timed iterations run between cudaProfilerStart() and cudaProfilerStop(), for a
  // profiler started with profiling off (`ncu --profile-from-start off`): set-up's timing of
  // candidate kernels and the warm-up stay unprofiled.
  bool profile_timed_only = false;
  // Called on the running thread between iterations; keep it cheap.
  std::function<void(const RunProgress&)> on_progress;
  // Called on the running thread before each of the plan's launches in warm-up and timed
  // iterations, with the run's stream (a cudaStream_t); not in graph mode. The counters pass puts
  // its L2 flush here, so each kernel starts as under Nsight Compute's cache control.
  std::function<void(void* stream)> before_launch;
  // Polled between iterations; when it becomes true the run stops and reports cancelled.
  const std::atomic<bool>* cancel = nullptr;
};

struct Correctness {
  bool checked = false;
  bool passed = false;
  double max_abs_error = 0;
  double max_abs_reference = 0;
  double rel_error = 0;     // ||out - ref||_2 / ||ref||_2 over the whole output
  double tolerance = 0;     // tolerance(dtype)
  uint64_t non_finite = 0;  // NaN or Inf outputs (any fails the check)
};

struct RunResult {
  bool ok = false;  // ran to the end without a CUDA or configuration error
  bool cancelled = false;
  std::string error;  // why !ok, for a person
  MlpConfig config;
  Variant variant = Variant::kEager;
  Plan plan;  // the prediction (empty when the configuration was refused)
  DeviceInfo device;
  std::string kernel_path;  // which implementation ran, e.g. "gated GEMM: wgmma (sm_90a)"
  // What set-up chose by timing, as RunOptions::pin_kernels takes it, e.g.
  // "gated=coop:2:16 down=cublaslt"; empty when nothing was chosen.
  std::string kernel_choices;
  int input_sets = 1;
  bool used_graph = false;
  // CUDA-event time of each timed iteration, or of each sample of passes_per_sample passes
  // (its mean pass)
  std::vector<double> iteration_ms;
  double median_ms = 0;
  double min_ms = 0;
  double mean_ms = 0;
  double wall_ms = 0;  // host wall time of the timed loop, synchronised at its end
  Correctness correctness;
};

// Validates (including free device memory), allocates, initialises from the seed, warms up, times
// and checks. Never throws for configuration or CUDA errors: they come back in the result.
RunResult run(const MlpConfig& config, Variant variant, const RunOptions& options = {});

}  // namespace fusionscope::kernels
