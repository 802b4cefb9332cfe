// Bad input: whole files that are not traces fail with a message that says why; single events
// that are malformed are skipped and counted; nothing crashes.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "fixture_json.h"
#include "fusionscope/interchange/interchange_error.h"
#include "fusionscope/interchange/torch_trace_import.h"

namespace {

using fusionscope::interchange::InterchangeError;
using fusionscope::interchange::parse_torch_trace;
using fusionscope::interchange::read_torch_trace;
using fusionscope::interchange::TorchTrace;
using fusionscope::storage::RangeKind;
namespace t = fusionscope::testing;

// The message of the InterchangeError that parsing `bytes` throws ("" if none is thrown).
std::string failure_of(const std::string& bytes) {
  try {
    parse_torch_trace(bytes, "bad.json");
  } catch (const InterchangeError& e) {
    return e.what();
  }
  return "";
}

uint64_t warning_count(const TorchTrace& trace, const std::string& message) {
  for (const auto& w : trace.stats.warnings) {
    if (w.message == message) return w.count;
  }
  return 0;
}

const char* const kGoodKernel =
    R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.5, "dur": 2.25,
        "args": {"device": 0, "stream": 7, "correlation": 5, "grid": [1, 2, 3],
                 "block": [128, 1, 1]}})";

std::string trace_of(const std::string& events) {
  return R"({"traceEvents": [)" + events + "]}";
}

TEST(TorchImportErrors, WholeFilesThatAreNotTracesSayWhy) {
  EXPECT_NE(failure_of("").find("empty"), std::string::npos);
  EXPECT_NE(failure_of("  \n").find("empty"), std::string::npos);
  EXPECT_NE(failure_of("this is not json").find("not valid JSON"), std::string::npos);
  EXPECT_NE(failure_of("42").find("not a Chrome trace"), std::string::npos);
  EXPECT_NE(failure_of(R"({"schemaVersion": 1})").find("no `traceEvents` array"),
            std::string::npos);
  EXPECT_NE(failure_of(R"({"schemaVersion": 1})").find("schemaVersion"), std::string::npos);
  EXPECT_NE(failure_of(R"({"traceEvents": {"ph": "X"}})").find("not an array"), std::string::npos);
  EXPECT_NE(failure_of(R"({"traceEvents": 3})").find("not an array"), std::string::npos);
  EXPECT_NE(failure_of(R"({"traceEvents": [{"ph": "X", "ts": 1)").find("ends early"),
            std::string::npos);
  EXPECT_NE(failure_of(R"({"traceEvents": []} trailing)").find("not valid JSON"),
            std::string::npos);
  // A number past a double's range cannot be represented at all.
  EXPECT_NE(failure_of(trace_of(R"({"ph": "X", "ts": 1e400})")).find("overflow"),
            std::string::npos);
  // Invalid UTF-8 inside a string.
  EXPECT_NE(failure_of(trace_of("{\"ph\": \"X\", \"name\": \"\xff\xfe\"}")).find("not valid JSON"),
            std::string::npos);
}

