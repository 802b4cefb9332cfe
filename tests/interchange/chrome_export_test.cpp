// Chrome trace export: the structure Perfetto and chrome://tracing need, and the round trip
// fixture -> session -> Chrome JSON -> import, which must keep every kernel and its duration
// (lossless_roundtrip_test.cpp checks every field).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fixture_json.h"
#include "fusionscope/interchange/chrome_trace_export.h"
#include "fusionscope/interchange/interchange_error.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "test_paths.h"

namespace {

using fusionscope::interchange::export_chrome_trace;
using fusionscope::interchange::parse_torch_trace;
using fusionscope::interchange::read_torch_trace;
using fusionscope::interchange::to_run_data;
using fusionscope::interchange::TorchTrace;
using fusionscope::interchange::write_chrome_trace;
using fusionscope::storage::RunData;
using fusionscope::storage::SessionInfo;
using fusionscope::storage::SessionStore;
using nlohmann::json;
namespace t = fusionscope::testing;

SessionInfo named(const char* name) {
  SessionInfo info;
  info.name = name;
  return info;
}

std::string chrome_text(const RunData& run, const SessionInfo& session) {
  std::ostringstream out;
  write_chrome_trace(out, run, session);
  return out.str();
}

class ChromeRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(ChromeRoundTrip, KernelsAndDurationsSurviveImportStoreExportImport) {
  const TorchTrace original = read_torch_trace(t::fixture_path(GetParam()));
  auto store = SessionStore::create(t::scratch_dir() / "rt.fsdb", named("rt"));
  const int64_t run_id = write_torch_trace(store, original);
  const RunData run = store.load_run(run_id);

  const TorchTrace again = parse_torch_trace(chrome_text(run, store.session()), "exported");
  EXPECT_EQ(again.stats.skipped, 0u);
  for (const auto& w : again.stats.warnings) ADD_FAILURE() << w.message << " x" << w.count;

  ASSERT_EQ(again.kernels.size(), original.kernels.size());
  for (size_t i = 0; i < original.kernels.size(); ++i) {
    const auto& a = original.kernels[i];
    const auto& b = again.kernels[i];
    EXPECT_EQ(b.start_ns, a.start_ns);  // exact: baseTimeNanoseconds + ts with 3 decimals
    EXPECT_EQ(b.end_ns - b.start_ns, a.end_ns - a.start_ns);
    EXPECT_EQ(again.str(b.name), original.str(a.name));
    EXPECT_EQ(again.str(b.op), original.str(a.op));
    EXPECT_EQ(b.correlation_id, a.correlation_id);
    EXPECT_EQ(std::tie(b.device, b.stream, b.grid, b.block, b.registers),
              std::tie(a.device, a.stream, a.grid, a.block, a.registers));
    EXPECT_EQ(b.static_smem + b.dynamic_smem, a.static_smem + a.dynamic_smem);
  }
  ASSERT_EQ(again.memops.size(), original.memops.size());
  for (size_t i = 0; i < original.memops.size(); ++i) {
    auto a = original.memops[i], b = again.memops[i];
    EXPECT_EQ(again.str(b.extra), original.str(a.extra));  // string ids differ; texts do not
    a.extra = b.extra = 0;
    EXPECT_EQ(b, a);
  }
  ASSERT_EQ(again.api_calls.size(), original.api_calls.size());
  ASSERT_EQ(again.ranges.size(), original.ranges.size());
  EXPECT_EQ(again.stats.kernels_launched, again.kernels.size());
  EXPECT_EQ(again.stats.flows_linked, original.stats.flows_linked);
  EXPECT_EQ(again.session.gpu_name, original.session.gpu_name);
  EXPECT_EQ(again.session.sm_count, original.session.sm_count);
  EXPECT_EQ(again.session.driver_version, original.session.driver_version);
  EXPECT_EQ(again.profiler_steps, original.profiler_steps);
}

INSTANTIATE_TEST_SUITE_P(TorchFixtures, ChromeRoundTrip,
                         ::testing::Values(t::kLinearEager, t::kGegluEager, t::kGegluCompile));

TEST(ChromeExport, ProcessesThreadsAndFlowsAreThere) {
  const TorchTrace trace = read_torch_trace(t::fixture_path(t::kGegluEager));
  const RunData run = to_run_data(trace);
  const json doc = json::parse(chrome_text(run, trace.session));

  EXPECT_EQ(doc.at("displayTimeUnit"), "ms");
  EXPECT_EQ(doc.at("deviceProperties").at(0).at("name"), trace.session.gpu_name);
  std::map<json, std::string> process_names;
  std::set<std::pair<json, json>> named_threads, used_threads;
  std::map<uint64_t, const json*> starts, finishes;
  std::map<uint64_t, const json*> calls_by_correlation;
  std::vector<const json*> kernels;
  for (const auto& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "process_name") {
      process_names[e.at("pid")] = e.at("args").at("name").get<std::string>();
    } else if (ph == "M" && e.at("name") == "thread_name") {
      named_threads.emplace(e.at("pid"), e.at("tid"));
    } else if (ph == "X") {
      if (e.contains("cat") && e.at("cat") == "Trace") continue;  // Kineto's own span
      used_threads.emplace(e.at("pid"), e.at("tid"));
      EXPECT_GE(e.at("dur").get<double>(), 0.0);
      EXPECT_GE(e.at("ts").get<double>(), 0.0);  // relative to the run's first record
      if (e.at("cat") == "kernel") kernels.push_back(&e);
      if (e.at("cat") == "cuda_runtime" || e.at("cat") == "cuda_driver") {
        calls_by_correlation[e.at("args").at("correlation").get<uint64_t>()] = &e;
      }
    } else if (ph == "s") {
      EXPECT_TRUE(starts.emplace(e.at("id").get<uint64_t>(), &e).second) << "one flow per id";
    } else if (ph == "f") {
      EXPECT_EQ(e.at("bp"), "e");
      EXPECT_TRUE(finishes.emplace(e.at("id").get<uint64_t>(), &e).second) << "one flow per id";
    }
  }
  // The trace's own process and thread names (the CPU process and one per GPU device, as PyTorch
  // wrote them); every lane that has events has a name.
  EXPECT_EQ(process_names.size(), 17u);
  EXPECT_EQ(process_names.at(402), "python3");
  EXPECT_EQ(process_names.at(0), "python3");
  EXPECT_EQ(named_threads, used_threads);

