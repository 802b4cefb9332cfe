// Files that are not usable sessions give a clear StoreError, never a crash.
#include <fstream>
#include <iterator>
#include <random>

#include <gtest/gtest.h>

#include "file_guards.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "store_fixtures.h"
#include "test_paths.h"

namespace fusionscope::storage {
namespace {

namespace fs = std::filesystem;

// Opening `path` in `mode` fails with a StoreError whose message names the file and says `why`.
void expect_open_error(const fs::path& path, OpenMode mode, const std::string& why) {
  try {
    SessionStore store = SessionStore::open(path, mode);
    store.load_run(1);  // a damaged file may only show when read
    FAIL() << "opening " << path << " succeeded";
  } catch (const StoreError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path.filename().string()), std::string::npos) << what;
    EXPECT_NE(what.find(why), std::string::npos) << "expected '" << why << "' in: " << what;
  }
}

void expect_open_error_both_modes(const fs::path& path, const std::string& why) {
  expect_open_error(path, OpenMode::kReadOnly, why);
  expect_open_error(path, OpenMode::kReadWrite, why);
}

// A session with enough records to span many pages.
fs::path write_session(const fs::path& dir) {
  const fs::path path = dir / "s.fsdb";
  SessionStore store = SessionStore::create(path, testing::sample_session());
  RunWriter run(store, testing::sample_run());
  std::vector<KernelRecord> kernels(20000);
  for (size_t i = 0; i < kernels.size(); ++i) {
    kernels[i].start_ns = static_cast<int64_t>(i) * 100;
    kernels[i].end_ns = kernels[i].start_ns + 50;
    kernels[i].correlation_id = static_cast<uint32_t>(i);
  }
  run.add_kernels(kernels);
  run.commit();
  return path;
}

TEST(StoreBadFiles, MissingFileOrFolder) {
  const auto dir = fusionscope::testing::scratch_dir();
  expect_open_error_both_modes(dir / "nothing.fsdb", "no such file");
  expect_open_error_both_modes(dir, "folder");
  EXPECT_FALSE(fs::exists(dir / "nothing.fsdb"));  // opening never creates
}

TEST(StoreBadFiles, EmptyFile) {
  const auto path = fusionscope::testing::scratch_dir() / "empty.fsdb";
  testing::write_bytes(path, "");
  expect_open_error_both_modes(path, "empty");
}

