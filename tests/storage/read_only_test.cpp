// A read-only store never writes: not the file, not a journal beside it.
#include <algorithm>

#include <gtest/gtest.h>

#include "file_guards.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "store_fixtures.h"
#include "test_paths.h"

namespace fusionscope::storage {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(StoreReadOnly, ReadingNeverModifiesTheFile) {
  const auto dir = fusionscope::testing::scratch_dir();
  const auto path = dir / "s.fsdb";
  int64_t run = 0;
  {
    SessionStore store = SessionStore::create(path, testing::sample_session());
    run = testing::add_run(store, testing::sample_run(), testing::sample_records(store));
    store.set_property("k", "v");
  }
  ASSERT_EQ(files_in(dir), std::vector<std::string>{"s.fsdb"});  // a clean close leaves one file
  const testing::FileSnapshot before = testing::snapshot(path);
  {
    SessionStore store = SessionStore::open(path);
    EXPECT_EQ(store.session().name, testing::sample_session().name);
    EXPECT_EQ(store.runs().size(), 1u);
    EXPECT_EQ(store.load_run(run).kernels.size(), 2u);
    EXPECT_EQ(store.properties().size(), 1u);
    EXPECT_FALSE(store.strings().empty());
    EXPECT_EQ(files_in(dir), std::vector<std::string>{"s.fsdb"});  // nothing beside it while open
    // Every write is refused.
    EXPECT_THROW(RunWriter(store, RunInfo{}), StoreError);
    EXPECT_THROW(store.update_session(SessionInfo{}), StoreError);
    EXPECT_THROW(store.rename_run(run, "x"), StoreError);
    EXPECT_THROW(store.delete_run(run), StoreError);
    EXPECT_THROW(store.set_property("a", "b"), StoreError);
    EXPECT_THROW(store.intern("brand new"), StoreError);
    RunInfo r = *store.run(run);
    EXPECT_THROW(store.update_run(r), StoreError);
  }
  EXPECT_TRUE(testing::snapshot(path) == before);
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"s.fsdb"});
}

TEST(StoreReadOnly, AReaderSeesWhatAnOpenWriterCommitted) {
  const auto dir = fusionscope::testing::scratch_dir();
  const auto path = dir / "live.fsdb";
  SessionStore writer = SessionStore::create(path, SessionInfo{});
  const testing::SampleRecords records = testing::sample_records(writer);
  RunWriter run(writer, RunInfo{});
  run.add_kernels(records.kernels);
  ASSERT_TRUE(fs::exists(dir / "live.fsdb-wal"));
  const auto main_before = testing::snapshot(path);
  {
    SessionStore reader = SessionStore::open(path);
    const RunData partial = reader.load_run(run.id());
    EXPECT_EQ(partial.kernels, records.kernels);
    EXPECT_EQ(partial.info.state, RunState::kWriting);  // never taken for complete
    EXPECT_EQ(partial.info.integrity, Integrity::kUnprotected);
    EXPECT_EQ(reader.strings(), writer.strings());
    // Later batches are seen by a later load, and the commit too.
    run.add_api_calls(records.api_calls);
    EXPECT_EQ(reader.load_run(run.id()).api_calls.size(), 1u);
    run.commit();
    const RunData whole = reader.load_run(run.id());
    EXPECT_EQ(whole.info.state, RunState::kComplete);
    EXPECT_EQ(whole.info.integrity, Integrity::kVerified);
  }
  EXPECT_TRUE(testing::snapshot(path).bytes == main_before.bytes);
}

TEST(StoreReadOnly, AReaderOpenedBeforeTheWriterWritesSeesLaterBatches) {
  const auto dir = fusionscope::testing::scratch_dir();
  const auto path = dir / "live.fsdb";
  { SessionStore::create(path, SessionInfo{}); }
  SessionStore writer = SessionStore::open(path, OpenMode::kReadWrite);  // nothing written yet
  SessionStore reader = SessionStore::open(path);
  EXPECT_TRUE(reader.runs().empty());
  RunWriter run(writer, RunInfo{});
  EXPECT_TRUE(reader.load_run(run.id()).kernels.empty());
  KernelRecord k;
  k.name = writer.intern("late kernel");
  run.add_kernels(std::span(&k, 1));
  const RunData d = reader.load_run(run.id());
  ASSERT_EQ(d.kernels.size(), 1u);
  EXPECT_EQ(d.str(d.kernels[0].name), "late kernel");
  EXPECT_EQ(reader.strings(), writer.strings());
}

TEST(StoreReadOnly, UnrecoveredWriteAheadLogIsReportedNotIgnored) {
  // A crashed writer without its shared-memory index: only a writer can recover the WAL, and
  // reading the main file alone would silently drop committed records.
  const auto dir = fusionscope::testing::scratch_dir();
  const auto path = dir / "crashed.fsdb";
  { SessionStore::create(path, SessionInfo{}); }
  testing::write_bytes(dir / "crashed.fsdb-wal", std::string(4096, 'x'));
  try {
    SessionStore::open(path);
    FAIL() << "opened with an unrecovered WAL";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("open it read-write"), std::string::npos) << e.what();
  }
}

TEST(StoreReadOnly, UnfinishedRollbackJournalIsReportedNotIgnored) {
  const auto dir = fusionscope::testing::scratch_dir();
  const auto path = dir / "cut.fsdb";
  { SessionStore::create(path, SessionInfo{}); }
  testing::write_bytes(dir / "cut.fsdb-journal", std::string(4096, 'x'));
  try {
    SessionStore::open(path);
    FAIL() << "opened with an unfinished journal";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("roll it back"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusionscope::storage
