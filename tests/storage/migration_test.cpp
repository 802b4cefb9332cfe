// Files of schema version 1 open read-only as they are and are migrated when opened read-write.
#include <gtest/gtest.h>

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
  for (const KernelRecord& k : old_run.kernels) EXPECT_EQ(k.pid, 0u);  // unknown
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

}  // namespace
}  // namespace fusionscope::storage