TEST(TorchImportErrors, TruncatedGzipIsReportedAsTruncated) {
  const std::string whole = [] {
    std::ifstream in(t::fixture_path(t::kGegluEager), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  ASSERT_GT(whole.size(), 100u);
  const std::string message = failure_of(whole.substr(0, whole.size() / 2));
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  // Cut just before the gzip trailer (CRC and size): the data is all there but the stream is not.
  EXPECT_NE(failure_of(whole.substr(0, whole.size() - 4)).find("truncated"), std::string::npos);
}

TEST(TorchImportErrors, CorruptGzipIsAnErrorNotACrash) {
  std::ifstream in(t::fixture_path(t::kGegluEager), std::ios::binary);
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  for (size_t i = 40; i < bytes.size() - 16; i += 7) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  EXPECT_FALSE(failure_of(bytes).empty());
}

TEST(TorchImportErrors, MissingFileNamesTheFile) {
  try {
    read_torch_trace("/nonexistent/trace.json.gz");
    FAIL() << "expected an InterchangeError";
  } catch (const InterchangeError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/trace.json.gz"), std::string::npos);
  }
}

TEST(TorchImportErrors, MalformedEventsAreSkippedAndCounted) {
  const std::string bad_events[] = {
      R"({"ph": "X", "cat": "kernel", "ts": 1, "dur": 1, "args": {"stream": 7}})",  // no name
      R"({"ph": "X", "cat": "kernel", "name": "k", "ts": "1", "dur": 1, "pid": 0, "tid": 7})",
      R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -3, "pid": 0, "tid": 7})",
      R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "pid": 0, "tid": 7})",  // no dur
      R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1e300, "dur": 1, "pid": 0, "tid": 7})",
      R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 99999999999999999999, "dur": 1,
          "pid": 0, "tid": 7})",
      R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 9223372036854776, "dur": 1,
          "pid": 0, "tid": 7})",  // an integer whose nanoseconds overflow
      R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 9223372036854775.806, "dur": 0.002,
          "pid": 0, "tid": 7})",  // ts fits, ts + dur does not
      R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "pid": "gpu", "tid": "s"})",
      R"({"cat": "kernel", "name": "k", "ts": 1, "dur": 1})",  // no ph
      R"(17)",
      R"(["ph", "X"])",
      R"(null)",
      R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 1})",
      R"({"ph": "s", "cat": "ac2g", "name": "ac2g", "tid": 1, "ts": 1})",  // no id
  };
  std::string events = kGoodKernel;
  for (const auto& e : bad_events) events += ",\n" + std::string(e);
  const TorchTrace trace = parse_torch_trace(trace_of(events), "bad.json");

  ASSERT_EQ(trace.kernels.size(), 1u);
  EXPECT_EQ(trace.str(trace.kernels[0].name), "k");
  EXPECT_EQ(trace.kernels[0].start_ns, 10500);
  EXPECT_EQ(trace.kernels[0].end_ns, 12750);
  EXPECT_EQ(trace.stats.events, 1 + std::size(bad_events));
  EXPECT_EQ(trace.stats.skipped, std::size(bad_events));
  EXPECT_EQ(warning_count(trace, "skipped kernel: no `name` string"), 1u);
  EXPECT_EQ(warning_count(trace, "skipped kernel: `ts` is not a number"), 1u);
  EXPECT_EQ(warning_count(trace, "skipped kernel: `dur` is negative"), 1u);
  EXPECT_EQ(warning_count(trace, "skipped kernel: no `dur`"), 1u);
  EXPECT_EQ(warning_count(trace, "skipped kernel: `ts` out of range"), 3u);
  EXPECT_EQ(warning_count(trace, "skipped kernel: `ts` + `dur` out of range"), 1u);
  EXPECT_EQ(warning_count(trace,
                          "skipped kernel: no device and stream (neither in `args` nor "
                          "`pid`/`tid`)"),
            1u);
  EXPECT_EQ(warning_count(trace, "skipped event: no `ph` (phase) string"), 1u);
  EXPECT_EQ(warning_count(trace, "skipped entry of traceEvents: not a JSON object"), 3u);
  EXPECT_EQ(warning_count(trace, "skipped runtime call: no `tid`"), 1u);
  EXPECT_EQ(warning_count(trace, "skipped ac2g flow: no usable `id`"), 1u);
}

