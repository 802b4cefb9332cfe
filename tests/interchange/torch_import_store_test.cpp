// Writing imported traces into a session file and reading them back through the store.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>

#include "fixture_json.h"
#include "fusionscope/interchange/torch_trace_import.h"
#include "test_paths.h"

namespace {

using fusionscope::interchange::read_torch_trace;
using fusionscope::interchange::TorchTrace;
using fusionscope::interchange::write_torch_trace;
using fusionscope::storage::OpenMode;
using fusionscope::storage::RunData;
using fusionscope::storage::SessionInfo;
using fusionscope::storage::SessionStore;
namespace t = fusionscope::testing;

SessionInfo named(const char* name) {
  SessionInfo info;
  info.name = name;
  return info;
}

std::map<std::string, int64_t> total_by_name(const RunData& run) {
  std::map<std::string, int64_t> out;
  for (const auto& k : run.kernels) out[run.str(k.name)] += k.end_ns - k.start_ns;
  return out;
}

std::map<std::string, int64_t> total_by_name(const TorchTrace& trace) {
  std::map<std::string, int64_t> out;
  for (const auto& k : trace.kernels) out[trace.str(k.name)] += k.end_ns - k.start_ns;
  return out;
}

TEST(TorchImportStore, ImportedRunReadsBackWithTheSameRecords) {
  const auto path = t::scratch_dir() / "imported.fsdb";
  const TorchTrace trace = read_torch_trace(t::fixture_path(t::kGegluEager));
  auto store = SessionStore::create(path, named("imports"));
  const int64_t run_id = write_torch_trace(store, trace);

  const auto info = store.run(run_id);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->name, t::kGegluEager);
  EXPECT_EQ(info->kind, "imported");
  EXPECT_EQ(info->variant, "torch-eager");
  EXPECT_EQ(info->dtype, "bf16");
  EXPECT_EQ(info->iterations, 3);
  EXPECT_EQ(info->wall_ns, trace.steps_wall_ns);
  EXPECT_TRUE(info->trace_status.empty());
  EXPECT_NE(info->config_json.find("pytorch-profiler"), std::string::npos);

  const RunData run = store.load_run(run_id);
  EXPECT_EQ(run.kernels.size(), trace.kernels.size());
  EXPECT_EQ(run.api_calls.size(), trace.api_calls.size());
  EXPECT_EQ(run.ranges.size(), trace.ranges.size());
  EXPECT_EQ(run.memops, trace.memops);  // no strings in memops: identical records
  EXPECT_EQ(total_by_name(run), total_by_name(trace));
  std::map<std::string, int> ops;
  for (const auto& k : run.kernels) ++ops[run.str(k.op)];
  EXPECT_EQ(ops,
            (std::map<std::string, int>{{"aten::mm", 9}, {"aten::gelu", 3}, {"aten::mul", 3}}));

  // The session had no GPU description; the trace supplied it.
  const SessionInfo session = store.session();
  EXPECT_EQ(session.name, "imports");
  EXPECT_EQ(session.gpu_name, trace.session.gpu_name);
  EXPECT_EQ(session.sm_count, 132);
  EXPECT_EQ(session.cc_major, 9);
  EXPECT_EQ(session.cuda_version, "13.0");
}

TEST(TorchImportStore, SecondImportAppendsARunAndKeepsTheSession) {
  const auto path = t::scratch_dir() / "two.fsdb";
  SessionInfo given = named("two");
  given.gpu_name = "Some Other GPU";
  {
    auto store = SessionStore::create(path, given);
    write_torch_trace(store, read_torch_trace(t::fixture_path(t::kGegluEager)));
  }
  auto store = SessionStore::open(path, OpenMode::kReadWrite);
  const int64_t second =
      write_torch_trace(store, read_torch_trace(t::fixture_path(t::kGegluCompile)),
                        {.run_name = "compiled", .variant = "inductor"});
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].id, second);
  EXPECT_EQ(runs[1].name, "compiled");
  EXPECT_EQ(runs[1].variant, "inductor");
  EXPECT_EQ(store.session().gpu_name, "Some Other GPU");  // never overwritten
  EXPECT_EQ(store.load_run(second).kernels.size(), 12u);
  EXPECT_EQ(store.load_run(runs[0].id).kernels.size(), 15u);
}

TEST(TorchImportStore, ToRunDataMatchesWhatTheStoreLoads) {
  const auto path = t::scratch_dir() / "same.fsdb";
  const TorchTrace trace = read_torch_trace(t::fixture_path(t::kGegluCompile));
  auto store = SessionStore::create(path, named("same"));
  const RunData stored = store.load_run(write_torch_trace(store, trace));
  const RunData memory = fusionscope::interchange::to_run_data(trace);
  ASSERT_EQ(memory.kernels.size(), stored.kernels.size());
  for (size_t i = 0; i < memory.kernels.size(); ++i) {
    EXPECT_EQ(memory.kernels[i].start_ns, stored.kernels[i].start_ns);
    EXPECT_EQ(memory.str(memory.kernels[i].name), stored.str(stored.kernels[i].name));
    EXPECT_EQ(memory.str(memory.kernels[i].op), stored.str(stored.kernels[i].op));
  }
  ASSERT_EQ(memory.ranges.size(), stored.ranges.size());
  for (size_t i = 0; i < memory.ranges.size(); ++i) {
    EXPECT_EQ(memory.ranges[i].depth, stored.ranges[i].depth);
  }
  EXPECT_EQ(memory.begin_ns, stored.begin_ns);
  EXPECT_EQ(memory.end_ns, stored.end_ns);
  EXPECT_EQ(memory.gpu_lanes.size(), stored.gpu_lanes.size());
  EXPECT_EQ(memory.cpu_lanes.size(), stored.cpu_lanes.size());
}

TEST(TorchImportStore, CancelledWhileWritingLeavesNoRun) {
  const auto path = t::scratch_dir() / "cancel.fsdb";
  const TorchTrace trace = read_torch_trace(t::fixture_path(t::kGegluEager));
  auto store = SessionStore::create(path, named("cancel"));
  write_torch_trace(store, trace);
  std::atomic<bool> cancel{false};
  fusionscope::interchange::ImportOptions options;
  options.cancel = &cancel;
  int reports = 0;
  options.progress = [&](const fusionscope::interchange::ImportProgress& p) {
    ++reports;
    EXPECT_EQ(p.phase, fusionscope::interchange::ImportProgress::Phase::kWriting);
    cancel = true;  // after the first batch
  };
  EXPECT_THROW(write_torch_trace(store, trace, {}, options),
               fusionscope::interchange::ImportCancelled);
  EXPECT_GE(reports, 1);
  ASSERT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.load_run(store.runs()[0].id).kernels.size(), 15u);
}

}  // namespace
