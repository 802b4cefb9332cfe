// Fuzz target for the PyTorch trace reader (libFuzzer entry point). Any input must either be
// refused with an InterchangeError or import into records that keep the reader's invariants, and
// read the same whether its text streams in one chunk or in chunks of 1 to 97 bytes; an
// imported trace must then export to Chrome JSON and CSV and read back with the same kernels.
// Anything else (a crash, another exception, a broken invariant) aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fusionscope/interchange/chrome_trace_export.h"
#include "fusionscope/interchange/csv_export.h"
#include "fusionscope/interchange/interchange_error.h"
#include "fusionscope/interchange/torch_trace_import.h"

namespace {

using fusionscope::interchange::TorchTrace;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "torch trace fuzz: invariant broken: %s\n", what);
  std::abort();
}

template <typename Records>
bool well_formed(const Records& records, size_t string_count) {
  for (const auto& r : records) {
    if (r.end_ns < r.start_ns) return false;
    if constexpr (requires { r.name; }) {
      if (r.name >= string_count) return false;
    }
  }
  return true;
}

std::vector<int64_t> durations(const TorchTrace& trace) {
  std::vector<int64_t> out;
  for (const auto& k : trace.kernels) out.push_back(k.end_ns - k.start_ns);
  return out;
}

// The reader streams its text in chunks: any chunking must read as the whole text does.
bool same_records(const TorchTrace& a, const TorchTrace& b) {
  return a.strings == b.strings && a.kernels == b.kernels && a.memops == b.memops &&
         a.api_calls == b.api_calls && a.ranges == b.ranges && a.stats.events == b.stats.events &&
         a.stats.skipped == b.stats.skipped;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // A chunk size from the input itself, 1 to 97 bytes: boundaries fall everywhere.
  fusionscope::interchange::ImportOptions chunked;
  chunked.chunk_bytes = 1 + (size == 0 ? 0 : static_cast<unsigned char>(data[size / 2]) % 97);
  TorchTrace trace, in_chunks;
  std::string whole_error, chunked_error;
  try {
    trace = fusionscope::interchange::parse_torch_trace(bytes, "fuzz input");
  } catch (const fusionscope::interchange::InterchangeError& e) {
    whole_error = e.what();
  }
  try {
    in_chunks = fusionscope::interchange::parse_torch_trace(bytes, "fuzz input", chunked);
  } catch (const fusionscope::interchange::InterchangeError& e) {
    chunked_error = e.what();
  }
  require(whole_error.empty() == chunked_error.empty(), "chunking changes whether input is read");
  if (!whole_error.empty()) return 0;  // refused with a message: fine
  require(same_records(trace, in_chunks), "chunking changes the records read");
  const size_t strings = trace.strings.size();
  require(strings >= 1 && trace.strings[0].empty(), "string table starts with \"\"");
  require(well_formed(trace.kernels, strings), "kernels end after they start");
  require(well_formed(trace.memops, strings), "memops end after they start");
  require(well_formed(trace.api_calls, strings), "API calls end after they start");
  require(well_formed(trace.ranges, strings), "ranges end after they start");
  for (const auto& k : trace.kernels) require(k.op < strings, "kernel op names a string");
  require(trace.stats.kernels == trace.kernels.size(), "kernel count");
  require(trace.stats.memsets + trace.stats.memcpys == trace.memops.size(), "memop count");
  require(trace.stats.runtime_calls + trace.stats.driver_calls == trace.api_calls.size(),
          "API call count");
  require(trace.stats.kernels_launched <= trace.kernels.size(), "launched kernels");

  const auto run = fusionscope::interchange::to_run_data(trace);
  std::ostringstream chrome, csv;
  fusionscope::interchange::write_chrome_trace(chrome, run, trace.session);
  fusionscope::interchange::write_kernel_csv(csv, run);
  // The summary writer takes its statistics as given: one row per kernel, names as they came.
  std::vector<fusionscope::interchange::KernelSummaryRow> summary;
  for (const auto& k : run.kernels) {
    // Wrapping subtraction: fuzzed times may be anything.
    const auto d =
        static_cast<int64_t>(static_cast<uint64_t>(k.end_ns) - static_cast<uint64_t>(k.start_ns));
    summary.push_back({std::string(run.str(k.name)), 1, d, d, d, static_cast<double>(d), 0.0});
  }
  fusionscope::interchange::write_kernel_summary_csv(csv, summary);

  TorchTrace again;
  try {
    again = fusionscope::interchange::parse_torch_trace(chrome.str(), "fuzz export");
  } catch (const fusionscope::interchange::InterchangeError& e) {
    std::fprintf(stderr, "torch trace fuzz: export does not read back: %s\n", e.what());
    std::abort();
  }
  require(again.stats.skipped == 0, "export reads back without skipped events");
  require(again.kernels.size() == trace.kernels.size(), "export keeps every kernel");
  require(durations(again) == durations(trace), "export keeps kernel durations");
  require(again.memops.size() == trace.memops.size(), "export keeps every memop");
  require(again.api_calls.size() == trace.api_calls.size(), "export keeps every API call");
  require(again.ranges.size() == trace.ranges.size(), "export keeps every range");
  return 0;
}
