#include "fusionscope/interchange/torch_trace_import.h"

#include <chrono>
#include <memory>
#include <utility>

#include "chunk_stream.h"
#include "compressed_io.h"
#include "event_scanner.h"
#include "fusionscope/interchange/interchange_error.h"
#include "imported_run_info.h"
#include "spill.h"
#include "torch_trace_builder.h"
#include "trace_facts.h"
#include "trace_run_writer.h"

namespace fusionscope::interchange {
namespace {

using Clock = std::chrono::steady_clock;

// Records handed to the writing thread at a time while the trace is read.
constexpr size_t kStreamBatch = size_t{1} << 15;
// The strings whose ids a streamed import keeps, at most (two generations of this many, or of
// this many bytes): the names a trace repeats stay; a string seen again after it was forgotten
// gets a new id, which the session maps to the text's one id.
constexpr size_t kStringsKept = size_t{1} << 16;
constexpr size_t kStringBytesKept = size_t{8} << 20;

// "trace.json.gz" -> "trace".
std::string stem_of(const std::filesystem::path& file) {
  std::filesystem::path p = file.filename();
  if (detail::has_gz_extension(p)) p = p.stem();
  if (p.extension() == ".json") p = p.stem();
  return p.string();
}

// Where what an import must remember until the trace's end goes past a few MiB: beside the
// session it writes when there is one (the room a session needs is there), else the system's
// temporary directory.
std::filesystem::path spill_dir_for(const std::filesystem::path& session) {
  std::error_code ec;
  if (!session.empty()) {
    const std::filesystem::path dir = std::filesystem::absolute(session, ec).parent_path();
    if (!ec && std::filesystem::is_directory(dir, ec)) return dir;
  }
  return std::filesystem::temp_directory_path(ec);
}

// The builder, reporting progress and honouring cancellation between chunks of text; with a
// writer, it hands over the records as it goes: operators, annotations and launch calls at once
// (when the time base is known before the events, their times are final), and the records
// linking completes (kernels, memory operations, calls without a correlation id) into spilling
// lists, from which they go to the writer once they are linked. Memory then holds batches, not
// the trace.
class ReadingBuilder final : public detail::TorchTraceBuilder, private detail::LinkResults {
 public:
  ReadingBuilder(TorchTrace& trace, const detail::ChunkStream& stream,
                 const detail::EventScanner& scanner, const ImportOptions& options,
                 const std::filesystem::path& spill_dir, detail::TraceRunWriter* writer = nullptr)
      : TorchTraceBuilder(trace, spill_dir, options.spill_bytes),
        trace_(trace),
        stream_(stream),
        scanner_(scanner),
        options_(options),
        writer_(writer),
        kernels_(spill_dir, options.spill_bytes),
        memops_(spill_dir, options.spill_bytes),
        unlinked_calls_(spill_dir, options.spill_bytes),
        start_(Clock::now()),
        next_report_(start_) {
    // Strings go to the session with the records that name them; the reader keeps the ids of
    // those named lately only.
    if (writer_ != nullptr) bound_strings(kStringsKept, kStringBytesKept);
  }

  void on_chunk() override {
    check_cancel();
    if (writer_ != nullptr) {
      writer_->rethrow_if_failed();
      if (time_base_known() && pending() >= kStreamBatch) hand_over();
    }
    report_now_and_then();
  }

  // Progress about ten times a second.
  void report_now_and_then() {
    if (options_.progress && Clock::now() >= next_report_) report();
  }

  void check_cancel() const {
    if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
      throw ImportCancelled();
    }
  }

  void report() {
    const auto now = Clock::now();
    next_report_ = now + std::chrono::milliseconds(100);
    if (!options_.progress) return;
    ImportProgress p;
    p.phase = ImportProgress::Phase::kReading;
    p.file_bytes = stream_.counters().input_bytes.load(std::memory_order_relaxed);
    p.file_size = stream_.input_size();
    p.text_bytes = scanner_.offset();
    p.events = trace_.stats.events;
    p.records = writer_ != nullptr ? writer_->written() : 0;
    p.seconds = std::chrono::duration<double>(now - start_).count();
    options_.progress(p);
  }

