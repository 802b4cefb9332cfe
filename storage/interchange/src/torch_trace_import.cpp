#include "fusionscope/interchange/torch_trace_import.h"

#include <chrono>

#include "chunk_stream.h"
#include "compressed_io.h"
#include "event_scanner.h"
#include "fusionscope/interchange/interchange_error.h"
#include "imported_run_info.h"
#include "torch_trace_builder.h"
#include "trace_facts.h"

namespace fusionscope::interchange {
namespace {

using Clock = std::chrono::steady_clock;

// "trace.json.gz" -> "trace".
std::string stem_of(const std::filesystem::path& file) {
  std::filesystem::path p = file.filename();
  if (detail::has_gz_extension(p)) p = p.stem();
  if (p.extension() == ".json") p = p.stem();
  return p.string();
}

// The builder, reporting progress and honouring cancellation between chunks of text.
class ReadingBuilder final : public detail::TorchTraceBuilder {
 public:
  ReadingBuilder(TorchTrace& trace, const detail::ChunkStream& stream,
                 const detail::EventScanner& scanner, const ImportOptions& options)
      : TorchTraceBuilder(trace),
        trace_(trace),
        stream_(stream),
        scanner_(scanner),
        options_(options),
        start_(Clock::now()),
        next_report_(start_) {}

  void on_chunk() override {
    if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
      throw ImportCancelled();
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
    p.seconds = std::chrono::duration<double>(now - start_).count();
    options_.progress(p);
  }

 private:
  TorchTrace& trace_;
  const detail::ChunkStream& stream_;
  const detail::EventScanner& scanner_;
  const ImportOptions& options_;
  Clock::time_point start_, next_report_;
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

}  // namespace

TorchTrace parse_torch_trace(std::string_view bytes, std::string_view source_name,
                             const ImportOptions& options) {
  detail::ChunkStream stream(bytes, source_name, options.chunk_bytes);
  return parse_stream(stream, source_name, options);
}

TorchTrace read_torch_trace(const std::filesystem::path& file, const ImportOptions& options) {
  detail::ChunkStream stream(file, options.chunk_bytes);
  TorchTrace trace = parse_stream(stream, file.string(), options);
  trace.source_name = stem_of(file);
  // The variant and notes read the source name; give them the stem rather than the path.
  trace.variant = detail::derive_variant(trace);
  trace.session.notes =
      "Imported from the PyTorch profiler trace " + file.filename().string() + ".";
  return trace;
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
  storage::arrange_run(run);
  return run;
}

}  // namespace fusionscope::interchange
