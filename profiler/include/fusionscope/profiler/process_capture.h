// Capturing another program: `fusionscope capture -- COMMAND`. The command is started with
// fusionscope's injection library (libfusionscope_inject.so, the CUPTI client) put into every
// process of it that initialises CUDA, through CUDA_INJECTION64_PATH; each such process streams
// its activity records back over a Unix socket, and they become one run: every process its own
// CPU and GPU lanes (records carry its pid), kernels linked to their launches and to the
// innermost NVTX range around them (their op), as for native runs (docs/capture.md).
//
// The command runs in its own process group so that a stop (Ctrl-C, the app's Stop) reaches all
// of it: SIGINT first, SIGTERM and SIGKILL if it does not end. What was traced is kept in every
// case: a process that crashes sends what it can before it dies.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fusionscope/counters/kernel_counters.h"
#include "fusionscope/profiler/op_order.h"
#include "fusionscope/profiler/tracer.h"

namespace fusionscope::profiler {

class TraceSink;

struct ProcessCaptureOptions {
  std::vector<std::string> command;  // argv; command[0] is looked up in PATH when it has no '/'
  std::string working_directory;     // empty: this process's
  // Variables set for the command on top of this process's environment.
  std::vector<std::pair<std::string, std::string>> environment;
  // Iteration ranges (stored as "iteration N"): names starting with this; empty: PyTorch's
  // "ProfilerStep#", else "iteration".
  std::string iteration_range;
  // Record only inside the first NVTX range of this name in each process (empty: everything).
  std::string capture_range;
  // A program compiled whole opens one range per iteration and none per op: its kernels then
  // take these ops by launch order within each iteration (op_order.h). Empty: ops come from the
  // NVTX ranges only.
  std::vector<PlannedOp> iteration_ops;
  // Record from `delay_s` after the start for `duration_s` (0: to the end). Not with a range.
  double delay_s = 0;
  double duration_s = 0;
  bool driver_api = true;
  std::size_t buffer_bytes = std::size_t{8} << 20;
  std::string inject_library;  // empty: default_inject_library()
  // The counters pass (a second run of the command for `capture --counters`): kernels of the
  // window are profiled with the range profiler (kernel replay) instead of being traced: DRAM
  // bytes in one pass with the L2 swept before each kernel, the other metrics over the next such
  // window. The window is the capture range (then its second occurrence), or else iteration range
  // number `warmup` (from 0; then the one after it).
  bool counters = false;
  int warmup = 0;
  std::string kernel_filter;  // ECMAScript regex on the kernel's name; empty: all
  std::size_t kernel_limit = 0;
  double stop_grace_s = 5;  // each step of a stop waits this long before the next signal
};

// One process of the command that initialised CUDA.
struct CapturedProcess {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string name;  // "python3 train.py"
  std::vector<std::string> argv;
  bool ended_cleanly = false;  // flushed everything at exit
  int crash_signal = 0;        // died of this signal (reported by the process itself)
  bool no_trace = false;       // CUPTI could not trace it: see notes
  std::vector<std::string> notes;
  uint64_t dropped_records = 0;
  std::size_t kernels = 0, api_calls = 0, ranges = 0, memops = 0;
  std::size_t kernels_without_launch = 0, kernels_without_op = 0;
  // iteration_ops: iterations whose kernels took the plan's ops by launch order, and those that
  // did not fit the plan.
  std::size_t iterations_ops_by_order = 0, iterations_ops_unmatched = 0;
  std::string iteration_prefix;  // which iteration ranges it had ("" when none)
  // Counters mode: the pass over this process's window. Kernel i's `index` is its position in
  // launch order within the window, `range_name` its name.
  std::optional<counters::CounterPassResult> counters;
  std::string counters_window;        // the window, in words
  std::string counters_method;        // which pass gave which metrics, and what is missing
  std::size_t counters_filtered = 0;  // profiled, but left out by the kernel filter
};

struct ProcessCaptureProgress {
  double elapsed_s = 0;
  std::size_t processes = 0;  // processes that connected so far
  uint64_t bytes = 0;         // received from them
  bool stopping = false;
  std::string event;  // the latest thing that happened, in words; may be empty
};

struct ProcessCaptureResult {
  bool started = false;     // the command was executed
  std::string start_error;  // why not
  bool exited = false;      // it exited (exit_code) rather than dying of a signal
  int exit_code = 0;
  int signal = 0;                          // the command's own process died of this signal
  bool stopped = false;                    // it was stopped on request
  double wall_s = 0;                       // from start to the end of its last process
  std::vector<CapturedProcess> processes;  // in the order they connected
  TraceOutcome trace;  // summed over the processes; status says what is missing, in words
  // "exited with status 3", "killed by SIGSEGV", "stopped (Ctrl-C)"; empty for exit status 0.
  std::string ending() const;
  // No process initialised CUDA, or none recorded any GPU work or API call.
  bool no_cuda_activity() const;
};

class ProcessCapture {
 public:
  explicit ProcessCapture(ProcessCaptureOptions options);
  // Runs the command to its end, its records going to `sink` (called on this thread). When
  // `stop` becomes true the command is stopped. `progress` is called on this thread about ten
  // times a second and when a process connects. Sink errors (StoreError) propagate after the
  // command has been stopped.
  ProcessCaptureResult run(TraceSink& sink, const std::atomic<bool>* stop = nullptr,
                           const std::function<void(const ProcessCaptureProgress&)>& progress = {});

 private:
  ProcessCaptureOptions options_;
};

// libfusionscope_inject.so beside the running executable (where it is installed), or beside
// the library directory of a build tree; empty when there is none.
std::string default_inject_library();

// "SIGSEGV" for SIGSEGV, else "signal N".
std::string signal_name(int signal);

}  // namespace fusionscope::profiler
