// Import of PyTorch profiler traces (the Chrome trace JSON of `export_chrome_trace`, plain or
// gzipped) into a session. Reading and writing are two steps so a bad file never touches a store:
// read_torch_trace() parses into a TorchTrace, write_torch_trace() adds it to a session as one run.
//
// Reading streams: one thread decompresses while another splits the text into events and parses
// each on its own (simdjson), so memory holds the records kept and a few MiB of text, whatever
// the file's size; an input that never ends or inflates without bound costs time, not memory.
//
// What is kept: kernels (cat `kernel`), CUDA runtime and driver calls, `cpu_op` and
// `user_annotation` ranges on their CPU thread, `gpu_user_annotation` ranges on their stream,
// memsets and memcpys, instant events, complete events of other categories (python_function,
// ...), and the `ac2g` flows that link a launch to its GPU work by correlation id. Times become
// integer nanoseconds on the trace's clock: baseTimeNanoseconds + ts, read from the number's
// decimal text so no precision is lost to floating point.
//
// Nothing a client keys on is lost: each record keeps the trace's `External id`, Kineto's `Ev Idx`
// and, as one interned JSON object (records.h's `extra`), every member of the event its columns do
// not hold (cpu_op input shapes and types, kernel occupancy, queued, context, cbid, ...); process
// and thread names come from the metadata events, which are kept whole with the trace's top-level
// members (run extras "chrome.metadata" and "chrome.header"). The Chrome trace export writes it
// all back (chrome_trace_export.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fusionscope/interchange/interchange_error.h"
#include "fusionscope/storage/records.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::interchange {

// How far a read (or a write into a session) has come; see ImportOptions::progress.
struct ImportProgress {
  enum class Phase { kReading, kWriting };
  Phase phase = Phase::kReading;
  uint64_t file_bytes = 0;  // bytes of the file read so far (compressed, if it is)
  uint64_t file_size = 0;   // its size; 0 when unknown (a pipe, a device)
  uint64_t text_bytes = 0;  // bytes of JSON text parsed (decompressed)
  uint64_t events = 0;      // entries of traceEvents read
  uint64_t records = 0;     // kWriting: records written into the session so far
  uint64_t records_total = 0;
  double seconds = 0.0;  // since the read began
};

struct ImportOptions {
  // Called on the reading thread about ten times a second, and once at the end of each phase.
  std::function<void(const ImportProgress&)> progress;
  // Checked as often; once set, the read (or write) stops with ImportCancelled.
  const std::atomic<bool>* cancel = nullptr;
  // Decompressed text handed from the decompressing thread to the parser at a time.
  size_t chunk_bytes = size_t{1} << 20;
  // What the reader remembers until the trace's end to link it (each kernel's launch, the flows,
  // the operators' spans; in an import into a session also the records linking completes) is
  // kept in a dozen lists of at most this many bytes each in memory; past it, in temporary files
  // (beside the session, else in the system's temporary directory). Memory thus stays bounded
  // whatever the trace's size.
  size_t spill_bytes = size_t{4} << 20;
};