  ASSERT_EQ(kernels.size(), 15u);
  for (const json* k : kernels) {
    const auto id = k->at("args").at("correlation").get<uint64_t>();
    ASSERT_TRUE(finishes.contains(id));
    ASSERT_TRUE(starts.contains(id));
    ASSERT_TRUE(calls_by_correlation.contains(id));
    const json& f = *finishes.at(id);
    const json& s = *starts.at(id);
    const json& call = *calls_by_correlation.at(id);
    // The flow binds to the kernel at its start and to the launch call at its start.
    EXPECT_EQ(std::tie(f.at("pid"), f.at("tid"), f.at("ts")),
              std::tie(k->at("pid"), k->at("tid"), k->at("ts")));
    EXPECT_EQ(std::tie(s.at("pid"), s.at("tid"), s.at("ts")),
              std::tie(call.at("pid"), call.at("tid"), call.at("ts")));
  }
  // Kernels and memsets each get a flow; calls without GPU work (synchronize) get none.
  EXPECT_EQ(finishes.size(), trace.kernels.size() + trace.memops.size());
}

TEST(ChromeExport, GzippedFileReadsBack) {
  const TorchTrace trace = read_torch_trace(t::fixture_path(t::kGegluCompile));
  const auto file = t::scratch_dir() / "out.json.gz";
  export_chrome_trace(file, to_run_data(trace), trace.session);
  std::ifstream in(file, std::ios::binary);
  char magic[2] = {};
  in.read(magic, 2);
  EXPECT_EQ(static_cast<unsigned char>(magic[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(magic[1]), 0x8b);
  const TorchTrace again = read_torch_trace(file);
  ASSERT_EQ(again.kernels.size(), trace.kernels.size());
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    EXPECT_EQ(again.kernels[i].start_ns, trace.kernels[i].start_ns);
    EXPECT_EQ(again.kernels[i].end_ns, trace.kernels[i].end_ns);
    EXPECT_EQ(again.str(again.kernels[i].name), trace.str(trace.kernels[i].name));
  }
}

TEST(ChromeExport, UnwritablePathIsAnInterchangeError) {
  const TorchTrace trace = read_torch_trace(t::fixture_path(t::kLinearEager));
  EXPECT_THROW(export_chrome_trace("/nonexistent-dir/x.json", to_run_data(trace), trace.session),
               fusionscope::interchange::InterchangeError);
}

TEST(ChromeExport, OddNamesAreEscaped) {
  RunData run;
  run.strings = {"", "quote\" back\\slash\nnewline \x01 ctl", "bad utf8 \xff"};
  fusionscope::storage::KernelRecord k;
  k.start_ns = 1000;
  k.end_ns = 2500;
  k.name = 1;
  k.op = 2;
  run.kernels.push_back(k);
  const std::string text = chrome_text(run, SessionInfo{});
  const TorchTrace again = parse_torch_trace(text, "odd");
  ASSERT_EQ(again.kernels.size(), 1u);
  EXPECT_EQ(again.str(again.kernels[0].name), run.strings[1]);
  EXPECT_EQ(again.kernels[0].end_ns - again.kernels[0].start_ns, 1500);
}

}  // namespace