TEST(TorchImportErrors, IllTypedOptionalArgsFallBackToDefaults) {
  const TorchTrace trace = parse_torch_trace(
      trace_of(R"({"ph": "X", "cat": "kernel", "name": "a", "pid": 1, "tid": 9, "ts": 1, "dur": 1,
                   "args": "not an object"},
                  {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 2, "dur": 1,
                   "args": {"grid": [1, -2, 3], "block": "big", "correlation": -4,
                            "registers per thread": 1.5, "shared memory": 1e30}})"),
      "odd.json");
  ASSERT_EQ(trace.kernels.size(), 2u);
  const auto& a = trace.kernels[0];
  EXPECT_EQ(a.device, 1u);  // from pid/tid when args has none
  EXPECT_EQ(a.stream, 9u);
  const auto& b = trace.kernels[1];
  EXPECT_EQ(b.grid, (fusionscope::storage::Dim3{1, 1, 1}));
  EXPECT_EQ(b.block, (fusionscope::storage::Dim3{1, 1, 1}));
  EXPECT_EQ(b.correlation_id, 0u);
  EXPECT_EQ(b.registers, 0u);
  EXPECT_EQ(b.dynamic_smem, 0u);
  EXPECT_EQ(trace.stats.skipped, 0u);
  EXPECT_EQ(warning_count(trace, "kernel events whose `args` is not an object (read as empty)"),
            1u);
  EXPECT_EQ(warning_count(trace,
                          "kernels whose `args.grid` is not three non-negative integers (read as "
                          "1,1,1)"),
            1u);
  EXPECT_EQ(
      warning_count(trace, "kernel events with an unusable `args.correlation` (not a 32-bit id)"),
      1u);
}

TEST(TorchImportErrors, DeeplyNestedArgsAreCutNotRecursedInto) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += R"({"a": [)";
  for (int i = 0; i < 100000; ++i) deep += "]}";
  const std::string event = R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
                                "ts": 1, "dur": 1, "args": {"nested": )" +
                            deep + R"(, "stream": 3}})";
  const TorchTrace trace = parse_torch_trace(trace_of(event), "deep.json");
  ASSERT_EQ(trace.kernels.size(), 1u);
  EXPECT_EQ(trace.kernels[0].stream, 3u);  // members after the deep one are still read
}

TEST(TorchImportErrors, BareEventArrayIsATrace) {
  const TorchTrace trace = parse_torch_trace("[" + std::string(kGoodKernel) + "]", "array.json");
  EXPECT_EQ(trace.kernels.size(), 1u);
}

TEST(TorchImportErrors, OtherCategoriesInstantsAndMetadataAreKeptOtherPhasesIgnored) {
  const TorchTrace trace = parse_torch_trace(
      trace_of(R"({"ph": "X", "cat": "python_function", "name": "f", "ts": 1, "dur": 1},
                  {"ph": "i", "name": "instant", "ts": 1},
                  {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}},
                  {"ph": "s", "cat": "fwdbwd", "id": 1, "ts": 1},
                  {"ph": "C", "name": "counter", "ts": 1, "args": {"v": 1}})"),
      "other.json");
  EXPECT_EQ(trace.stats.other_events, 1u);
  EXPECT_EQ(trace.stats.instants, 1u);
  EXPECT_EQ(trace.stats.metadata_events, 1u);
  EXPECT_EQ(trace.stats.ignored, 2u);  // the fwdbwd flow and the counter
  EXPECT_EQ(trace.stats.skipped, 0u);
  ASSERT_EQ(trace.ranges.size(), 2u);
  EXPECT_EQ(trace.ranges[0].kind, RangeKind::kOther);
  EXPECT_EQ(trace.str(trace.ranges[0].extra), R"({"cat": "python_function"})");
  EXPECT_EQ(trace.ranges[1].kind, RangeKind::kInstant);
  EXPECT_EQ(trace.ranges[1].start_ns, trace.ranges[1].end_ns);
}

TEST(TorchImportErrors, StringThreadIdsAreRenumbered) {
  const TorchTrace trace = parse_torch_trace(
      trace_of(R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": "main thread", "ts": 1, "dur": 1, "args": {"correlation": 9}},
                  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1,
                   "tid": "main thread", "ts": 0, "dur": 3},
                  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 1,
                   "args": {"correlation": 9}})"),
      "tids.json");
  ASSERT_EQ(trace.api_calls.size(), 1u);
  ASSERT_EQ(trace.ranges.size(), 1u);
  EXPECT_GE(trace.api_calls[0].thread_id, 0x80000000u);
  EXPECT_EQ(trace.api_calls[0].thread_id, trace.ranges[0].thread_id);
  ASSERT_EQ(trace.kernels.size(), 1u);
  EXPECT_EQ(trace.str(trace.kernels[0].op), "aten::mm");
}

