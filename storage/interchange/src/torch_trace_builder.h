// Turns the events of a PyTorch (Kineto) Chrome trace into TorchTrace records, one event at a
// time, counting what it keeps, ignores and skips. finish() then links the records (flows,
// correlation ids, op attribution, process ids) and reads the trace's header.
//
// Each record keeps what its columns cannot hold in an interned extra object (event_extra.h);
// metadata events and the trace's top-level members are kept whole as the run's extras.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "event_extra.h"
#include "event_fields.h"
#include "event_scanner.h"
#include "event_view.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "fusionscope/storage/bounded_cache.h"
#include "range_facts.h"
#include "text_hash.h"
#include "trace_facts.h"
#include "trace_linker.h"

namespace fusionscope::interchange::detail {

// Run extras the importer writes (and the exporter reads).
inline constexpr const char* kHeaderExtra = "chrome.header";       // JSON object
inline constexpr const char* kMetadataExtra = "chrome.metadata";   // JSON array of "M" events
inline constexpr const char* kTimeBaseExtra = "chrome.time_base";  // ns added to every ts

// Metadata events and top-level members kept, at most (beyond, they are counted and dropped).
inline constexpr size_t kMaxKeptHeaderBytes = size_t{16} << 20;
inline constexpr size_t kMaxKeptMetadataBytes = size_t{16} << 20;

class TorchTraceBuilder : public ScanSink {
 public:
  // What linking must remember goes to temporary files in `spill_dir` past `spill_bytes` a list
  // (ImportOptions::spill_bytes).
  TorchTraceBuilder(TorchTrace& out, const std::filesystem::path& spill_dir, size_t spill_bytes)
      : out_(out), linker_(spill_dir, spill_bytes) {}

  void on_event(std::string_view text) override;
  void on_non_object_event() override;
  void on_oversized_event(uint64_t bytes) override;
  void on_header(std::string_view key, std::string_view json_text) override;
  void on_oversized_header(std::string_view key, uint64_t bytes) override;

  // Completes the trace once every event has been seen: link(), then arrange(). Throws
  // InterchangeError naming `source` when events were found but none could be read.
  void finish(std::string_view source, const std::function<void()>& checkpoint = {});
  // Links the records (flows, correlation ids, operators, processes) and reads the header;
  // records stay in the order they were read. What each kernel, memory operation and API call
  // read without a correlation id gains goes to `results`, in the order they were read (for
  // records handed over before, or held elsewhere); without it, to the trace's records.
  // `checkpoint`: as TraceLinker::link() calls it.
  void link(std::string_view source, LinkResults* results = nullptr,
            const std::function<void()>& checkpoint = {});
  // Sorts the records by start time.
  void arrange();

  // Problems counted while reading: skip() leaves the event out, note() keeps it.
  void skip(const std::string& reason);
  // The time of a one-point event (an instant, a flow end) on the records' clock; false after
  // skipping the event (named `what` in the reason).
  bool point_time(const EventFields& f, std::string_view what, int64_t& ts);
  void note(const std::string& reason, uint64_t count = 1);

  storage::StringId intern(std::string_view text);
  // From now on, keeps the ids of at most about `entries` texts (or `bytes` of them) interned
  // lately: a text seen again after it was forgotten gets a new id (the session, which keeps
  // each text once, gives both the same). For a streamed import, whose strings go to the session
  // as they are named (release_strings()).
  void bound_strings(size_t entries, size_t bytes);
  // Moves the strings interned since the last call (all but "" the first time) into `into` and
  // forgets their texts; returns the id of the first. Their ids stay valid in records; nothing
  // reads their texts from the trace afterwards.
  storage::StringId release_strings(std::vector<std::string>& into);
  // The names of the processes (pid, name), once linked: they are kept as texts, since the
  // trace's strings may have been released.
  const std::vector<std::pair<uint32_t, std::string>>& process_names() const {
    return process_names_;
  }

  // Hands over the ranges read so far into `into`, keeping of them only what the run's
  // description needs (RangeFacts; the linker has what linking needs): a streamed import writes
  // them as it reads. Only once the time base is known
  // (their times are final then). The ranges read next go into `into`'s buffer, emptied: a
  // buffer handed back by the writer is used again rather than allocated anew.
  void release_ranges(std::vector<storage::RangeRecord>& into);

