// Writes a trace's records into a session as one run, on a thread of its own, while the trace
// is still being read: the reader hands over batches of records that are final (with the strings
// they name that the writer has not seen yet), and a last batch with the rest, the run's
// description and what it adds to the session's. The run appears whole or not at all: written
// through a RunWriter with Visibility::kWhenComplete, removed on any failure or a cancel.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/storage/run_writer.h"

namespace fusionscope::interchange::detail {

// Records whose string ids are the trace's own (TorchTrace::strings).
struct RecordBatch {
  // Strings the batch (or a later one) names, from trace id `first_string` on, that no earlier
  // batch carried.
  storage::StringId first_string = 0;
  std::vector<std::string> strings;
  std::vector<storage::KernelRecord> kernels;
  std::vector<storage::ApiCallRecord> api_calls;
  std::vector<storage::RangeRecord> ranges;
  std::vector<storage::MemopRecord> memops;
  size_t size() const { return kernels.size() + api_calls.size() + ranges.size() + memops.size(); }
};

// What only the end of a trace tells.
struct RunEnding {
  storage::RunInfo info;
  storage::SessionInfo session;  // the trace's machine: fills the session's where it has none
  std::vector<std::pair<uint32_t, std::string>> processes;  // pid, name
  std::vector<storage::ThreadRecord> threads;               // names: trace string ids
  std::vector<storage::RunExtraRecord> extras;
};

// The ending of a run of `trace`, written as `options` say.
RunEnding run_ending(const TorchTrace& trace, const WriteOptions& options);

class TraceRunWriter {
 public:
  // Begins the run (hidden until it commits) with a provisional description.
  TraceRunWriter(storage::SessionStore& store, const storage::RunInfo& provisional,
                 const ImportOptions& options, uint64_t records_total_hint = 0);
  // Without finish(): stops the thread, and the run is removed.
  ~TraceRunWriter();
  TraceRunWriter(const TraceRunWriter&) = delete;
  TraceRunWriter& operator=(const TraceRunWriter&) = delete;

  // Queues a batch (waiting while a few are queued already). Rethrows the writing thread's error
  // if it has failed.
  void push(RecordBatch batch);
  // True once the writing thread has failed (push() or finish() then throw its error).
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // Throws the writing thread's error, if it has failed.
  void rethrow_if_failed();

  // The last batch: writes it and the ending, commits, and returns the run's id. Reports progress
  // (phase kWriting) on the calling thread while it waits. Rethrows the writing thread's error.
  int64_t finish(RecordBatch last, RunEnding ending, uint64_t records_total);

  // Records written so far.
  uint64_t written() const { return written_.load(std::memory_order_relaxed); }

  // An empty batch, whose vectors keep the room of a batch already written when there is one
  // (for the next push: its buffers are reused rather than allocated and faulted in anew).
  RecordBatch take_spare();

 private:
  struct Item {
    RecordBatch batch;
    std::optional<RunEnding> ending;
  };
  void run();
  void write(Item& item);
  void check_cancel() const;

  storage::SessionStore& store_;
  const ImportOptions& options_;
  std::unique_ptr<storage::RunWriter> run_;
  std::vector<storage::StringId> ids_{storage::kNoString};  // trace id -> session id

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Item> queue_;
  std::vector<RecordBatch> spares_;  // written batches, emptied, their room kept
  bool closing_ = false;  // no more items; stop after the queued ones (or at once if failed)
  bool done_ = false;     // the thread has committed the run
  std::atomic<bool> failed_{false};
  std::atomic<bool> abandon_{false};
  std::exception_ptr error_;
  std::atomic<uint64_t> written_{0};
  std::thread thread_;
};

}  // namespace fusionscope::interchange::detail