// Thrown when ImportOptions::cancel was set; a write into a session leaves no run behind.
class ImportCancelled : public InterchangeError {
 public:
  ImportCancelled() : InterchangeError("import cancelled") {}
};

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
  uint64_t instants = 0;          // instant events (`ph` "i"), kept as ranges of no length
  uint64_t other_events = 0;      // complete events of categories not interpreted, kept as ranges
  uint64_t metadata_events = 0;   // `ph` "M": process and thread names, sort indexes, labels
  uint64_t flow_starts = 0;       // `ac2g` "s" events
  uint64_t flow_finishes = 0;     // `ac2g` "f" events
  uint64_t flows_linked = 0;      // flows whose start is an API call and whose finish is GPU work
  uint64_t kernels_launched = 0;  // kernels with exactly one API call of their correlation id
  uint64_t kernels_with_op = 0;   // kernels attributed to an enclosing cpu_op
  uint64_t ignored = 0;  // well-formed events not kept (flows other than ac2g, counters, ...)
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
  int profiler_steps = 0;        // ProfilerStep#N annotations
  int warmup_steps = 0;          // of those, warm-up iterations (our own exports say how many)
  std::string exported_variant;  // the variant of the run our own export came from, or ""
  int64_t steps_wall_ns = 0;     // first step start to last step end
  std::vector<std::string> strings{""};
  std::vector<storage::KernelRecord> kernels;
  std::vector<storage::MemopRecord> memops;
  std::vector<storage::ApiCallRecord> api_calls;
  std::vector<storage::RangeRecord> ranges;
  std::vector<storage::ProcessRecord> processes;  // names of the CPU processes, by pid
  std::vector<storage::ThreadRecord> threads;     // names of their threads
  std::vector<storage::RunExtraRecord> extras;    // "chrome.header", "chrome.metadata", ...
  ImportStats stats;

  const std::string& str(storage::StringId id) const {
    return id < strings.size() ? strings[id] : strings[0];
  }
};

// Parses trace bytes: JSON text, or gzip/zlib-compressed JSON (recognized by content; gzip
// members one after another read as one text). `source_name` names the trace in messages and
// picks the variant when it says "compile" or "eager". Throws InterchangeError when the bytes are
// not a Chrome trace at all, or when it has events and none of them could be read; events that
// are malformed one by one are skipped and counted in stats.warnings.
TorchTrace parse_torch_trace(std::string_view bytes, std::string_view source_name,
                             const ImportOptions& options = {});

// Reads a `.json` or `.json.gz` file (or any readable path: a pipe, a device), streaming.
// Throws InterchangeError naming the file.
TorchTrace read_torch_trace(const std::filesystem::path& file, const ImportOptions& options = {});

struct WriteOptions {
  std::string run_name;  // default: the trace's source_name
  std::string variant;   // default: the trace's variant
};

// Adds the trace to `store` as one run (kind "imported") and returns its id. Fills the session's
// GPU fields from the trace where the session has none. Writes in batches, reporting progress
// and honouring cancellation through `import` between them. The run appears whole or not at
// all: on failure or cancellation it is removed and the error (StoreError, ImportCancelled)
// propagates; a killed process leaves a run no reader lists, which the next read-write open
// removes.
int64_t write_torch_trace(storage::SessionStore& store, const TorchTrace& trace,
                          const WriteOptions& options = {}, const ImportOptions& import = {});

// Reads `file` and writes it into `store` as one run at once, the writing on a thread of its own
// overlapping the reading: records final as soon as they are read (operators, annotations and
// launch calls, when the trace gives its time base before its events, as PyTorch's do) go into
// the session while the rest of the file is read; the others (kernels, memory operations, calls
// without a correlation id) wait in temporary files beside the session until the trace is
// linked, as do the facts linking needs (ImportOptions::spill_bytes), so memory stays bounded
// whatever the trace's size. The run
// appears whole or not at all: readers do not see it before it is complete, and a bad trace, a
// failure, a cancel (ImportCancelled) or a killed process leaves no run (strings the session
// gained meanwhile stay, unnamed by any record). Progress: phase kReading while the file is read
// (`records` counts those written so far), then kWriting.
struct ImportResult {
  TorchTrace trace;      // as read_torch_trace() gives it, but without its records and strings
  int64_t run_id = 0;    // the run, complete
  uint64_t records = 0;  // records written
};
ImportResult import_torch_trace(const std::filesystem::path& file, storage::SessionStore& store,
                                const WriteOptions& options = {}, const ImportOptions& import = {});

// The trace as a RunData without a store, arranged as load_run() arranges one (sorted, with lanes
// and range depths): for the exporters and checks that do not go through a session file.
storage::RunData to_run_data(const TorchTrace& trace);

}  // namespace fusionscope::interchange
