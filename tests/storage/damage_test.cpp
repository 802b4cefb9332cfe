// Damage is detected, never believed: changed records, descriptions, strings and properties are
// caught by their digests, broken structure by quick_check, and a damaged file is not written.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "file_guards.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "store_fixtures.h"
#include "test_paths.h"

namespace fusionscope::storage {
namespace {

namespace fs = std::filesystem;

fs::path two_run_session(const fs::path& dir, int64_t* first = nullptr) {
  const fs::path path = dir / "s.fsdb";
  SessionStore store = SessionStore::create(path, testing::sample_session());
  const testing::SampleRecords records = testing::sample_records(store);
  const int64_t a = testing::add_run(store, testing::sample_run("a"), records);
  testing::add_run(store, testing::sample_run("b"), records);
  store.set_property("lab.sweep.1", R"({"size":"hidden"})");
  if (first) *first = a;
  return path;
}

std::string load_error(const fs::path& path, int64_t run) {
  try {
    SessionStore::open(path).load_run(run);
  } catch (const DamagedRunError& e) {
    return e.what();
  }
  return "";
}

TEST(StoreDamage, AChangedRecordIsCaughtAndTheOtherRunStillLoads) {
  int64_t a = 0;
  const fs::path path = two_run_session(fusionscope::testing::scratch_dir(), &a);
  testing::raw_exec(path, "UPDATE kernels SET end_ns = end_ns + 1 WHERE run_id = " +
                              std::to_string(a) + " AND correlation_id = 42");
  const std::string why = load_error(path, a);
  EXPECT_NE(why.find("run " + std::to_string(a) + " is damaged"), std::string::npos) << why;
  EXPECT_NE(why.find("differ from what was written"), std::string::npos) << why;
  SessionStore store = SessionStore::open(path);
  const RunData marked = store.load_run(a, DamagePolicy::kMark);
  EXPECT_EQ(marked.info.integrity, Integrity::kDamaged);
  EXPECT_EQ(store.load_run(a + 1).info.integrity, Integrity::kVerified);
}

TEST(StoreDamage, MissingAndExtraRecordsAreCounted) {
  int64_t a = 0;
  const fs::path path = two_run_session(fusionscope::testing::scratch_dir(), &a);
  testing::raw_exec(
      path, "DELETE FROM kernels WHERE run_id = " + std::to_string(a) + " AND correlation_id = 43");
  EXPECT_NE(load_error(path, a).find("1 kernels where 2 were written"), std::string::npos)
      << load_error(path, a);
  // A record moved from one run to the other damages both.
  testing::raw_exec(path, "UPDATE samples SET run_id = " + std::to_string(a) +
                              " WHERE run_id = " + std::to_string(a + 1));
  EXPECT_NE(load_error(path, a + 1).find("0 samples where 1 were written"), std::string::npos);
}

TEST(StoreDamage, AChangedStringDamagesTheRunsThatNameIt) {
  int64_t a = 0;
  const fs::path path = two_run_session(fusionscope::testing::scratch_dir(), &a);
  testing::raw_exec(path,
                    "UPDATE strings SET text = 'sm90_xmma_gemm_bf16bf16_bf16f33' WHERE "
                    "text = 'sm90_xmma_gemm_bf16bf16_bf16f32'");
  EXPECT_FALSE(load_error(path, a).empty());
  EXPECT_FALSE(load_error(path, a + 1).empty());
}

TEST(StoreDamage, AChangedDescriptionIsMarkedAndNotRewritten) {
  int64_t a = 0;
  const fs::path path = two_run_session(fusionscope::testing::scratch_dir(), &a);
  testing::raw_exec(path, "UPDATE runs SET wall_ns = 1 WHERE id = " + std::to_string(a));
  {
    SessionStore store = SessionStore::open(path);
    const RunInfo info = *store.run(a);
    EXPECT_EQ(info.integrity, Integrity::kDamaged);
    EXPECT_NE(info.damage.find("description"), std::string::npos);
    EXPECT_EQ(store.run(a + 1)->integrity, Integrity::kUnchecked);
  }
  SessionStore store = SessionStore::open(path, OpenMode::kReadWrite);
  EXPECT_THROW(store.rename_run(a, "laundered"), DamagedRunError);
  EXPECT_EQ(store.run(a)->integrity, Integrity::kDamaged);
  store.rename_run(a + 1, "fine");  // the intact run can still be edited
  store.delete_run(a);              // and the damaged one removed
  EXPECT_EQ(store.runs().size(), 1u);
}

TEST(StoreDamage, AChangedPropertyOrSessionRowIsCaughtAndRefusesWrites) {
  const fs::path path = two_run_session(fusionscope::testing::scratch_dir());
  EXPECT_EQ(SessionStore::open(path).session_damage(), "");
  testing::raw_exec(path, "UPDATE properties SET value = '{}'");
  EXPECT_NE(SessionStore::open(path).session_damage(), "");
  try {
    SessionStore::open(path, OpenMode::kReadWrite);
    FAIL() << "a damaged session was opened for writing";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("is damaged, so nothing is written"), std::string::npos)
        << e.what();
  }
}

TEST(StoreDamage, BrokenStructureFailsQuickCheckAndIsNotWritten) {
  const fs::path path = two_run_session(fusionscope::testing::scratch_dir());
  // Scribble over the middle of the second page (a b-tree page of the schema's first table).
  {
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    const std::string junk(64, '\x5a');
    ASSERT_EQ(::pwrite(fd, junk.data(), junk.size(), 16384 + 8), 64);
    ::close(fd);
  }
  const testing::FileSnapshot before = testing::snapshot(path);
  bool refused = false;
  try {
    SessionStore::open(path, OpenMode::kReadWrite);
  } catch (const StoreError& e) {
    refused = true;
  }
  EXPECT_TRUE(refused);
  EXPECT_TRUE(testing::snapshot(path).bytes == before.bytes);  // not a byte written
  bool seen = false;
  try {
    SessionStore store = SessionStore::open(path);
    seen = !store.quick_check().empty();
  } catch (const StoreError&) {
    seen = true;
  }
  EXPECT_TRUE(seen);
}

// A table's definition changed in the file (one letter of "INTEGER PRIMARY KEY", still valid SQL,
// but the id is then no longer the row's id and every string reads as NULL's) or one of its
// indexes gone: quick_check names it, and nothing is written into the file.
TEST(StoreDamage, AChangedDefinitionIsCaughtAndNotWritten) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path path = two_run_session(dir);
  EXPECT_TRUE(SessionStore::open(path).quick_check().empty());
  fs::copy_file(path, dir / "no_index.fsdb");
  testing::raw_exec(path,
                    "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(sql, "
                    "'INTEGER PRIMARY KEY', 'INTEGER PRIMARI KEY') WHERE name = 'strings'; "
                    "PRAGMA writable_schema = OFF");
  testing::raw_exec(dir / "no_index.fsdb", "DROP INDEX kernels_by_run_start");
  const struct {
    fs::path file;
    const char* found;
  } cases[] = {{path, "the definition of 'strings' differs from fusionscope's"},
               {dir / "no_index.fsdb", "the definition of 'kernels_by_run_start' is missing"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file.filename().string());
    const std::vector<std::string> problems = SessionStore::open(c.file).quick_check();
    EXPECT_NE(std::find(problems.begin(), problems.end(), c.found), problems.end())
        << (problems.empty() ? "nothing found" : problems[0]);
    const testing::FileSnapshot before = testing::snapshot(c.file);
    try {
      SessionStore::open(c.file, OpenMode::kReadWrite);
      ADD_FAILURE() << "opened for writing";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("is damaged, so nothing is written"), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(testing::snapshot(c.file).bytes == before.bytes);  // not a byte written
  }
}

}  // namespace
}  // namespace fusionscope::storage
