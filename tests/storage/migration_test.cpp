// Files of older schema versions open read-only as they are and are migrated when opened
// read-write: version 1 from a frozen copy of its layout, version 3 from a file that version wrote.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "file_guards.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"
#include "v1_fixture.h"

namespace fusionscope::storage {
namespace {

namespace fs = std::filesystem;
using testing::V1Fixture;

void expect_v1_contents(const SessionStore& store) {
  EXPECT_EQ(store.session().name, V1Fixture::kSessionName);
  EXPECT_EQ(store.session().gpu_name, V1Fixture::kGpu);
  EXPECT_EQ(store.session().sm_count, 108);
  ASSERT_EQ(store.runs().size(), 1u);
  EXPECT_EQ(store.runs()[0].id, V1Fixture::kRunId);
  EXPECT_EQ(store.runs()[0].name, V1Fixture::kRunName);
  EXPECT_EQ(store.runs()[0].status, RunStatus::kOk);
  const RunData d = store.load_run(V1Fixture::kRunId);
  ASSERT_EQ(d.kernels.size(), size_t{V1Fixture::kKernels});
  EXPECT_EQ(d.kernels[0].start_ns, 1000);  // stored out of order, loaded sorted
  EXPECT_EQ(d.kernels[1].start_ns, 2000);
  EXPECT_EQ(d.str(d.kernels[0].name), V1Fixture::kKernelName);
  EXPECT_EQ(d.kernels[0].grid, (Dim3{16, 1, 1}));
  EXPECT_EQ(d.kernels[0].static_smem, 8192u);
  ASSERT_EQ(d.api_calls.size(), 1u);
  EXPECT_EQ(d.str(d.api_calls[0].name), V1Fixture::kApiName);
  ASSERT_EQ(d.ranges.size(), 1u);
  EXPECT_EQ(d.str(d.ranges[0].name), V1Fixture::kRangeName);
  ASSERT_EQ(d.memops.size(), 1u);
  EXPECT_EQ(d.memops[0].copy_kind, CopyKind::kDtoH);
  ASSERT_EQ(d.kernel_metrics.size(), 1u);
  EXPECT_EQ(d.kernel_metrics[0].value, 1048576.0);
  ASSERT_EQ(d.samples.size(), 1u);
  EXPECT_EQ(d.begin_ns, 800);
  EXPECT_EQ(d.end_ns, 3200);
}

TEST(StoreMigration, V1FileOpensReadOnlyUnchanged) {
  const auto dir = fusionscope::testing::scratch_dir();
  const auto path = dir / "v1.fsdb";
  testing::write_v1_session(path);
  ASSERT_EQ(testing::raw_int(path, "PRAGMA user_version"), 1);
  const testing::FileSnapshot before = testing::snapshot(path);
  {
    SessionStore store = SessionStore::open(path);
    EXPECT_TRUE(store.read_only());
    EXPECT_EQ(store.schema_version(), 1);
    expect_v1_contents(store);
    EXPECT_TRUE(store.properties().empty());  // the in-memory copy has the v2 table, empty
    // Save As writes the current version.
    store.save_as(dir / "upgraded.fsdb");
  }
  EXPECT_TRUE(testing::snapshot(path) == before);
  EXPECT_FALSE(fs::exists(dir / "v1.fsdb-wal"));
  EXPECT_FALSE(fs::exists(dir / "v1.fsdb-shm"));
  EXPECT_EQ(testing::raw_int(dir / "upgraded.fsdb", "PRAGMA user_version"),
            SessionStore::current_schema_version());
  expect_v1_contents(SessionStore::open(dir / "upgraded.fsdb"));
}

TEST(StoreMigration, V1FileIsMigratedWhenOpenedReadWrite) {
  const auto path = fusionscope::testing::scratch_dir() / "v1.fsdb";
  testing::write_v1_session(path);
  int64_t added = 0;
  {
    SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
    EXPECT_EQ(store.schema_version(), SessionStore::current_schema_version());
    expect_v1_contents(store);
    store.set_property("migrated", "yes");
    // New runs and strings continue the v1 tables.
    const StringId name = store.intern("new kernel");
    EXPECT_EQ(name, 6u);
    KernelRecord k;
    k.start_ns = 5000;
    k.end_ns = 5100;
    k.stream = 7;
    k.name = name;
    RunWriter run(store, RunInfo{});
    EXPECT_GT(run.id(), V1Fixture::kRunId);
    run.add_kernels(std::span(&k, 1));
    run.commit();
    added = run.id();
  }
  EXPECT_EQ(testing::raw_int(path, "PRAGMA user_version"), SessionStore::current_schema_version());
  EXPECT_EQ(testing::raw_int(path, "SELECT count(*) FROM properties"), 1);
  SessionStore store = SessionStore::open(path);
  EXPECT_EQ(store.schema_version(), SessionStore::current_schema_version());
  EXPECT_EQ(store.property("migrated"), "yes");
  EXPECT_EQ(store.runs().size(), 2u);
  // The migration gave the old run its digests: it is checked like a new one.
  const RunData old_run = store.load_run(V1Fixture::kRunId);
  EXPECT_EQ(old_run.info.state, RunState::kComplete);
  EXPECT_EQ(old_run.info.integrity, Integrity::kVerified);
  EXPECT_TRUE(old_run.processes.empty());
  for (const KernelRecord& k : old_run.kernels) {
    EXPECT_EQ(k.pid, 0u);  // unknown
    EXPECT_EQ(k.external_id, 0);
    EXPECT_EQ(k.extra, kNoString);
  }
  for (const RangeRecord& r : old_run.ranges) EXPECT_EQ(r.event_index, -1);
  EXPECT_TRUE(old_run.threads.empty());
  EXPECT_TRUE(old_run.extras.empty());
  const RunData d = store.load_run(added);
  ASSERT_EQ(d.kernels.size(), 1u);
  EXPECT_EQ(d.str(d.kernels[0].name), "new kernel");
  EXPECT_EQ(d.info.integrity, Integrity::kVerified);
}

TEST(StoreMigration, ALabRunLeftRunningInAnOlderFileIsInterrupted) {
  const auto path = fusionscope::testing::scratch_dir() / "v1.fsdb";
  testing::write_v1_session(path);
  testing::raw_exec(path, "UPDATE runs SET status = 1");  // the lab died during the run
  {
    SessionStore store = SessionStore::open(path);  // read-only: migrated in memory
    EXPECT_EQ(store.runs().at(0).state, RunState::kInterrupted);
  }
  SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
  EXPECT_EQ(store.runs().at(0).state, RunState::kInterrupted);
  EXPECT_EQ(store.load_run(V1Fixture::kRunId).kernels.size(), size_t{V1Fixture::kKernels});
}

TEST(StoreMigration, FailedMigrationLeavesTheFileAtItsVersion) {
  const auto path = fusionscope::testing::scratch_dir() / "v1.fsdb";
  testing::write_v1_session(path, /*with_properties_table=*/true);
  try {
    SessionStore::open(path, OpenMode::kReadWrite);
    FAIL() << "expected the migration to fail";
  } catch (const StoreError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("from schema version 1 to 2"), std::string::npos) << what;
    EXPECT_NE(what.find("v1.fsdb"), std::string::npos) << what;
  }
  EXPECT_EQ(testing::raw_int(path, "PRAGMA user_version"), 1);
  EXPECT_EQ(testing::raw_int(path, "SELECT count(*) FROM kernels"), V1Fixture::kKernels);
}

TEST(StoreMigration, NewFilesAreAtTheCurrentVersionWithOurApplicationId) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  { SessionStore::create(path, SessionInfo{}); }
  EXPECT_EQ(testing::raw_int(path, "PRAGMA user_version"), SessionStore::current_schema_version());
  EXPECT_EQ(testing::raw_int(path, "PRAGMA application_id"), 0x46534442);
  EXPECT_EQ(testing::raw_int(path, "SELECT count(*) FROM strings WHERE id = 0 AND text = ''"), 1);
}

