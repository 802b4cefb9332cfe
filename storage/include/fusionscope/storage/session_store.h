// The session store: one SQLite file per session (documented in docs/session-format.md).
// Writers (profiler, importers, the lab) ingest batches of records; readers (analysis, views,
// exporters) load a run into compact arrays sorted by start time per lane.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fusionscope/storage/records.h"

namespace fusionscope::storage {

// Every failure of the store (bad file, newer schema, I/O error) is a StoreError with a message
// meant for a person: what went wrong and with which file.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run whose stored records or description differ from the digest written with them: the file
// was changed after the run was written (a damaged disk, a byte changed by hand, a broken copy).
class DamagedRunError : public StoreError {
 public:
  using StoreError::StoreError;
};

// The session: the machine and GPU it was captured on. Zero/empty means unknown.
struct SessionInfo {
  std::string name;
  std::string created_utc;  // ISO 8601; filled on create() when empty
  std::string host;
  std::string gpu_name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  double mem_bandwidth_gbs = 0.0;         // theoretical peak DRAM bandwidth, GB/s
  double peak_fp32_tflops = 0.0;          // theoretical FP32 (FFMA) peak
  double peak_tensor_tflops = 0.0;        // theoretical dense fp16/bf16 tensor-core peak
  double calibrated_bandwidth_gbs = 0.0;  // measured by `calibrate`
  double calibrated_tensor_tflops = 0.0;  // measured by `calibrate`
  std::string driver_version;
  std::string cuda_version;
  std::string cupti_version;
  std::string notes;
};

// How the run itself went (the workload's outcome), as its writer reports it.
enum class RunStatus : uint8_t { kPending = 0, kRunning = 1, kOk = 2, kFailed = 3, kCancelled = 4 };
std::string_view to_string(RunStatus s);

// Whether every record of the run is in the file (schema version 3 and later). A run is written
// through a RunWriter: it is kWriting from begin to commit, and only kComplete once every record
// is written. A writer that stops without committing (killed, crashed, out of disk) leaves
// kWriting behind; as soon as its process is gone every reader sees the run as kInterrupted,
// and the next read-write open records that in the file.
enum class RunState : uint8_t { kWriting = 0, kComplete = 1, kInterrupted = 2 };
std::string_view to_string(RunState s);

// What is known of a run's integrity: its description is checked by runs() and run(), its
// records when load_run() reads them, each against the digest written with them.
enum class Integrity : uint8_t {
  kUnchecked = 0,    // the records were not read (runs(), run())
  kVerified = 1,     // description and records match their digests
  kUnprotected = 2,  // no digest to check against: a run still being written, an interrupted one,
                     // or one written by another tool
  kDamaged = 3,      // something differs from its digest; `damage` says what
};

// One execution of a configuration in one variant.
struct RunInfo {
  int64_t id = 0;           // assigned by RunWriter
  std::string name;         // e.g. "geglu-post / eager"
  std::string config_json;  // the full configuration, as the kernels library serializes it
  std::string kind;         // "linear", "mlp", "gated", or "imported"
  std::string variant;      // "eager", "epilogue", ... or the source of an import
  std::string dtype;        // "fp32", "fp16", "bf16"
  int warmup = 0;
  int iterations = 0;
  bool cuda_graph = false;
  int64_t wall_ns = 0;  // host wall time of the timed iterations
  RunStatus status = RunStatus::kPending;
  std::string error;             // why the run failed, if it did
  std::string trace_status;      // empty = traced; otherwise why there is no (or a partial) trace
  uint64_t dropped_records = 0;  // records the tracer reported lost
  std::string created_utc;
  // Kept by the store: update_run() and RunWriter::set_info() ignore them.
  RunState state = RunState::kComplete;
  Integrity integrity = Integrity::kUnchecked;
  std::string damage;  // what is damaged, for a person; empty unless kDamaged
};

// A GPU lane: one (process, device, stream). Items are index ranges into RunData's sorted arrays.
struct GpuLane {
  uint32_t pid = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t kernel_begin = 0, kernel_end = 0;  // into RunData::kernels
  uint32_t memop_begin = 0, memop_end = 0;    // into RunData::memops
};

// A CPU lane: one (process, thread). API calls do not nest; ranges nest and carry their depth.
struct CpuLane {
  uint32_t pid = 0;
  uint32_t thread_id = 0;
  uint32_t api_begin = 0, api_end = 0;      // into RunData::api_calls
  uint32_t range_begin = 0, range_end = 0;  // into RunData::ranges
  uint16_t max_depth = 0;
};

// A run loaded for analysis and drawing.
// kernels and memops are sorted by (pid, device, stream, start); api_calls and ranges by (pid,
// thread, start) (ranges with equal starts: longer first). gpu_lanes are ordered by (pid, device,
// stream), cpu_lanes by (pid, thread); every record belongs to exactly one lane.
struct RunData {
  RunInfo info;
  std::vector<std::string> strings;  // the session's string table; strings[0] == ""
  std::vector<KernelRecord> kernels;
  std::vector<MemopRecord> memops;
  std::vector<ApiCallRecord> api_calls;
  std::vector<RangeRecord> ranges;
  std::vector<KernelMetricRecord> kernel_metrics;  // sorted by correlation id, then insertion
  std::vector<SampleRecord> samples;               // sorted by (metric, t)
  std::vector<ProcessRecord> processes;            // sorted by pid; names of the run's processes
  std::vector<ThreadRecord> threads;               // sorted by (pid, thread); names of its threads
  std::vector<RunExtraRecord> extras;              // sorted by key; texts tools keep with the run
  std::vector<GpuLane> gpu_lanes;
  std::vector<CpuLane> cpu_lanes;
  int64_t begin_ns = 0, end_ns = 0;  // extent of every record in the run