  // Whether the header gave a usable time base (baseTimeNanoseconds) before the events: then
  // ranges, and API calls with their correlation id, are final as soon as they are read.
  bool time_base_known() const { return base_known_; }
  // The trace being built.
  const TorchTrace& trace() const { return out_; }
  // What the records read tell of the PyTorch mode (for derive_variant()).
  const ModeHints& mode_hints() const { return hints_; }

 private:
  void complete_event(const EventFields& event);
  void instant_event(const EventFields& event);
  void metadata_event(std::string_view text);
  void flow_event(const EventFields& event, bool is_start);
  // A thread id for `tid`: itself when it is a 32-bit integer, else a stand-in from 2^31 (noted
  // when `say_so`).
  std::optional<uint32_t> cpu_thread(const FieldValue& tid, bool say_so);
  // pid and tid of a CPU-side record: the columns when they are plain integers, else kept in
  // the extra object. `interpreted`: an event of a kind fusionscope reads (not kOther/instants).
  void cpu_place(uint32_t& pid, uint32_t& thread, bool& ok, bool interpreted);
  void count_input_types(const FieldValue& input_type);
  storage::StringId extra_id();
  void apply_time_base(const nlohmann::json& header);
  void date_from_time_base();
  void name_processes_and_threads();
  void keep_header_and_metadata();
  void refuse_if_nothing_read(std::string_view source) const;
  // Adds the ranges not yet in range_facts_ to it.
  void gather_range_facts();
  // Keeps the span of every time read (for a time base that comes after the events).
  void extend(int64_t start, int64_t end) {
    lo_ = any_time_ ? std::min(lo_, start) : start;
    hi_ = any_time_ ? std::max(hi_, end) : end;
    any_time_ = true;
  }
  // Kernels, memory operations and API calls: their earliest start (a date for old traces).
  void gpu_or_call_start(int64_t start) {
    earliest_ = any_record_ ? std::min(earliest_, start) : start;
    any_record_ = true;
  }

  TorchTrace& out_;
  EventReader reader_;
  EventFields fields_;
  EventView view_;
  ExtraText extra_;
  nlohmann::json header_ = nlohmann::json::object();
  std::vector<std::pair<std::string, std::string>> header_members_;  // as written
  size_t header_bytes_ = 0;
  std::vector<std::string> metadata_;  // "M" events as written
  size_t metadata_bytes_ = 0;
  bool events_begun_ = false;
  bool base_known_ = false;
  int64_t base_ns_ = 0;
  // Text -> id of the strings interned (lately, once bound_strings() is called); out_.strings
  // holds those from id first_kept_ on.
  storage::TextCache<storage::StringId, TextHash> string_ids_{SIZE_MAX, SIZE_MAX};
  storage::StringId first_kept_ = 0;
  // Whether each range of out_.ranges is named ProfilerStep#N (for range_facts_, which gathers
  // them later, when their names' texts may have been released).
  std::vector<bool> range_is_step_;
  std::vector<std::pair<uint32_t, std::string>> process_names_;
  // `Input type` JSON -> count
  std::unordered_map<std::string, uint64_t, TextHash, std::equal_to<>> input_type_texts_;
  storage::TextCache<std::string, TextHash> demangled_names_{SIZE_MAX,
                                                             SIZE_MAX};  // mangled -> plain
  std::map<std::string, uint64_t> skipped_;
  std::map<std::string, uint64_t> notes_;
  std::map<std::string, uint32_t> renumbered_threads_;
  std::set<uint32_t> taken_stand_ins_;
  TraceLinker linker_;          // what linking needs of every record, flow and operator
  RangeFacts range_facts_;      // of every range released, and at link() of every range
  size_t ranges_in_facts_ = 0;  // the first of out_.ranges already in range_facts_
  uint64_t records_kept_ = 0;
  std::vector<uint32_t> call_pids_;  // processes of the API calls, sorted, without repeats
  std::optional<uint32_t> first_kernel_device_;
  ModeHints hints_;
  bool any_time_ = false, any_record_ = false;
  int64_t lo_ = 0, hi_ = 0;  // the span of every time read
  int64_t earliest_ = 0;     // of kernels, memory operations and API calls
};

}  // namespace fusionscope::interchange::detail
