// RunWriter: the one way a run and its records get into a session, so that a run appears whole or
// not at all, whoever writes it (the profiler's capture, an import, the lab).
//
//   storage::RunWriter run(store, info);   // the run exists now, in state kWriting
//   run.add_kernels(batch);                // each batch is one short transaction
//   ...
//   run.commit();                          // kComplete, with the digest of every record
//
// Batches are short transactions, so the session stays readable meanwhile (the app and `report`
// show the run as being written) and other writers, in this process or others, interleave theirs.
// Until commit() the run is kWriting; readers never take it for complete. If the writer stops
// without committing:
// - by an exception or an early return: the destructor removes the run and its records;
// - by a kill, a crash or a disk that cannot take even the removal: the run stays kWriting in the
//   file, and as soon as the writing process is gone (its lock on the file is released by the
//   operating system) every reader sees kInterrupted, and the next read-write open writes that.
// commit() writes a digest of every record and of the run's description (runs.records_digest,
// runs.info_digest), which load_run() checks: later damage to the file is detected, not believed.
//
// A writer whose partial run is worth nothing (an import: the trace is still there to import
// again) asks for Visibility::kWhenComplete: readers do not list the run until it is committed,
// and a run left behind by a writer that was killed is never listed; the next read-write open
// removes it. A capture or a lab run keeps the default, so that what was recorded before a crash
// stays readable, marked interrupted.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "fusionscope/storage/records.h"
#include "fusionscope/storage/session_store.h"

namespace fusionscope::storage {

class RunWriter {
 public:
  enum class Visibility {
    kWhileWriting,  // listed as kWriting while written, kInterrupted if its writer dies
    kWhenComplete,  // listed only once committed; never if its writer dies
  };

  // Adds the run in state kWriting (its id is new, never one of an existing or deleted run) and
  // holds the file's writer lock for it. `info.id`, `state` and `integrity` are ignored.
  RunWriter(SessionStore& store, const RunInfo& info,
            Visibility visibility = Visibility::kWhileWriting);
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;
  // Without commit(): discard().
  ~RunWriter();

  int64_t id() const { return id_; }
  SessionStore& store() { return store_; }
  const RunInfo& info() const { return info_; }
  bool committed() const { return done_ && committed_; }

  // Changes the run's description while it is written (status, error, wall time, ...).
  void set_info(const RunInfo& info);

  StringId intern(std::string_view text) { return store_.intern(text); }

  // Each call is one transaction. String ids must come from this session's store.
  void add_kernels(std::span<const KernelRecord> records);
  void add_api_calls(std::span<const ApiCallRecord> records);
  void add_ranges(std::span<const RangeRecord> records);
  void add_memops(std::span<const MemopRecord> records);
  void add_kernel_metrics(std::span<const KernelMetricRecord> records);
  void add_samples(std::span<const SampleRecord> records);
  // Names process `pid` in this run (a later name for the same pid replaces the earlier one).
  void add_process(uint32_t pid, std::string_view name);
  // Names threads of the run's processes, in one transaction (a later name for the same pid and
  // thread replaces the earlier one).
  void add_threads(std::span<const ThreadRecord> threads);
  // Keeps `value` with the run under `key` (a later value for the key replaces the earlier one).
  void set_extra(std::string_view key, std::string_view value);

  // One transaction: the final description (set_info's), the records' digest, state kComplete.
  // After it the writer is done: further calls throw.
  void commit();
  // Removes the run and every record of it. Errors are swallowed by the destructor only.
  void discard();

  // For tests and tools: how many records of each kind this writer has added.
  struct Counts {
    uint64_t kernels = 0, memops = 0, api_calls = 0, ranges = 0, kernel_metrics = 0, samples = 0;
  };
  const Counts& counts() const { return counts_; }

 private:
  template <typename R>
  void add(std::span<const R> records, uint64_t& count);
  void require_open(std::string_view what) const;
  void release_lock();
  // `info` with the state the file holds while the run is written (for its digest).
  RunInfo as_stored(const RunInfo& info) const;

  SessionStore& store_;
  RunInfo info_;
  int64_t id_ = 0;
  int writing_state_ = 0;  // runs.state while written: kWriting, or staged (kWhenComplete)
  int lock_fd_ = -1;
  bool done_ = false;
  bool committed_ = false;
  Counts counts_;
  uint64_t records_hash_ = 0;                  // sum of the added records' hashes
  std::map<uint32_t, std::string> processes_;  // pid -> name
  std::map<std::pair<uint32_t, uint32_t>, std::string> threads_;  // (pid, thread) -> name
  std::map<std::string, std::string, std::less<>> extras_;        // key -> value
};

}  // namespace fusionscope::storage
