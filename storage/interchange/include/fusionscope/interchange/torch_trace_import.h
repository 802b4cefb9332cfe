// Import of PyTorch profiler traces (the Chrome trace JSON of `export_chrome_trace`, plain or
// gzipped) into a session. Reading and writing are two steps so a bad file never touches a store:
// read_torch_trace() parses into a TorchTrace, write_torch_trace() adds it to a session as one run.
//
// What is kept: kernels (cat `kernel`), CUDA runtime and driver calls, `cpu_op` and
// `user_annotation` ranges on their CPU thread, `gpu_user_annotation` ranges on their stream,
// memsets and memcpys, and the `ac2g` flows that link a launch to its GPU work by correlation id.
// Times become integer nanoseconds on the trace's clock: baseTimeNanoseconds + ts, read from the
// number's decimal text so no precision is lost to floating point.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fusionscope/storage/records.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::interchange {

// One kind of problem met while reading, and how many events it concerned.
struct ImportWarning {
  std::string message;  // e.g. "skipped event: `dur` is negative"
  uint64_t count = 0;
};

// What the reader found, and what it had to leave out. Counts are of records kept.
struct ImportStats {
  uint64_t events = 0;  // entries of traceEvents
  uint64_t kernels = 0;
  uint64_t memsets = 0;
  uint64_t memcpys = 0;
  uint64_t runtime_calls = 0;
  uint64_t driver_calls = 0;
  uint64_t cpu_ops = 0;
  uint64_t user_annotations = 0;
  uint64_t gpu_annotations = 0;
  uint64_t flow_starts = 0;       // `ac2g` "s" events
  uint64_t flow_finishes = 0;     // `ac2g` "f" events
  uint64_t flows_linked = 0;      // flows whose start is an API call and whose finish is GPU work
  uint64_t kernels_launched = 0;  // kernels with exactly one API call of their correlation id
  uint64_t kernels_with_op = 0;   // kernels attributed to an enclosing cpu_op
  uint64_t ignored = 0;  // well-formed events of kinds not imported (metadata, instants, ...)
  uint64_t skipped = 0;  // malformed events left out; the reasons are in `warnings`
  std::vector<ImportWarning> warnings;
};

// A parsed trace, not yet in a session. Record names are indexes into `strings` (0 is ""); they
// are re-interned by write_torch_trace(). Records are sorted by start time.
struct TorchTrace {
  storage::SessionInfo session;  // GPU, compute capability, SMs, CUDA/driver/CUPTI versions
  std::string source_name;       // file stem, e.g. "torch_geglu_64x128x768x3072_eager"
  std::string variant;           // "torch-eager", "torch-compile" or "torch-cuda-graph"
  std::string dtype;             // most common floating input type of the cpu_ops, or ""
  std::string trace_id;
  int profiler_steps = 0;     // ProfilerStep#N annotations
  int64_t steps_wall_ns = 0;  // first step start to last step end
  std::vector<std::string> strings{""};
  std::vector<storage::KernelRecord> kernels;
  std::vector<storage::MemopRecord> memops;
  std::vector<storage::ApiCallRecord> api_calls;
  std::vector<storage::RangeRecord> ranges;
  ImportStats stats;

  const std::string& str(storage::StringId id) const {
    return id < strings.size() ? strings[id] : strings[0];
  }
};

// Parses trace bytes: JSON text, or gzip/zlib-compressed JSON (recognized by content).
// `source_name` names the trace in messages and picks the variant when it says "compile" or
// "eager". Throws InterchangeError when the bytes are not a Chrome trace at all; events that are
// malformed one by one are skipped and counted in stats.warnings.
TorchTrace parse_torch_trace(std::string_view bytes, std::string_view source_name);

// Reads a `.json` or `.json.gz` file. Throws InterchangeError naming the file.
TorchTrace read_torch_trace(const std::filesystem::path& file);

struct WriteOptions {
  std::string run_name;  // default: the trace's source_name
  std::string variant;   // default: the trace's variant
};

// Adds the trace to `store` as one run (kind "imported") and returns its id. Fills the session's
// GPU fields from the trace where the session has none. On failure the partial run is removed
// and the StoreError propagates.
int64_t write_torch_trace(storage::SessionStore& store, const TorchTrace& trace,
                          const WriteOptions& options = {});

// The trace as a RunData without a store, arranged as load_run() arranges one (sorted, with lanes
// and range depths): for the exporters and checks that do not go through a session file.
storage::RunData to_run_data(const TorchTrace& trace);

}  // namespace fusionscope::interchange
