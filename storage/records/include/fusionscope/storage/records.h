// Plain records that flow from the profiler (or an importer) into the session store, and back out
// to analysis and the views. Times are nanoseconds on one clock per session (CUPTI's timestamp for
// captures, the trace's clock for imports). Strings are interned: a StringId indexes the session's
// string table, and 0 is always the empty string.
//
// Records of several processes can share a run (a capture of a program that forks, a trace of a
// multi-process job): `pid` names the operating-system process a record belongs to, 0 when
// unknown, and RunData::processes names them. Lanes are keyed by process, so two processes'
// threads and streams never merge.
//
// Records imported from a trace keep what the trace said that no field here holds (schema
// version 4): `external_id` (PyTorch's `External id`, linking an operator to its runtime calls and
// GPU work) and `extra`, an interned JSON object of the event's other members, written back
// verbatim on export. See docs/session-format.md.
#pragma once

#include <cstdint>
#include <string>

namespace fusionscope::storage {

using StringId = uint32_t;
inline constexpr StringId kNoString = 0;

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

// One GPU kernel execution.
struct KernelRecord {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t correlation_id = 0;  // links to the ApiCallRecord that launched it; 0 = unknown
  StringId name = kNoString;    // as reported (usually mangled); demangling is a view concern
  StringId op = kNoString;      // the configuration op it belongs to (innermost NVTX op range)
  Dim3 grid;
  Dim3 block;
  uint32_t registers = 0;      // per thread
  uint32_t static_smem = 0;    // bytes per block
  uint32_t dynamic_smem = 0;   // bytes per block
  uint32_t pid = 0;            // process that launched it; 0 = unknown
  int64_t external_id = 0;     // the trace's `External id`; 0 = none
  StringId extra = kNoString;  // JSON object of the event's members no field holds; 0 = none
  friend bool operator==(const KernelRecord&, const KernelRecord&) = default;
};

enum class ApiDomain : uint8_t { kRuntime = 0, kDriver = 1 };

// One CUDA runtime or driver API call on a CPU thread.
struct ApiCallRecord {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t thread_id = 0;
  uint32_t correlation_id = 0;
  StringId name = kNoString;  // e.g. "cudaLaunchKernel"
  ApiDomain domain = ApiDomain::kRuntime;
  uint32_t pid = 0;            // 0 = unknown
  int64_t external_id = 0;     // the trace's `External id`; 0 = none
  StringId extra = kNoString;  // JSON object of the event's members no field holds; 0 = none
  friend bool operator==(const ApiCallRecord&, const ApiCallRecord&) = default;
};

enum class RangeKind : uint8_t {
  kNvtx = 0,            // NVTX push/pop or start/end range
  kCpuOp = 1,           // framework operator (PyTorch cpu_op), imported
  kUserAnnotation = 2,  // framework record_function on the CPU, imported
  kGpuAnnotation = 3,   // framework annotation projected onto a GPU stream, imported
  kSync = 4,            // a CUDA synchronization wait on a CPU thread (CUPTI), captured
  kTracerOverhead = 5,  // time the tracer itself took (CUPTI's overhead records), captured
  kInstant = 6,         // an instant event of a trace (start == end), imported
  kOther = 7,           // a complete event of a category fusionscope does not interpret (PyTorch's
                        // python_function, ...), imported; its category is in `extra`
};

// A named CPU-side (or projected GPU-side) range. Depth is derived when a run is loaded.
struct RangeRecord {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t thread_id = 0;  // for kGpuAnnotation: the stream
  StringId name = kNoString;
  RangeKind kind = RangeKind::kNvtx;
  uint16_t depth = 0;          // filled by load_run(); ignored on insert
  uint32_t pid = 0;            // 0 = unknown
  int64_t external_id = 0;     // the trace's `External id`; 0 = none
  StringId extra = kNoString;  // JSON object of the event's members no field holds; 0 = none
  int32_t event_index = -1;    // the trace's `Ev Idx` (Kineto's index of a CPU event); -1 = none
  friend bool operator==(const RangeRecord&, const RangeRecord&) = default;
};

enum class MemopKind : uint8_t { kMemcpy = 0, kMemset = 1 };
enum class CopyKind : uint8_t {
  kUnknown = 0,
  kHtoD = 1,
  kDtoH = 2,
  kDtoD = 3,
  kHtoH = 4,
  kPeer = 5
};

// One memcpy or memset on a GPU stream.
struct MemopRecord {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t correlation_id = 0;
  uint64_t bytes = 0;
  MemopKind kind = MemopKind::kMemcpy;
  CopyKind copy_kind = CopyKind::kUnknown;  // memcpy only
  uint32_t pid = 0;                         // process that issued it; 0 = unknown
  int64_t external_id = 0;                  // the trace's `External id`; 0 = none
  StringId extra = kNoString;  // JSON object of the event's members no field holds; 0 = none
  friend bool operator==(const MemopRecord&, const MemopRecord&) = default;
};

// One measured value for one kernel (hardware counters, derived figures).
// The kernel is named by its correlation id within the run, which survives ingest order.
struct KernelMetricRecord {
  uint32_t correlation_id = 0;
  StringId name = kNoString;  // e.g. "dram__bytes_read.sum"
  StringId unit = kNoString;  // e.g. "byte"
  double value = 0.0;
  friend bool operator==(const KernelMetricRecord&, const KernelMetricRecord&) = default;
};

// One sample of a time series (PM sampling: DRAM throughput over time, ...).
struct SampleRecord {
  int64_t t_ns = 0;
  StringId metric = kNoString;
  double value = 0.0;
  friend bool operator==(const SampleRecord&, const SampleRecord&) = default;
};

// The name of one process of a run (e.g. "python3 train.py"), by its pid.
struct ProcessRecord {
  uint32_t pid = 0;
  StringId name = kNoString;
  friend bool operator==(const ProcessRecord&, const ProcessRecord&) = default;
};

// The name of one thread of a run's process (e.g. "thread 402 (python3)"), by (pid, thread id).
struct ThreadRecord {
  uint32_t pid = 0;
  uint32_t thread_id = 0;
  StringId name = kNoString;
  friend bool operator==(const ThreadRecord&, const ThreadRecord&) = default;
};

// A text a run carries for the tools that wrote it, by key (e.g. "chrome.header": the top-level
// members of an imported trace that no column holds, as JSON).
struct RunExtraRecord {
  std::string key;
  std::string value;
  friend bool operator==(const RunExtraRecord&, const RunExtraRecord&) = default;
};

}  // namespace fusionscope::storage
