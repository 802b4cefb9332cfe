#include "fusionscope/interchange/torch_trace_import.h"

#include <nlohmann/json.hpp>

#include "compressed_io.h"
#include "fusionscope/interchange/interchange_error.h"
#include "imported_run_info.h"
#include "torch_trace_builder.h"
#include "trace_facts.h"
#include "trace_json_reader.h"

namespace fusionscope::interchange {
namespace {

// Traces are read whole; past this size a decompressed trace is refused, not held in memory.
constexpr uint64_t kMaxTraceBytes = uint64_t{4} << 30;

// "trace.json.gz" -> "trace".
std::string stem_of(const std::filesystem::path& file) {
  std::filesystem::path p = file.filename();
  if (detail::has_gz_extension(p)) p = p.stem();
  if (p.extension() == ".json") p = p.stem();
  return p.string();
}

}  // namespace

TorchTrace parse_torch_trace(std::string_view bytes, std::string_view source_name) {
  TorchTrace trace;
  trace.source_name = std::string(source_name);
  std::string inflated;
  if (detail::looks_compressed(bytes)) {
    inflated = detail::inflate_all(bytes, source_name, kMaxTraceBytes);
    bytes = inflated;
  }
  nlohmann::json header = nlohmann::json::object();
  detail::TorchTraceBuilder builder(trace);
  detail::read_trace_json(bytes, source_name, builder, header);
  builder.finish(header);
  return trace;
}

TorchTrace read_torch_trace(const std::filesystem::path& file) {
  const std::string bytes = detail::read_file(file);
  TorchTrace trace = parse_torch_trace(bytes, file.string());
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