  // Links the trace (what the records gain goes into the session batch by batch), then hands
  // over every record left. Returns the last batch.
  detail::RecordBatch link_and_take_rest(std::string_view source) {
    // Linking a large trace takes seconds: it reports progress and stops on a cancel meanwhile.
    link(source, this, [this] {
      check_cancel();
      writer_->rethrow_if_failed();
      report_now_and_then();
    });
    batch_ = take(std::move(batch_));
    // Calls left in the trace (read before the time base was known): those with a correlation
    // id; the others came through unlinked_call().
    for (const auto& a : trace_.api_calls) {
      if (a.correlation_id != 0) batch_.api_calls.push_back(a);
    }
    trace_.api_calls = {};
    trace_.kernels = {};
    trace_.memops = {};
    return add_strings(std::move(batch_));
  }

  uint64_t records_sent() const { return records_sent_; }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  size_t pending() const {
    return trace_.ranges.size() + trace_.api_calls.size() + trace_.kernels.size() +
           trace_.memops.size();
  }

  // Ranges and calls with a correlation id into a batch for the writer; kernels, memory
  // operations and calls without one into the spilling lists, to be linked.
  void hand_over() {
    detail::RecordBatch b = take(writer_->take_spare());
    for (const auto& a : trace_.api_calls) {
      if (a.correlation_id != 0) {
        b.api_calls.push_back(a);
      } else {
        unlinked_calls_.push(a);
      }
    }
    trace_.api_calls.clear();
    for (const auto& k : trace_.kernels) kernels_.push(k);
    trace_.kernels.clear();
    for (const auto& m : trace_.memops) memops_.push(m);
    trace_.memops.clear();
    send(std::move(b));
  }

  // `b` with the ranges read so far (what linking needs of them stays in the builder).
  detail::RecordBatch take(detail::RecordBatch b) {
    release_ranges(b.ranges);
    return b;
  }

  // Strings named from the last hand-over on come along, and leave the reader.
  detail::RecordBatch add_strings(detail::RecordBatch b) {
    b.first_string = release_strings(b.strings);
    records_sent_ += b.size();
    return b;
  }

  void send(detail::RecordBatch b) { writer_->push(add_strings(std::move(b))); }

  // Linked records, in the order they were read: first those spilled, then those still in the
  // trace (all of them, when the time base came after the events).
  void kernel(const detail::KernelLink& link) override {
    storage::KernelRecord k;
    if (!kernels_.next(k)) k = trace_.kernels.at(kernels_left_++);
    k.correlation_id = link.correlation_id;
    k.pid = link.pid;
    if (k.op == storage::kNoString) k.op = link.op;  // unless the trace names it
    batch_.kernels.push_back(k);
    if (batch_.size() >= kStreamBatch) flush_linked();
  }
  void memop(const detail::MemopLink& link) override {
    storage::MemopRecord m;
    if (!memops_.next(m)) m = trace_.memops.at(memops_left_++);
    m.correlation_id = link.correlation_id;
    m.pid = link.pid;
    batch_.memops.push_back(m);
    if (batch_.size() >= kStreamBatch) flush_linked();
  }
  void unlinked_call(const detail::CallLink& link) override {
    storage::ApiCallRecord a;
    if (!unlinked_calls_.next(a)) {
      while (trace_.api_calls.at(calls_left_).correlation_id != 0) ++calls_left_;
      a = trace_.api_calls[calls_left_++];
    }
    a.correlation_id = link.correlation_id;
    batch_.api_calls.push_back(a);
    if (batch_.size() >= kStreamBatch) flush_linked();
  }
  void flush_linked() {
    detail::RecordBatch next = writer_->take_spare();
    std::swap(next, batch_);
    send(std::move(next));
  }