// tests/storage/data/v3_session.fsdb, as a build of schema version 3 wrote it: two PyTorch traces
// imported, "linear eager" (torch_linear_1024x32x64_eager) and "geglu eager"
// (torch_geglu_64x128x768x3072_eager), with the digests version 3 computed.
struct V3Run {
  const char* name;
  size_t kernels, api_calls, ranges;
};
constexpr V3Run kV3Runs[] = {{"linear eager", 3, 7, 24}, {"geglu eager", 15, 25, 96}};

fs::path copy_of_v3_session(const fs::path& dir) {
  const fs::path path = dir / "v3.fsdb";
  fs::copy_file(
      fusionscope::testing::source_dir() / "tests" / "storage" / "data" / "v3_session.fsdb", path);
  return path;
}

void expect_v3_runs(const SessionStore& store) {
  EXPECT_EQ(store.session().name, "v3_session");
  EXPECT_EQ(store.session().gpu_name, "NVIDIA H100 80GB HBM3");
  const std::vector<RunInfo> runs = store.runs();
  ASSERT_GE(runs.size(), std::size(kV3Runs));
  for (size_t i = 0; i < std::size(kV3Runs); ++i) {
    SCOPED_TRACE(kV3Runs[i].name);
    EXPECT_EQ(runs[i].name, kV3Runs[i].name);
    EXPECT_EQ(runs[i].state, RunState::kComplete);
    const RunData d = store.load_run(runs[i].id);
    // The digests version 3 wrote still hold: the new columns' defaults are outside them.
    EXPECT_EQ(d.info.integrity, Integrity::kVerified);
    EXPECT_EQ(d.kernels.size(), kV3Runs[i].kernels);
    EXPECT_EQ(d.api_calls.size(), kV3Runs[i].api_calls);
    EXPECT_EQ(d.ranges.size(), kV3Runs[i].ranges);
    for (const KernelRecord& k : d.kernels) {
      EXPECT_FALSE(d.str(k.name).empty());
      EXPECT_GT(k.end_ns, k.start_ns);
      EXPECT_EQ(k.external_id, 0);
      EXPECT_EQ(k.extra, kNoString);
    }
    for (const RangeRecord& r : d.ranges) EXPECT_EQ(r.event_index, -1);
    EXPECT_TRUE(d.threads.empty());
    EXPECT_TRUE(d.extras.empty());
  }
}

