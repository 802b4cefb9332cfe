// Deleting runs, properties, and Save As.
#include <algorithm>

#include <gtest/gtest.h>

#include "file_guards.h"
#include "fusionscope/storage/session_store.h"
#include "store_fixtures.h"
#include "test_paths.h"

namespace fusionscope::storage {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTables[] = {"kernels",        "api_calls", "ranges",   "memops",
                                   "kernel_metrics", "samples",   "processes"};

int64_t rows_of_run(const fs::path& path, const char* table, int64_t run) {
  return testing::raw_int(path, std::string("SELECT count(*) FROM ") + table +
                                    " WHERE run_id = " + std::to_string(run));
}

TEST(StoreLifecycle, DeleteRunRemovesEveryRecordOfItOnly) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  int64_t a = 0, b = 0;
  testing::SampleRecords records;
  {
    SessionStore store = SessionStore::create(path, SessionInfo{});
    records = testing::sample_records(store);
    a = testing::add_run(store, testing::sample_run("a"), records);
    b = testing::add_run(store, testing::sample_run("b"), records);
    store.delete_run(a);
    EXPECT_FALSE(store.run(a).has_value());
    EXPECT_THROW(store.load_run(a), StoreError);
    EXPECT_THROW(store.delete_run(a), StoreError);
    const RunData kept = store.load_run(b);
    EXPECT_EQ(kept.kernels, records.kernels);
    EXPECT_EQ(kept.samples, records.samples);
  }
  for (const char* table : kTables) {
    EXPECT_EQ(rows_of_run(path, table, a), 0) << table;
    EXPECT_EQ(rows_of_run(path, table, b),
              1 + (std::string(table) == "kernels") + (std::string(table) == "ranges"))
        << table;
  }
}

TEST(StoreLifecycle, SchemaCascadesDeletesForOtherTools) {
  // A tool deleting a run with plain SQL (foreign keys on) takes its records along.
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  int64_t a = 0;
  {
    SessionStore store = SessionStore::create(path, SessionInfo{});
    a = testing::add_run(store, RunInfo{}, testing::sample_records(store));
  }
  ASSERT_EQ(rows_of_run(path, "kernels", a), 2);
  testing::raw_exec(path,
                    "PRAGMA foreign_keys = ON; DELETE FROM runs WHERE id = " + std::to_string(a));
  for (const char* table : kTables) EXPECT_EQ(rows_of_run(path, table, a), 0) << table;
}

TEST(StoreLifecycle, PropertiesRoundTrip) {
  const auto path = fusionscope::testing::scratch_dir() / "s.fsdb";
  {
    SessionStore store = SessionStore::create(path, SessionInfo{});
    EXPECT_TRUE(store.properties().empty());
    store.set_property("ui.selected_run", "2");
    store.set_property("capture.buffer_mb", "8");
    store.set_property("ui.selected_run", "3");  // replaces
    store.set_property("gone", "x");
    store.erase_property("gone");
    EXPECT_EQ(store.property("ui.selected_run"), "3");
    EXPECT_FALSE(store.property("gone").has_value());
  }
  SessionStore store = SessionStore::open(path);
  const std::vector<std::pair<std::string, std::string>> expected = {{"capture.buffer_mb", "8"},
                                                                     {"ui.selected_run", "3"}};
  EXPECT_EQ(store.properties(), expected);
  EXPECT_THROW(store.set_property("k", "v"), StoreError);
}

TEST(StoreLifecycle, SaveAsMakesAConsistentCopyIncludingEveryString) {
  const auto dir = fusionscope::testing::scratch_dir();
  const auto path = dir / "s.fsdb";
  const auto copy = dir / "copy.fsdb";
  SessionStore store = SessionStore::create(path, testing::sample_session());
  const testing::SampleRecords records = testing::sample_records(store);
  const int64_t run = testing::add_run(store, testing::sample_run(), records);
  store.set_property("k", "v");
  const StringId late = store.intern("interned after the last batch");
  store.save_as(copy);

  SessionStore saved = SessionStore::open(copy);
  EXPECT_EQ(saved.schema_version(), SessionStore::current_schema_version());
  EXPECT_EQ(saved.session().gpu_name, testing::sample_session().gpu_name);
  EXPECT_EQ(saved.load_run(run).kernels, records.kernels);
  EXPECT_EQ(saved.find_string("interned after the last batch"), late);
  EXPECT_EQ(saved.property("k"), "v");
  EXPECT_FALSE(fs::exists(dir / "copy.fsdb-wal"));

  // The original keeps working, and a second Save As replaces the copy.
  store.rename_run(run, "renamed");
  store.save_as(copy);
  EXPECT_EQ(SessionStore::open(copy).run(run)->name, "renamed");
  EXPECT_THROW(store.save_as(path), StoreError);
  EXPECT_THROW(store.save_as(dir / "missing-folder" / "x.fsdb"), StoreError);
  EXPECT_THROW(store.save_as(dir), StoreError);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"copy.fsdb", "s.fsdb", "s.fsdb-shm", "s.fsdb-wal"}));
}

TEST(StoreLifecycle, SaveAsFromAReadOnlyStore) {
  const auto dir = fusionscope::testing::scratch_dir();
  const auto path = dir / "s.fsdb";
  int64_t run = 0;
  {
    SessionStore store = SessionStore::create(path, SessionInfo{});
    run = testing::add_run(store, RunInfo{}, testing::sample_records(store));
  }
  SessionStore::open(path).save_as(dir / "copy.fsdb");
  EXPECT_EQ(SessionStore::open(dir / "copy.fsdb").load_run(run).kernels.size(), 2u);
}

}  // namespace
}  // namespace fusionscope::storage