TEST(TorchImportErrors, FlowsFillAndCheckCorrelationIds) {
  const TorchTrace trace = parse_torch_trace(
      trace_of(R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": 1, "dur": 1, "args": {"correlation": 40}},
                  {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 40, "pid": 1, "tid": 1,
                   "ts": 1},
                  {"ph": "X", "cat": "kernel", "name": "no_corr", "pid": 0, "tid": 7, "ts": 5,
                   "dur": 1, "args": {"device": 0, "stream": 7}},
                  {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": "40", "pid": 0, "tid": 7,
                   "ts": 5, "bp": "e"},
                  {"ph": "X", "cat": "kernel", "name": "wrong_corr", "pid": 0, "tid": 7,
                   "ts": 8, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 77}},
                  {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 78, "pid": 0, "tid": 7,
                   "ts": 8, "bp": "e"})"),
      "flows.json");
  ASSERT_EQ(trace.kernels.size(), 2u);
  EXPECT_EQ(trace.kernels[0].correlation_id, 40u);  // taken from its flow
  EXPECT_EQ(trace.kernels[1].correlation_id, 77u);  // args win; the disagreement is counted
  EXPECT_EQ(trace.stats.flows_linked, 1u);
  EXPECT_EQ(trace.stats.kernels_launched, 1u);
  EXPECT_EQ(warning_count(trace, "records without `args.correlation` that took their flow's id"),
            1u);
  EXPECT_EQ(warning_count(trace,
                          "records whose `args.correlation` differs from the id of the flow at "
                          "them (kept)"),
            1u);
  EXPECT_EQ(warning_count(trace, "ac2g flow finishes without a start"), 1u);
  EXPECT_EQ(warning_count(trace, "kernels without a launching API call in the trace"), 1u);
}

TEST(TorchImportErrors, UnusableBaseTimeAfterTheEventsKeepsTimesRelative) {
  const TorchTrace trace =
      parse_torch_trace(R"({"traceEvents": [)" + std::string(kGoodKernel) +
                            R"(], "baseTimeNanoseconds": 9223372036854775000})",
                        "base.json");
  ASSERT_EQ(trace.kernels.size(), 1u);
  EXPECT_EQ(trace.kernels[0].start_ns, 10500);
  EXPECT_EQ(warning_count(trace,
                          "baseTimeNanoseconds would overflow the event times: times kept "
                          "relative to the trace"),
            1u);
}

TEST(TorchImportErrors, ABaseTimeBeforeTheEventsSkipsTheEventsItWouldOverflow) {
  // Read before the events, the base applies to each as it is read: one that would overflow is
  // left out, the others keep their place on the trace's clock.
  const TorchTrace trace = parse_torch_trace(
      R"({"baseTimeNanoseconds": 9223372036854775000, "traceEvents": [)" +
          std::string(kGoodKernel) +
          R"(, {"ph": "X", "cat": "cuda_runtime", "name": "early", "pid": 1, "tid": 1,
                "ts": 0.5, "dur": 0.1}]})",
      "base.json");
  EXPECT_TRUE(trace.kernels.empty());
  ASSERT_EQ(trace.api_calls.size(), 1u);
  EXPECT_EQ(trace.api_calls[0].start_ns, 9223372036854775500);
  EXPECT_EQ(warning_count(trace, "skipped kernel: `ts` + baseTimeNanoseconds out of range"), 1u);
}

TEST(TorchImportErrors, HeaderOfTheWrongShapeIsTolerated) {
  const TorchTrace trace = parse_torch_trace(
      R"({"deviceProperties": {"name": 3}, "cuda_driver_version": "twelve", "cupti_version": [],
          "traceEvents": [)" +
          std::string(kGoodKernel) + "]}",
      "header.json");
  EXPECT_EQ(trace.kernels.size(), 1u);
  EXPECT_TRUE(trace.session.gpu_name.empty());
  EXPECT_EQ(trace.session.driver_version, "twelve");
}

}  // namespace