TEST(StoreMigration, V3FileOpensReadOnlyUnchangedAndVerified) {
  const auto dir = fusionscope::testing::scratch_dir();
  const fs::path path = copy_of_v3_session(dir);
  ASSERT_EQ(testing::raw_int(path, "PRAGMA user_version"), 3);
  const testing::FileSnapshot before = testing::snapshot(path);
  {
    SessionStore store = SessionStore::open(path);
    EXPECT_TRUE(store.read_only());
    EXPECT_EQ(store.schema_version(), 3);
    EXPECT_EQ(store.runs().size(), std::size(kV3Runs));
    expect_v3_runs(store);
    EXPECT_EQ(store.quick_check(), std::vector<std::string>{});
  }
  EXPECT_TRUE(testing::snapshot(path) == before);
}

TEST(StoreMigration, V3FileIsMigratedWhenOpenedReadWriteAndTakesNewRuns) {
  const auto dir = fusionscope::testing::scratch_dir();
  const fs::path path = copy_of_v3_session(dir);
  int64_t added = 0;
  {
    SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
    EXPECT_EQ(store.schema_version(), SessionStore::current_schema_version());
    expect_v3_runs(store);
    // A run with what only version 4 holds: an external id, a thread name, a run extra.
    KernelRecord k;
    k.start_ns = 5000;
    k.end_ns = 5100;
    k.stream = 7;
    k.pid = 11;
    k.name = store.intern("new kernel");
    k.external_id = 42;
    RunWriter run(store, RunInfo{});
    run.add_kernels(std::span(&k, 1));
    run.add_process(11, "python");
    const ThreadRecord thread{11, 3, store.intern("main thread")};
    run.add_threads(std::span(&thread, 1));
    run.set_extra("deviceProperties", "[]");
    run.commit();
    added = run.id();
  }
  EXPECT_EQ(testing::raw_int(path, "PRAGMA user_version"), SessionStore::current_schema_version());
  SessionStore store = SessionStore::open(path);
  // Its tables are now defined as version 4 defines them.
  EXPECT_EQ(store.quick_check(), std::vector<std::string>{});
  ASSERT_EQ(store.runs().size(), std::size(kV3Runs) + 1);
  expect_v3_runs(store);
  const RunData d = store.load_run(added);
  EXPECT_EQ(d.info.integrity, Integrity::kVerified);
  ASSERT_EQ(d.kernels.size(), 1u);
  EXPECT_EQ(d.kernels[0].external_id, 42);
  EXPECT_EQ(d.kernels[0].pid, 11u);
  ASSERT_EQ(d.threads.size(), 1u);
  EXPECT_EQ(d.str(d.threads[0].name), "main thread");
  ASSERT_EQ(d.extras.size(), 1u);
  EXPECT_EQ(d.extras[0].value, "[]");
}

}  // namespace
}  // namespace fusionscope::storage
