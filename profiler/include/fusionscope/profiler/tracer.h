// Captures a run's GPU activity with CUPTI's Activity API: kernels, memcpy/memset, CUDA runtime
// and driver API calls, NVTX ranges, synchronization waits and CUPTI's own overhead. Buffers that
// CUPTI hands back are decoded on a worker thread and written to a TraceSink in batches; at the
// end of the run each kernel is linked to the op (NVTX range) whose code launched it.
//
// The tracer never takes the program down with it: without a GPU, without a driver, or when
// another profiler already holds CUPTI (Nsight Systems, the PyTorch profiler...), available() is
// false, unavailable_reason() says why, and begin_run()/end_run() still work, reporting that the
// run has no trace. This header needs no CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace fusionscope::profiler {

class TraceSink;

struct TracerOptions {
  std::size_t buffer_bytes = std::size_t{8} << 20;  // each activity buffer lent to CUPTI
  // Buffers CUPTI may hold at once (lent and not yet decoded); 0 = no limit. When the limit is
  // reached CUPTI drops records, and the run reports how many (tests use it to force drops).
  std::size_t max_buffers = 0;
  std::size_t batch_records = 8192;  // records per sink call (one store transaction)
  bool driver_api = true;            // record driver API calls besides the runtime's
  // Kernels take their op from the innermost range of this NVTX domain around their launch;
  // ranges whose name starts with iteration_prefix mark iterations, not ops.
  std::string nvtx_domain = "fusionscope";
  std::string iteration_prefix = "iteration";
};

// What one run's capture produced.
struct TraceOutcome {
  bool traced = false;  // records were captured (possibly partially: see status)
  // Empty for a complete trace; otherwise why there is no trace or only part of one. Goes to
  // RunInfo::trace_status.
  std::string status;
  uint64_t dropped_records = 0;  // records CUPTI reported lost (RunInfo::dropped_records)
  std::size_t kernels = 0, api_calls = 0, ranges = 0, memops = 0;
  std::size_t kernels_without_launch = 0;  // no API record with the kernel's correlation id
  std::size_t kernels_without_op = 0;      // launched outside any op range
};

class Tracer {
 public:
  // At most one tracer per process may capture: CUPTI's activity buffers are process-wide.
  explicit Tracer(TracerOptions options = {});
  ~Tracer();  // ends a run still open and flushes what CUPTI holds
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  bool available() const;
  const std::string& unavailable_reason() const;

  // Starts capturing into `sink`, which must outlive end_run(). Records of CUDA work done between
  // begin_run() and end_run() belong to this run.
  void begin_run(TraceSink& sink);
  // Flushes CUPTI, waits until every buffer is decoded, links kernels to launches and ops, writes
  // the rest to the sink and stops capturing. Call it after the run's work has completed (the
  // device synchronized). Sink errors (a full disk...) are reported in the outcome's status.
  TraceOutcome end_run();
  bool in_run() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusionscope::profiler