  TorchTrace& trace_;
  const detail::ChunkStream& stream_;
  const detail::EventScanner& scanner_;
  const ImportOptions& options_;
  detail::TraceRunWriter* writer_;
  detail::SpillList<storage::KernelRecord> kernels_;
  detail::SpillList<storage::MemopRecord> memops_;
  detail::SpillList<storage::ApiCallRecord> unlinked_calls_;
  size_t kernels_left_ = 0, memops_left_ = 0, calls_left_ = 0;  // in the trace, linked so far
  detail::RecordBatch batch_;                                   // linked, not sent yet
  Clock::time_point start_, next_report_;
  uint64_t records_sent_ = 0;
};

void describe_source(TorchTrace& trace, const std::filesystem::path& file,
                     const detail::ModeHints& hints);

// `file`: the file read, when it is one (it names the trace).
TorchTrace parse_stream(detail::ChunkStream& stream, std::string_view source,
                        const ImportOptions& options, const std::filesystem::path* file = nullptr) {
  TorchTrace trace;
  trace.source_name = std::string(source);
  detail::EventScanner scanner(stream, source);
  ReadingBuilder builder(trace, stream, scanner, options, spill_dir_for({}));
  scanner.run(builder);
  builder.finish(source, [&builder] {
    builder.check_cancel();
    builder.report_now_and_then();
  });
  builder.report();
  if (file != nullptr) describe_source(trace, *file, builder.mode_hints());
  return trace;
}

// What a file's stem says about the trace, once it is read.
void describe_source(TorchTrace& trace, const std::filesystem::path& file,
                     const detail::ModeHints& hints) {
  trace.source_name = stem_of(file);
  // The variant and notes read the source name; give them the stem rather than the path.
  trace.variant = detail::derive_variant(trace, hints);
  trace.session.notes =
      "Imported from the PyTorch profiler trace " + file.filename().string() + ".";
}

}  // namespace

TorchTrace parse_torch_trace(std::string_view bytes, std::string_view source_name,
                             const ImportOptions& options) {
  detail::ChunkStream stream(bytes, source_name, options.chunk_bytes);
  return parse_stream(stream, source_name, options);
}

TorchTrace read_torch_trace(const std::filesystem::path& file, const ImportOptions& options) {
  detail::ChunkStream stream(file, options.chunk_bytes);
  return parse_stream(stream, file.string(), options, &file);
}

ImportResult import_torch_trace(const std::filesystem::path& file, storage::SessionStore& store,
                                const WriteOptions& options, const ImportOptions& import) {
  detail::ChunkStream stream(file, import.chunk_bytes);
  ImportResult result;
  TorchTrace& trace = result.trace;
  trace.source_name = stem_of(file);
  storage::RunInfo provisional;
  provisional.name = options.run_name.empty() ? trace.source_name : options.run_name;
  provisional.kind = "imported";
  provisional.status = storage::RunStatus::kRunning;
  detail::TraceRunWriter writer(store, provisional, import);
  const std::string source = file.string();
  detail::EventScanner scanner(stream, source);
  ReadingBuilder builder(trace, stream, scanner, import, spill_dir_for(store.path()), &writer);
  scanner.run(builder);
  builder.report();
  detail::RecordBatch rest = builder.link_and_take_rest(source);
  describe_source(trace, file, builder.mode_hints());
  detail::RunEnding ending = detail::run_ending(trace, options);
  // The trace's strings went to the session as they were named: the processes' names are kept
  // as texts.
  ending.processes = builder.process_names();
  result.run_id = writer.finish(std::move(rest), std::move(ending), builder.records_sent());
  // The records are in the session; the result keeps what describes them.
  result.records = builder.records_sent();
  trace.kernels = {};
  trace.memops = {};
  trace.api_calls = {};
  trace.ranges = {};
  trace.strings = {""};
  return result;
}

storage::RunData to_run_data(const TorchTrace& trace) {
  storage::RunData run;
  run.info = detail::imported_run_info(trace, {});
  run.strings = trace.strings;
  if (run.strings.empty()) run.strings.push_back("");
  run.kernels = trace.kernels;
  run.memops = trace.memops;
  run.api_calls = trace.api_calls;
  run.ranges = trace.ranges;
  run.processes = trace.processes;
  run.threads = trace.threads;
  run.extras = trace.extras;
  storage::arrange_run(run);
  return run;
}

}  // namespace fusionscope::interchange
