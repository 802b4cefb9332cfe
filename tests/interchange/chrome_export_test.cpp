// Chrome trace export: the structure Perfetto and chrome://tracing need, and the round trip
// fixture -> session -> Chrome JSON -> import, which must keep every kernel and its duration.
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
  EXPECT_EQ(again.memops, original.memops);
  ASSERT_EQ(again.api_calls.size(), original.api_calls.size());
  ASSERT_EQ(again.ranges.size(), original.ranges.size());
  EXPECT_EQ(again.stats.kernels_launched, again.kernels.size());
  EXPECT_EQ(again.stats.flows_linked, original.stats.flows_linked);
  EXPECT_EQ(again.session.gpu_name, original.session.gpu_name);
  EXPECT_EQ(again.session.sm_count, original.session.sm_count);
  EXPECT_EQ(again.session.driver_version, original.session.driver_version);
  EXPECT_EQ(again.profiler_steps, original.profiler_steps);
}

// Every record with its strings resolved, so that runs of two sessions compare.
struct Rows {
  std::vector<
      std::tuple<int64_t, int64_t, uint32_t, uint32_t, uint32_t, std::string, std::string, uint32_t,
                 uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>>
      kernels;
  std::vector<fusionscope::storage::MemopRecord> memops;
  std::vector<std::tuple<int64_t, int64_t, uint32_t, uint32_t, std::string, int>> api_calls;
  std::vector<std::tuple<int64_t, int64_t, uint32_t, std::string, int, uint16_t>> ranges;
  int warmup = 0, iterations = 0;
  std::string variant, dtype;
  int64_t wall_ns = 0;
  bool operator==(const Rows&) const = default;
};

Rows rows_of(const RunData& run) {
  Rows r;
  for (const auto& k : run.kernels) {
    r.kernels.emplace_back(k.start_ns, k.end_ns, k.device, k.stream, k.correlation_id,
                           run.str(k.name), run.str(k.op), k.grid.x, k.grid.y, k.grid.z, k.block.x,
                           k.block.y, k.block.z, k.registers, k.static_smem, k.dynamic_smem);
  }
  r.memops = run.memops;
  for (const auto& a : run.api_calls) {
    r.api_calls.emplace_back(a.start_ns, a.end_ns, a.thread_id, a.correlation_id, run.str(a.name),
                             static_cast<int>(a.domain));
  }
  for (const auto& g : run.ranges) {
    r.ranges.emplace_back(g.start_ns, g.end_ns, g.thread_id, run.str(g.name),
                          static_cast<int>(g.kind), g.depth);
  }
  r.warmup = run.info.warmup;
  r.iterations = run.info.iterations;
  r.variant = run.info.variant;
  r.dtype = run.info.dtype;
  r.wall_ns = run.info.wall_ns;
  return r;
}

TEST_P(ChromeRoundTrip, ImportExportImportGivesIdenticalRows) {
  // import -> session -> export -> import -> session: every record, field by field.
  auto first = SessionStore::create(t::scratch_dir() / "a.fsdb", named("a"));
  const RunData a =
      first.load_run(write_torch_trace(first, read_torch_trace(t::fixture_path(GetParam()))));
  const std::string text = chrome_text(a, first.session());
  const TorchTrace again = parse_torch_trace(text, "exported");
  EXPECT_EQ(again.stats.skipped, 0u);
  auto second = SessionStore::create(t::scratch_dir() / "b.fsdb", named("b"));
  const RunData b =
      second.load_run(write_torch_trace(second, again, {.run_name = a.info.name, .variant = ""}));
  const Rows ra = rows_of(a), rb = rows_of(b);
  EXPECT_EQ(ra.kernels, rb.kernels);
  EXPECT_EQ(ra.memops, rb.memops);
  EXPECT_EQ(ra.api_calls, rb.api_calls);
  EXPECT_EQ(ra.ranges, rb.ranges);
  EXPECT_EQ(ra, rb);
  // And a second export is the first, byte for byte (apart from the session's name).
  EXPECT_EQ(chrome_text(b, first.session()), text);
}

INSTANTIATE_TEST_SUITE_P(TorchFixtures, ChromeRoundTrip,
                         ::testing::Values(t::kLinearEager, t::kGegluEager, t::kGegluCompile));

TEST(ChromeExport, ProcessesThreadsAndFlowsAreThere) {
  const TorchTrace trace = read_torch_trace(t::fixture_path(t::kGegluEager));
  const RunData run = to_run_data(trace);
  const json doc = json::parse(chrome_text(run, trace.session));

  EXPECT_EQ(doc.at("displayTimeUnit"), "ms");
  EXPECT_EQ(doc.at("deviceProperties").at(0).at("name"), trace.session.gpu_name);
  std::map<int64_t, std::string> process_names;
  std::set<std::pair<int64_t, int64_t>> named_threads, used_threads;
  std::map<uint64_t, const json*> starts, finishes;
  std::map<uint64_t, const json*> calls_by_correlation;
  std::vector<const json*> kernels;
  for (const auto& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "process_name") {
      process_names[e.at("pid").get<int64_t>()] = e.at("args").at("name").get<std::string>();
    } else if (ph == "M" && e.at("name") == "thread_name") {
      named_threads.emplace(e.at("pid").get<int64_t>(), e.at("tid").get<int64_t>());
    } else if (ph == "X") {
      used_threads.emplace(e.at("pid").get<int64_t>(), e.at("tid").get<int64_t>());
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
  // One process for the CPU and one for GPU 0; every lane that has events has a name.
  ASSERT_EQ(process_names.size(), 2u);
  EXPECT_EQ(process_names.at(0).rfind("GPU 0", 0), 0u);
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
