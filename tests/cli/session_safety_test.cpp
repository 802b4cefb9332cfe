// Commands never trust, damage or half-fill a session: hostile names print as text, damaged
// runs are named and not summed, nothing is written into a damaged or foreign file, a new
// session appears whole or not at all, and an import killed at any moment leaves the session's
// runs whole and its own run absent or complete, never half there.
#include <sqlite3.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "cli_process.h"
#include "fusionscope/storage/run_writer.h"
#include "fusionscope/storage/session_store.h"
#include "test_paths.h"

namespace fusionscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace fusionscope::storage;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void raw_exec(const fs::path& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

int64_t raw_int(const fs::path& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_stmt* st = nullptr;
  int64_t value = -1;
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
      sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    value = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return value;
}

int64_t add_run(SessionStore& store, const std::string& name, const std::string& kernel, int n) {
  RunInfo info;
  info.name = name;
  info.status = RunStatus::kOk;
  RunWriter run(store, info);
  std::vector<KernelRecord> ks(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    ks[static_cast<size_t>(i)].start_ns = i * 100;
    ks[static_cast<size_t>(i)].end_ns = i * 100 + 50;
    ks[static_cast<size_t>(i)].correlation_id = static_cast<uint32_t>(i + 1);
    ks[static_cast<size_t>(i)].name = store.intern(kernel);
  }
  run.add_kernels(ks);
  run.commit();
  return run.id();
}

TEST(CliSessions, ReportShowsHostileNamesAsText) {
  const fs::path path = fusionscope::testing::scratch_dir() / "s.fsdb";
  {
    SessionInfo info;
    info.name = "\x1b]0;owned\x07";
    SessionStore store = SessionStore::create(path, info);
    add_run(store, "run \x1b[2J\x1b[31mred",
            "kernel\xc2\x9b"
            "31m\x1b[1A",
            3);
  }
  const CliResult r = run_cli({"report", path.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "an escape sequence reached the terminal";
  EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << "a C1 control reached the terminal";
  EXPECT_EQ(r.out.find('\x07'), std::string::npos);
  EXPECT_NE(r.out.find("run \\x1B[2J\\x1B[31mred"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\\x1B]0;owned\\x07"), std::string::npos) << r.out;
}

TEST(CliSessions, ReportNamesDamagedRunsWithoutFiguresAndFails) {
  const fs::path path = fusionscope::testing::scratch_dir() / "s.fsdb";
  {
    SessionStore store = SessionStore::create(path, SessionInfo{});
    add_run(store, "intact", "k", 5);
    add_run(store, "changed", "k", 5);
  }
  raw_exec(path, "UPDATE kernels SET end_ns = end_ns * 10 WHERE run_id = 2");
  const CliResult r = run_cli({"report", path.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("DAMAGED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("damaged: the records' contents differ"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#1 intact  [ok]"), std::string::npos) << r.out;  // the rest is shown
  EXPECT_NE(r.err.find("1 run is damaged"), std::string::npos) << r.err;
  // Export refuses the damaged run, and writes the intact one.
  const CliResult e = run_cli({"export", path.string(), "--run", "2", "--csv", "-"});
  EXPECT_EQ(e.code, 1);
  EXPECT_NE(e.err.find("run 2 is damaged"), std::string::npos) << e.err;
  EXPECT_EQ(run_cli({"export", path.string(), "--run", "1", "--csv", "-"}).code, 0);
}

TEST(CliSessions, NothingIsWrittenIntoADamagedOrForeignFile) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path trace = dir / "t.json";
  write_trace(trace, 10, "gemm");
  // Our identity, none of our tables: refused before a byte changes (not even the header).
  const fs::path hollow = dir / "hollow.fsdb";
  {
    sqlite3* db = nullptr;
    sqlite3_open(hollow.c_str(), &db);
    sqlite3_exec(db,
                 "PRAGMA application_id = 1179862082; PRAGMA user_version = 3; "
                 "CREATE TABLE other (x)",
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  const std::string hollow_bytes = read(hollow);
  const CliResult a = run_cli({"import", trace.string(), "--out", hollow.string(), "--append"});
  EXPECT_EQ(a.code, 1);
  EXPECT_NE(a.err.find("tables are missing"), std::string::npos) << a.err;
  EXPECT_TRUE(read(hollow) == hollow_bytes) << "the file changed";
  // A damaged session: refused with the reason, unchanged.
  const fs::path damaged = dir / "damaged.fsdb";
  {
    SessionStore store = SessionStore::create(damaged, SessionInfo{});
    add_run(store, "r", "k", 2000);
  }
  {
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(16384 + 8);  // the cell pointers of page 2, a table's root
    const std::string junk(64, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const std::string damaged_bytes = read(damaged);
  const CliResult b = run_cli({"import", trace.string(), "--out", damaged.string(), "--append"});
  EXPECT_EQ(b.code, 1);
  EXPECT_NE(b.err.find("is damaged, so nothing is written"), std::string::npos) << b.err;
  EXPECT_TRUE(read(damaged) == damaged_bytes) << "the file changed";
}

TEST(CliSessions, ANewSessionThatCannotBeWrittenLeavesNothing) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path trace = dir / "t.json";
  write_trace(trace, 20000, "a_kernel_whose_long_name_fills_the_session_quickly");
  CliOptions o;
  o.file_size_limit = 96 * 1024;
  const CliResult r = run_cli({"import", trace.string(), "--out", (dir / "new.fsdb").string()}, o);
  EXPECT_EQ(r.signal, 0) << "killed by the file size limit";
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("file size limit"), std::string::npos) << r.err;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"t.json"});
}

// `import --append` killed after a range of delays: the old run is whole; the new one is absent
// (nothing of it left in the file once the session is opened again) or complete with every
// kernel, never listed half written. The earliest kills land before the run is committed.
TEST(CliSessions, AnImportKilledAtAnyMomentLeavesWholeRuns) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path trace = dir / "big.json";
  constexpr int kKernels = 60000;
  write_trace(trace, kKernels, "gemm");
  const fs::path base = dir / "base.fsdb";
  ASSERT_EQ(run_cli({"import", trace.string(), "--out", base.string()}).code, 0);
  // How long an uninterrupted import takes bounds the delays tried.
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path timing = dir / "timing.fsdb";
  fs::copy_file(base, timing);
  ASSERT_EQ(run_cli({"import", trace.string(), "--out", timing.string(), "--append"}).code, 0);
  const double full = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  int absent = 0, partial = 0, complete = 0;
  constexpr int kMoments = 24;
  for (int i = 0; i < kMoments; ++i) {
    const fs::path s = dir / ("s" + std::to_string(i) + ".fsdb");
    fs::copy_file(base, s);
    CliOptions o;
    o.kill_after_s = full * (i + 0.5) / kMoments;
    run_cli({"import", trace.string(), "--out", s.string(), "--append"}, o);
    SCOPED_TRACE("killed after " + std::to_string(o.kill_after_s) + " s");
    { SessionStore::open(s, OpenMode::kReadWrite); }  // recovers: removes a run left unfinished
    SessionStore store = SessionStore::open(s);
    const std::vector<RunInfo> runs = store.runs();
    ASSERT_GE(runs.size(), 1u);
    const RunData old = store.load_run(runs[0].id);
    EXPECT_EQ(old.kernels.size(), size_t{kKernels});
    EXPECT_EQ(old.info.integrity, Integrity::kVerified);
    if (runs.size() == 1) {
      ++absent;
      EXPECT_EQ(raw_int(s, "SELECT count(*) FROM kernels"), kKernels);
      EXPECT_EQ(raw_int(s, "SELECT count(*) FROM runs"), 1);
      continue;
    }
    ASSERT_EQ(runs.size(), 2u);
    const RunData added = store.load_run(runs[1].id);
    if (added.info.state == RunState::kComplete) {
      ++complete;
      EXPECT_EQ(added.kernels.size(), size_t{kKernels});
      EXPECT_EQ(added.info.integrity, Integrity::kVerified);
    } else {
      ++partial;
      ADD_FAILURE() << "a killed import left a run in state " << static_cast<int>(added.info.state)
                    << " with " << added.kernels.size() << " kernels";
    }
  }
  EXPECT_GT(absent, 0) << "no kill landed before the run was committed";
  std::printf(
      "import --append of %d kernels killed at %d moments over %.2f s: new run absent %d, "
      "partial %d, complete %d; the old run whole every time\n",
      kKernels, kMoments, full, absent, partial, complete);
}

// The measure, through the commands: single bytes of a session changed one at a time;
// `report` and `export --csv` either fail (or warn), or print exactly what they print for the
// intact file. $FUSIONSCOPE_BYTE_FLIPS sets how many (default 40).
TEST(CliSessions, ByteFlipsAreDetectedOrHarmlessInEveryCommand) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path trace = dir / "t.json";
  write_trace(trace, 400, "gemm");
  const fs::path path = dir / "s.fsdb";
  ASSERT_EQ(run_cli({"import", trace.string(), "--out", path.string()}).code, 0);
  ASSERT_EQ(
      run_cli({"import", trace.string(), "--out", path.string(), "--append", "--name", "second"})
          .code,
      0);
  { SessionStore::open(path, OpenMode::kReadWrite).close(); }  // one file, no log beside it
  auto commands = [&] {
    return std::vector<CliResult>{run_cli({"report", path.string()}),
                                  run_cli({"export", path.string(), "--run", "1", "--csv", "-"}),
                                  run_cli({"export", path.string(), "--run", "2", "--csv", "-"})};
  };
  const std::vector<CliResult> intact = commands();
  for (const CliResult& r : intact) ASSERT_EQ(r.code, 0) << r.err;

  const char* env = std::getenv("FUSIONSCOPE_BYTE_FLIPS");
  const int flips = env ? std::atoi(env) : 40;
  const auto size = static_cast<size_t>(fs::file_size(path));
  std::mt19937 rng(245);
  int detected = 0, harmless = 0, believed = 0;
  for (int i = 0; i < flips; ++i) {
    const size_t at = rng() % size;
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    const char original = static_cast<char>(f.get());
    const char changed = static_cast<char>(original ^ static_cast<char>(1 + rng() % 255));
    f.seekp(static_cast<std::streamoff>(at));
    f.put(changed);
    f.close();
    const std::vector<CliResult> seen = commands();
    bool warned = false, same = true;
    for (size_t c = 0; c < seen.size(); ++c) {
      EXPECT_EQ(seen[c].signal, 0) << "byte " << at;
      warned = warned || seen[c].code != 0 || !seen[c].err.empty();
      same = same && seen[c].out == intact[c].out;
    }
    if (warned)
      ++detected;
    else if (same)
      ++harmless;
    else
      ++believed;
    EXPECT_TRUE(warned || same) << "byte " << at << " changed the output without a word";
    std::fstream g(path, std::ios::in | std::ios::out | std::ios::binary);
    g.seekp(static_cast<std::streamoff>(at));
    g.put(original);
  }
  std::printf(
      "%d single-byte changes of a %zu-byte session, through report and export: %d "
      "detected, %d harmless, %d believed\n",
      flips, size, detected, harmless, believed);
}

TEST(CliSessions, ConcurrentImportsBothLand) {
  const fs::path dir = fusionscope::testing::scratch_dir();
  const fs::path trace = dir / "t.json";
  write_trace(trace, 5000, "gemm");
  const fs::path s = dir / "s.fsdb";
  { SessionStore::create(s, SessionInfo{}); }
  CliResult a, b;
  std::thread ta([&] {
    a = run_cli({"import", trace.string(), "--out", s.string(), "--append", "--name", "first"});
  });
  std::thread tb([&] {
    b = run_cli({"import", trace.string(), "--out", s.string(), "--append", "--name", "second"});
  });
  ta.join();
  tb.join();
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(b.code, 0) << b.err;
  SessionStore store = SessionStore::open(s);
  ASSERT_EQ(store.runs().size(), 2u);
  for (const RunInfo& r : store.runs()) {
    const RunData d = store.load_run(r.id);
    EXPECT_EQ(d.kernels.size(), 5000u);
    EXPECT_EQ(d.info.integrity, Integrity::kVerified);
  }
}

}  // namespace
}  // namespace fusionscope::testing