TEST(StoreBadFiles, RandomBytes) {
  const auto path = fusionscope::testing::scratch_dir() / "random.fsdb";
  std::mt19937 rng(1);
  std::string bytes(65536, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  testing::write_bytes(path, bytes);
  expect_open_error_both_modes(path, "not an SQLite database");
}

TEST(StoreBadFiles, TextFile) {
  const auto path = fusionscope::testing::scratch_dir() / "trace.json";
  testing::write_bytes(path, R"({"traceEvents": [{"ph": "X", "name": "gemm"}]})");
  expect_open_error_both_modes(path, "not an SQLite database");
}

TEST(StoreBadFiles, SqliteFileThatIsNotASession) {
  const auto path = fusionscope::testing::scratch_dir() / "other.db";
  testing::raw_exec(path, "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
  const auto before = testing::snapshot(path);
  expect_open_error_both_modes(path, "not a fusionscope session");
  EXPECT_TRUE(testing::snapshot(path) == before);  // not even the read-write attempt touched it
}

TEST(StoreBadFiles, SqliteFileWithForeignApplicationId) {
  const auto path = fusionscope::testing::scratch_dir() / "other.db";
  testing::raw_exec(
      path, "PRAGMA application_id = 1234; PRAGMA user_version = 1; CREATE TABLE runs (x);");
  expect_open_error_both_modes(path, "application_id is 1234");
}

TEST(StoreBadFiles, NewerSchema) {
  const auto dir = fusionscope::testing::scratch_dir();
  const fs::path path = dir / "future.fsdb";
  { SessionStore::create(path, SessionInfo{}); }
  testing::raw_exec(path, "PRAGMA user_version = 99");
  expect_open_error_both_modes(path, "newer fusionscope (session format version 99");
  EXPECT_EQ(testing::raw_int(path, "PRAGMA user_version"), 99);  // left as it was
}

TEST(StoreBadFiles, InvalidSchemaVersion) {
  const auto path = fusionscope::testing::scratch_dir() / "zero.fsdb";
  { SessionStore::create(path, SessionInfo{}); }
  testing::raw_exec(path, "PRAGMA user_version = 0");
  expect_open_error_both_modes(path, "version is 0");
}

TEST(StoreBadFiles, TruncatedFile) {
  const auto dir = fusionscope::testing::scratch_dir();
  const fs::path path = write_session(dir);
  const uintmax_t size = fs::file_size(path);
  ASSERT_GT(size, 100000u);
  fs::resize_file(path, size / 2);
  expect_open_error_both_modes(path, "truncated");
  fs::resize_file(path, 60);  // less than a database header
  expect_open_error_both_modes(path, "truncated");
}

TEST(StoreBadFiles, DamagedPages) {
  const auto dir = fusionscope::testing::scratch_dir();
  const fs::path path = write_session(dir);
  // Overwrite everything after the first two pages with garbage of the same length.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::mt19937 rng(2);
  for (size_t i = 32768; i < bytes.size(); ++i) bytes[i] = static_cast<char>(rng());
  testing::write_bytes(path, bytes);
  for (OpenMode mode : {OpenMode::kReadOnly, OpenMode::kReadWrite}) {
    try {
      SessionStore store = SessionStore::open(path, mode);
      store.runs();
      store.load_run(1);
      FAIL() << "a damaged file loaded";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("s.fsdb"), std::string::npos) << e.what();
    }
  }
}

TEST(StoreBadFiles, CreateInAReadOnlyFolder) {
  const auto dir = fusionscope::testing::scratch_dir() / "locked";
  fs::create_directories(dir);
  testing::ReadOnlyGuard guard(dir);
  if (!guard.ok()) GTEST_SKIP() << guard.why();
  try {
    SessionStore::create(dir / "s.fsdb", SessionInfo{});
    FAIL() << "created a session in a read-only folder";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("not writable"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "s.fsdb"));
}

TEST(StoreBadFiles, CreateWhereTheFolderIsMissingOrTheFileExists) {
  const auto dir = fusionscope::testing::scratch_dir();
  EXPECT_THROW(SessionStore::create(dir / "no" / "s.fsdb", SessionInfo{}), StoreError);
  testing::write_bytes(dir / "taken.fsdb", "not mine");
  try {
    SessionStore::create(dir / "taken.fsdb", SessionInfo{});
    FAIL();
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
  }
  EXPECT_EQ(testing::snapshot(dir / "taken.fsdb").bytes.size(), 8u);  // left alone
}

TEST(StoreBadFiles, OpenReadWriteAReadOnlyFile) {
  const auto dir = fusionscope::testing::scratch_dir();
  const fs::path path = write_session(dir);
  testing::ReadOnlyGuard guard(path);
  if (!guard.ok()) GTEST_SKIP() << guard.why();
  expect_open_error(path, OpenMode::kReadWrite, "read-only");
  // Reading it is fine.
  SessionStore store = SessionStore::open(path);
  EXPECT_EQ(store.load_run(1).kernels.size(), 20000u);
}

TEST(StoreBadFiles, OpenReadWriteInAReadOnlyFolder) {
  const auto dir = fusionscope::testing::scratch_dir();
  const fs::path path = write_session(dir);
  testing::ReadOnlyGuard guard(dir);
  if (!guard.ok()) GTEST_SKIP() << guard.why();
  expect_open_error(path, OpenMode::kReadWrite, "folder is not writable");
  SessionStore store = SessionStore::open(path);
  EXPECT_EQ(store.runs().size(), 1u);
}

}  // namespace
}  // namespace fusionscope::storage