  const std::string& str(StringId id) const {
    static const std::string empty;
    return id < strings.size() ? strings[id] : empty;
  }
  // The name of process `pid`, or "" when the run does not name it.
  const std::string& process_name(uint32_t pid) const;
  // The name of thread `thread_id` of process `pid`, or "" when the run does not name it.
  const std::string& thread_name(uint32_t pid, uint32_t thread_id) const;
  // The text kept under `key`, or nullptr.
  const std::string* extra(std::string_view key) const;
};

// Sorts a run's arrays as documented above, builds its lanes, range depths and extent.
// load_run() does this; importers that assemble a RunData in memory call it themselves.
// Range depth: within one lane, the number of earlier ranges still open at a range's start
// (GPU annotations nest among themselves only); CpuLane::max_depth is the deepest such depth.
void arrange_run(RunData& run);

enum class OpenMode { kReadOnly, kReadWrite };

// What load_run() does with a run whose records or description differ from their digest.
enum class DamagePolicy {
  kRefuse,  // throw DamagedRunError: nothing damaged is taken for the truth
  kMark,    // return it with info.integrity == kDamaged and info.damage saying what
};

class RunWriter;

// Any number of SessionStores, in any number of processes, may read and write one file at once:
// SQLite serializes the transactions, and each RunWriter adds its own run. A store object is not
// thread-safe: use it from one thread at a time.
//
// Before a read-write store writes anything it checks the file (SQLite's quick_check): a damaged
// file is refused with the reason, and nothing is written into it.
class SessionStore {
 public:
  // Creates a new session file; fails if the path exists.
  static SessionStore create(const std::filesystem::path& path, const SessionInfo& info);
  // Opens an existing session. Read-only never writes to the file (nor its WAL); a file from an
  // older schema opens read-only as is and is migrated forward only when opened read-write.
  static SessionStore open(const std::filesystem::path& path, OpenMode mode = OpenMode::kReadOnly);

  SessionStore(SessionStore&&) noexcept;
  SessionStore& operator=(SessionStore&&) noexcept;
  ~SessionStore();

  const std::filesystem::path& path() const;
  bool read_only() const;
  // PRAGMA user_version of the file: read-write stores are always at the current version (older
  // files are migrated on open); read-only stores report the file's own, possibly older, version
  // (they read an in-memory migrated copy).
  int schema_version() const;
  static int current_schema_version();

  SessionInfo session() const;
  void update_session(const SessionInfo& info);

  // Runs. New runs and their records are written through a RunWriter (run_writer.h).
  // update_run() changes a run's description (name, status, error, ...), not its state.
  void update_run(const RunInfo& run);  // by run.id
  void rename_run(int64_t run_id, std::string_view name);
  void delete_run(int64_t run_id);  // and every record of it
  // Ordered by id, each with its description checked (integrity kUnchecked, or kDamaged).
  std::vector<RunInfo> runs() const;
  std::optional<RunInfo> run(int64_t run_id) const;

  // Strings: intern returns the same id for the same text within a session; a new string is in
  // the file when intern returns, so writers in other processes never take its id. On a
  // read-only store it returns ids of existing strings and throws for new text.
  StringId intern(std::string_view text);
  // Many strings in one transaction; ids in the order given.
  std::vector<StringId> intern_all(std::span<const std::string> texts);
  // The id of `text` if the session has it; never adds.
  std::optional<StringId> find_string(std::string_view text) const;

  // Free-form session properties (key/value text; schema version 2 and later).
  std::vector<std::pair<std::string, std::string>> properties() const;  // ordered by key
  std::optional<std::string> property(std::string_view key) const;
  void set_property(std::string_view key, std::string_view value);
  void erase_property(std::string_view key);

  // Read. A complete run's records are checked against their digest: a damaged run throws
  // DamagedRunError, or is returned marked with DamagePolicy::kMark.
  RunData load_run(int64_t run_id, DamagePolicy damaged = DamagePolicy::kRefuse) const;
  std::vector<std::string> strings() const;

  // Damage. quick_check() runs SQLite's quick_check over the whole file (structure, not
  // contents; the contents are what the digests protect) and returns its findings in words,
  // empty when the file is sound. session_damage() says whether the session's description and
  // properties match their digest ("" when they do).
  std::vector<std::string> quick_check() const;
  std::string session_damage() const;

  // Copies what the write-ahead log holds into the file (a passive checkpoint: it never waits
  // for readers). Writers call it at quiet moments; closing the last connection does it too.
  void checkpoint();
  // Closes the store now, reporting what a destructor would swallow: a read-write store
  // checkpoints its log into the file first, so that a failure there (a full disk) is an error
  // rather than a log silently left beside the file. The store is unusable afterwards.
  void close();

  // Copies the whole session to another path (Save As); the copy is consistent, compacted, in the
  // current schema, and replaces `path` atomically if it exists.
  void save_as(const std::filesystem::path& path) const;

 private:
  friend class RunWriter;
  struct Impl;
  explicit SessionStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusionscope::storage
