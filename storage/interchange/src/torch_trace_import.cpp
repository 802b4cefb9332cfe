#include "fusionscope/interchange/torch_trace_import.h"

#include <chrono>
#include <memory>
#include <utility>

#include "chunk_stream.h"
#include "compressed_io.h"
#include "event_scanner.h"
#include "fusionscope/interchange/interchange_error.h"
#include "imported_run_info.h"
#include "torch_trace_builder.h"
#include "trace_facts.h"
#include "trace_run_writer.h"

namespace fusionscope::interchange {
namespace {

using Clock = std::chrono::steady_clock;

// Records handed to the writing thread at a time while the trace is read.
constexpr size_t kStreamBatch = size_t{1} << 15;

// "trace.json.gz" -> "trace".
std::string stem_of(const std::filesystem::path& file) {
  std::filesystem::path p = file.filename();
  if (detail::has_gz_extension(p)) p = p.stem();
  if (p.extension() == ".json") p = p.stem();
  return p.string();
}

// The builder, reporting progress and honouring cancellation between chunks of text; with a
// writer, it hands over the records that are final as it goes.
class ReadingBuilder final : public detail::TorchTraceBuilder {
 public:
  ReadingBuilder(TorchTrace& trace, const detail::ChunkStream& stream,
                 const detail::EventScanner& scanner, const ImportOptions& options,
                 detail::TraceRunWriter* writer = nullptr)
      : TorchTraceBuilder(trace),
        trace_(trace),
        stream_(stream),
        scanner_(scanner),
        options_(options),
        writer_(writer),
        start_(Clock::now()),
        next_report_(start_) {}

  void on_chunk() override {
    if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
      throw ImportCancelled();
    }
    if (writer_ != nullptr) {
      writer_->rethrow_if_failed();
      if (time_base_known() && pending() >= kStreamBatch) writer_->push(take_final(false));
    }
    if (options_.progress && Clock::now() >= next_report_) report();
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

  // The records not handed over yet. Before the trace is linked (`all` false): ranges, and API
  // calls whose correlation id the event carried (linking fills only those it did not); after
  // it, every record left. Strings named from the last hand-over on come along.
  detail::RecordBatch take_final(bool all) {
    // In buffers the writer is done with, when it has some: the pages stay in use rather than
    // being given back and faulted in again (zeroed) batch after batch.
    detail::RecordBatch b = writer_ != nullptr ? writer_->take_spare() : detail::RecordBatch{};
    // Ranges leave the trace as they go (what linking needs of them stays in the builder).
    release_ranges(b.ranges);
    const auto& calls = trace_.api_calls;
    for (size_t i = calls_seen_; i < calls.size(); ++i) {
      if (calls[i].correlation_id != 0 || all) {
        b.api_calls.push_back(calls[i]);
      } else {
        held_calls_.push_back(i);
      }
    }
    calls_seen_ = calls.size();
    if (all) {
      for (size_t i : held_calls_) b.api_calls.push_back(calls[i]);
      held_calls_.clear();
      // The last hand-over: the records leave the trace rather than being copied (the trace is
      // linked and described already), so they are not held twice while they are written.
      b.kernels = std::exchange(trace_.kernels, {});
      b.memops = std::exchange(trace_.memops, {});
      trace_.api_calls = {};
    }
    b.first_string = static_cast<storage::StringId>(strings_sent_);
    b.strings.assign(trace_.strings.begin() + static_cast<std::ptrdiff_t>(strings_sent_),
                     trace_.strings.end());
    strings_sent_ = trace_.strings.size();
    records_sent_ += b.size();
    return b;
  }

  uint64_t records_sent() const { return records_sent_; }

 private:
  size_t pending() const { return trace_.ranges.size() + trace_.api_calls.size() - calls_seen_; }

  TorchTrace& trace_;
  const detail::ChunkStream& stream_;
  const detail::EventScanner& scanner_;
  const ImportOptions& options_;
  detail::TraceRunWriter* writer_;
  Clock::time_point start_, next_report_;
  size_t calls_seen_ = 0;
  std::vector<size_t> held_calls_;  // API calls read but not handed over (no correlation id)
  size_t strings_sent_ = 1;         // the writer knows string 0 (""), as every session does
  uint64_t records_sent_ = 0;
};

TorchTrace parse_stream(detail::ChunkStream& stream, std::string_view source,
                        const ImportOptions& options) {
  TorchTrace trace;
  trace.source_name = std::string(source);
  detail::EventScanner scanner(stream, source);
  ReadingBuilder builder(trace, stream, scanner, options);
  scanner.run(builder);
  builder.finish(source);
  builder.report();
  return trace;
}

// What a file's stem says about the trace, once it is read.
void describe_source(TorchTrace& trace, const std::filesystem::path& file) {
  trace.source_name = stem_of(file);
  // The variant and notes read the source name; give them the stem rather than the path.
  trace.variant = detail::derive_variant(trace);
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
  TorchTrace trace = parse_stream(stream, file.string(), options);
  describe_source(trace, file);
  return trace;
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
  ReadingBuilder builder(trace, stream, scanner, import, &writer);
  scanner.run(builder);
  builder.link(source);
  describe_source(trace, file);
  builder.report();
  detail::RecordBatch rest = builder.take_final(true);
  result.run_id =
      writer.finish(std::move(rest), detail::run_ending(trace, options), builder.records_sent());
  // The records are in the session; the result keeps what describes them.
  result.records = builder.records_sent();
  trace.kernels = {};
  trace.memops = {};
  trace.api_calls = {};
  trace.ranges = {};
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
