// run(): validate, set up, warm up, time with CUDA events, check. Every failure is reported in
// the result; nothing escapes as an exception or aborts.
#include "fusionscope/kernels/runner.h"

#include <cuda_profiler_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "../buffers.h"
#include "cuda_check.h"
#include "executor.h"
#include "nvtx_range.h"

namespace fusionscope::kernels {
namespace {

using detail::CudaError;

// Owns the stream, events and graphs of one run.
struct RunState {
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> events;
  std::vector<cudaGraphExec_t> graphs;
  ~RunState() {
    if (stream) cudaStreamSynchronize(stream);
    for (auto g : graphs) cudaGraphExecDestroy(g);
    for (auto e : events) cudaEventDestroy(e);
    if (stream) cudaStreamDestroy(stream);
  }
};

// The timed iterations between cudaProfilerStart() and cudaProfilerStop()
// (RunOptions::profile_timed_only); stopped however they end.
class ProfiledSpan {
 public:
  explicit ProfiledSpan(bool on) : on_(on) {
    if (on_) cudaProfilerStart();
  }
  ~ProfiledSpan() { end(); }
  ProfiledSpan(const ProfiledSpan&) = delete;
  ProfiledSpan& operator=(const ProfiledSpan&) = delete;
  void end() {
    if (on_) cudaProfilerStop();
    on_ = false;
  }

 private:
  bool on_;
};

bool cancelled(const RunOptions& o) {
  return o.cancel && o.cancel->load();
}

void report(const RunOptions& o, RunProgress::Phase phase, int i, int total) {
  if (o.on_progress) o.on_progress(RunProgress{phase, i, total});
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void run_or_throw(const MlpConfig& config, Variant variant, const RunOptions& o, RunResult& r) {
  r.device = query_device(o.device);
  if (!r.device.available) throw CudaError("no usable GPU: " + r.device.unavailable_reason);
  if (is_torch_variant(variant))
    throw ConfigError(std::string(to_string(variant)) +
                      " runs in PyTorch, through the Lab's Python subprocess, not in the runner");
  validate(config, variant, r.device.free_memory_bytes);
  r.plan = make_plan(config, variant);
  if (o.warmup_iterations < 0 || o.timed_iterations < 1)
    throw ConfigError("iterations: warm-up must be >= 0 and timed >= 1");
  report(o, RunProgress::Phase::kSetup, 0, 1);
  FS_CUDA(cudaSetDevice(o.device));

  const int sets = detail::choose_input_sets(config, variant, r.device, o.input_sets);
  detail::Executor exec(config, variant, sets, o.gated_path,
                        detail::parse_kernel_pins(o.pin_kernels), o.seed, o.device);
  r.kernel_path = exec.kernel_path();
  r.kernel_choices = exec.kernel_choices();
  r.plan = exec.plan();  // names the kernels chosen at set-up
  r.input_sets = exec.input_sets();

  RunState st;
  FS_CUDA(cudaStreamCreateWithFlags(&st.stream, cudaStreamNonBlocking));
  if (o.use_graph) {
    // One graph per input copy; op ranges are opened during capture.
    for (int s = 0; s < sets; ++s) {
      cudaGraph_t graph = nullptr;
      FS_CUDA(cudaStreamBeginCapture(st.stream, cudaStreamCaptureModeThreadLocal));
      try {
        exec.forward(st.stream, s, o.nvtx);
      } catch (...) {
        cudaStreamEndCapture(st.stream, &graph);
        if (graph) cudaGraphDestroy(graph);
        throw;
      }
      FS_CUDA(cudaStreamEndCapture(st.stream, &graph));
      cudaGraphExec_t exec_graph = nullptr;
      const cudaError_t e = cudaGraphInstantiate(&exec_graph, graph, 0);
      cudaGraphDestroy(graph);
      FS_CUDA(e);
      st.graphs.push_back(exec_graph);
    }
    r.used_graph = true;
  }
  auto one_pass = [&](int iteration) {
    detail::NvtxRange range(("iteration " + std::to_string(iteration)).c_str(), o.nvtx);
    const int s = iteration % sets;
    if (o.use_graph) {
      FS_CUDA(cudaGraphLaunch(st.graphs[s], st.stream));
    } else {
      exec.forward(st.stream, s, o.nvtx, &o.before_launch);
    }
  };

  int iteration = 0;
  for (int i = 0; i < o.warmup_iterations; ++i, ++iteration) {
    if (cancelled(o)) break;
    report(o, RunProgress::Phase::kWarmup, i, o.warmup_iterations);
    one_pass(iteration);
  }
  FS_CUDA(cudaStreamSynchronize(st.stream));

  // Samples of `per` passes between two events (the last sample takes what is left).
  const int n = o.timed_iterations;
  const int per = std::clamp(o.passes_per_sample, 1, std::max(1, n));
  const int samples = (n + per - 1) / per;
  st.events.resize(static_cast<size_t>(samples) + 1, nullptr);
  for (auto& e : st.events) FS_CUDA(cudaEventCreate(&e));
  std::vector<int> in_sample;
  ProfiledSpan profiled(o.profile_timed_only);
  const auto t0 = std::chrono::steady_clock::now();
  FS_CUDA(cudaEventRecord(st.events[0], st.stream));
  int done = 0;
  for (int i = 0; i < n && !cancelled(o); ++i, ++iteration, ++done) {
    report(o, RunProgress::Phase::kTimed, i, n);
    one_pass(iteration);
    if ((i + 1) % per == 0 || i + 1 == n) {
      in_sample.push_back(i + 1 - static_cast<int>(in_sample.size()) * per);
      FS_CUDA(cudaEventRecord(st.events[in_sample.size()], st.stream));
    }
  }
  // Cancelled inside a sample: its passes were not timed.
  FS_CUDA(cudaStreamSynchronize(st.stream));
  profiled.end();
  r.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < in_sample.size(); ++i) {
    float ms = 0;
    FS_CUDA(cudaEventElapsedTime(&ms, st.events[i], st.events[i + 1]));
    r.iteration_ms.push_back(static_cast<double>(ms) / in_sample[i]);
  }
  if (!r.iteration_ms.empty()) {
    r.median_ms = median(r.iteration_ms);
    r.min_ms = *std::min_element(r.iteration_ms.begin(), r.iteration_ms.end());
    r.mean_ms = std::accumulate(r.iteration_ms.begin(), r.iteration_ms.end(), 0.0) /
                static_cast<double>(r.iteration_ms.size());
  }
  if (cancelled(o)) {
    r.cancelled = true;
    r.error = "cancelled after " + std::to_string(done) + " of " + std::to_string(n) +
              " timed iterations";
    return;
  }
  if (o.check) {
    report(o, RunProgress::Phase::kCheck, 0, 1);
    r.correctness = exec.check(st.stream, o.check_rows);
  }
  report(o, RunProgress::Phase::kDone, 0, 1);
  r.ok = true;
}

}  // namespace

RunResult run(const MlpConfig& config, Variant variant, const RunOptions& options) {
  RunResult r;
  r.config = config;
  r.variant = variant;
  try {
    run_or_throw(config, variant, options, r);
  } catch (const ConfigError& e) {
    r.ok = false;
    r.error = e.what();
  } catch (const CudaError& e) {
    r.ok = false;
    r.error = e.what();
    // Clear a non-sticky error so the next run in this process starts clean.
    cudaGetLastError();
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = std::string("run failed: ") + e.what();
  }
  return r;
}

}  // namespace fusionscope::kernels
